package informers

import (
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/internal/api"
)

// assumeTTL bounds how long a written document shadows the cache when the change feed
// never brings it (the document was deleted, or the feed is down and a relist is due).
const assumeTTL = time.Minute

// assumed is a write-through overlay on an informer's cache, in the manner of
// client-go's MutationCache: after a successful write, the returned document is visible
// to this process's listers at once instead of a poll later. The informer's own store is
// untouched, so event handlers still fire when the change feed delivers the write, and
// the overlay entry retires as soon as the cache holds that version or a newer one.
type assumed struct {
	mu      sync.Mutex
	objects map[string]assumedObject
}

type assumedObject struct {
	obj     any
	version int64
	expires time.Time
}

func newAssumed() *assumed { return &assumed{objects: map[string]assumedObject{}} }

func versionOf(obj any) int64 {
	type versioned interface{ GetResourceVersion() string }
	if v, ok := obj.(versioned); ok {
		n, _ := strconv.ParseInt(v.GetResourceVersion(), 10, 64)
		return n
	}
	return 0
}

func (a *assumed) add(key string, obj any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v := versionOf(obj)
	if cur, ok := a.objects[key]; ok && cur.version >= v {
		return
	}
	a.objects[key] = assumedObject{obj: obj, version: v, expires: time.Now().Add(assumeTTL)}
}

// newer returns the assumed object for key if it is newer than cached (which may be
// nil), retiring entries the cache has caught up with.
func (a *assumed) newer(key string, cached any) (any, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	cur, ok := a.objects[key]
	if !ok {
		return nil, false
	}
	if time.Now().After(cur.expires) || (cached != nil && versionOf(cached) >= cur.version) {
		delete(a.objects, key)
		return nil, false
	}
	return cur.obj, true
}

func (a *assumed) keys() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.objects))
	for k := range a.objects {
		out = append(out, k)
	}
	return out
}

// Assume makes a document this process has just written visible to the informer's
// listers before the change feed delivers it. Pass what the store returned.
func (i *Informer[P]) Assume(doc *api.Document[P]) {
	rid, err := doc.ParsedResourceID()
	if err != nil {
		return
	}
	i.overlay.add(rid.Key(), newObject(doc, rid))
}

// overlaid merges the overlay into a set of cached objects: newer assumed versions
// replace cached ones, and, when match is given, assumed objects that match are added
// and replaced ones that no longer match are dropped.
func overlaid(indexer cache.Indexer, a *assumed, cached []any, match func(obj any) bool) []any {
	if a == nil {
		return cached
	}
	byKey := make(map[string]int, len(cached))
	out := make([]any, 0, len(cached))
	for _, obj := range cached {
		key, _ := cache.MetaNamespaceKeyFunc(obj)
		if newer, ok := a.newer(key, obj); ok {
			obj = newer
			if match != nil && !match(obj) {
				continue
			}
		}
		byKey[key] = len(out)
		out = append(out, obj)
	}
	for _, key := range a.keys() {
		if _, seen := byKey[key]; seen {
			continue
		}
		cachedObj, _, _ := indexer.GetByKey(key)
		if obj, ok := a.newer(key, cachedObj); ok && (match == nil || match(obj)) {
			out = append(out, obj)
		}
	}
	return out
}
