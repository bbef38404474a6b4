package informers

import (
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
// the overlay entry retires as soon as the cache holds that write or a newer one, in the
// order the change-feed gate uses (compare).
type assumed struct {
	mu      sync.Mutex
	objects map[string]assumedObject
	// hooks are told the key of every document assumed (OnAssume).
	hooks []func(key string)
}

type assumedObject struct {
	obj     any
	version version
	// before holds the _etags of writes known to precede this one: what each assumed
	// write replaced, and the assumed writes it superseded. Writes made within one
	// second share a _ts and carry no _lsn, so this is how a cache still holding one of
	// them is known to be behind rather than ahead.
	before  map[string]bool
	expires time.Time
}

func newAssumed() *assumed { return &assumed{objects: map[string]assumedObject{}} }

func versionOf(obj any) (version, bool) {
	if v, ok := obj.(interface{ storedVersion() version }); ok {
		return v.storedVersion(), true
	}
	return version{}, false
}

func (a *assumed) add(key string, obj any) {
	v, ok := versionOf(obj)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	before := map[string]bool{}
	if cur, ok := a.objects[key]; ok {
		if !supersedes(v, cur.version) {
			return // an older or the same write never shadows the one assumed
		}
		for etag := range cur.before {
			before[etag] = true
		}
		before[cur.version.etag] = true
	}
	if v.prev != "" {
		before[v.prev] = true
	}
	a.objects[key] = assumedObject{obj: obj, version: v, before: before, expires: time.Now().Add(assumeTTL)}
}

// caughtUp reports whether the cache, holding cached, has the assumed write or a newer
// one. A cached write that cannot be ordered against it and is not known to precede it
// counts as newer: it is another writer's, made after ours in the same second (ours
// would have failed its If-Match otherwise). Retiring early only costs read-your-writes;
// the next write is still etag-guarded.
func (o assumedObject) caughtUp(cached any) bool {
	cv, ok := versionOf(cached)
	if !ok {
		return false
	}
	if o.before[cv.etag] {
		return false
	}
	return compare(cv, o.version) != older
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
	if time.Now().After(cur.expires) || (cached != nil && cur.caughtUp(cached)) {
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
	i.overlay.mu.Lock()
	hooks := i.overlay.hooks
	i.overlay.mu.Unlock()
	for _, h := range hooks {
		h(rid.Key())
	}
}

// OnAssume calls f with the key of every document Assumed from now on, after the
// listers see it. Event handlers hear of such a write only when the change feed brings
// it; whoever keeps state derived from the listers (backend/candidates) needs to hear at
// once, or it would decide from the version before the process's own write.
func (i *Informer[P]) OnAssume(f func(key string)) {
	i.overlay.mu.Lock()
	defer i.overlay.mu.Unlock()
	i.overlay.hooks = append(i.overlay.hooks, f)
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
