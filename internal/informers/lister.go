package informers

import (
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
)

// Lister reads one type from its informer's cache.
//
// Everything it returns is the cache's own object, shared by every controller: call
// DeepCopy before changing anything. Tests check that controllers do (see
// informertest.Snapshot).
type Lister[P any] struct {
	indexer      cache.Indexer
	resourceType string
	overlay      *assumed
}

// Get returns the cached document for a resource ID (any casing). A miss is the store's
// not-found error, so callers handle cache and store the same way.
func (l *Lister[P]) Get(resourceID string) (*api.Document[P], error) {
	key := KeyOf(resourceID)
	obj, ok, err := l.indexer.GetByKey(key)
	if err != nil {
		return nil, fmt.Errorf("reading %s from cache: %w", resourceID, err)
	}
	if l.overlay != nil {
		var cached any
		if ok {
			cached = obj
		}
		if newer, found := l.overlay.newer(key, cached); found {
			obj, ok = newer, true
		}
	}
	if !ok {
		return nil, fmt.Errorf("%s %s is not in the cache: %w", l.resourceType, resourceID, database.ErrNotFound)
	}
	d, _ := DocumentOf[P](obj)
	return d, nil
}

// List returns every cached document, ordered by key so callers are deterministic.
func (l *Lister[P]) List() []*api.Document[P] {
	return l.sorted(overlaid(l.indexer, l.overlay, l.indexer.List(), "", "", nil))
}

// ByIndex returns the documents an index maps value to (value is lowercased by the
// caller through KeyOf where the index holds resource IDs).
func (l *Lister[P]) ByIndex(index, value string) ([]*api.Document[P], error) {
	objs, err := l.indexer.ByIndex(index, value)
	if err != nil {
		return nil, fmt.Errorf("index %s of %s: %w", index, l.resourceType, err)
	}
	indexFunc := l.indexer.GetIndexers()[index]
	match := func(obj any) bool {
		values, err := indexFunc(obj)
		if err != nil {
			return false
		}
		for _, v := range values {
			if v == value {
				return true
			}
		}
		return false
	}
	return l.sorted(overlaid(l.indexer, l.overlay, objs, index, value, match)), nil
}

func (l *Lister[P]) sorted(objs []any) []*api.Document[P] {
	type keyed struct {
		key string
		doc *api.Document[P]
	}
	items := make([]keyed, 0, len(objs))
	for _, o := range objs {
		if obj, ok := o.(*Object[P]); ok {
			items = append(items, keyed{obj.Name, obj.Doc})
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
	out := make([]*api.Document[P], len(items))
	for i, it := range items {
		out[i] = it.doc
	}
	return out
}

// AddEventHandler registers h without periodic resync. client-go delivers a relist's
// unchanged objects to handlers until its first resync check, so updates whose
// ResourceVersion (_etag) did not change are filtered out here: a quiet relist fires
// nothing.
func (i *Informer[P]) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithResyncPeriod(h, 0)
}

// AddEventHandlerWithResyncPeriod registers h; with a resync period, h also receives
// every cached object again once per period (as updates with an unchanged version).
func (i *Informer[P]) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	if resync == 0 {
		h = changedOnly{h}
	}
	return i.SharedIndexInformer.AddEventHandlerWithResyncPeriod(h, resync)
}

type changedOnly struct{ cache.ResourceEventHandler }

func (c changedOnly) OnUpdate(oldObj, newObj any) {
	o, okOld := oldObj.(metav1.Object)
	n, okNew := newObj.(metav1.Object)
	if okOld && okNew && o.GetResourceVersion() == n.GetResourceVersion() {
		return
	}
	c.ResourceEventHandler.OnUpdate(oldObj, newObj)
}
