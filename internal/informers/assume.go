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
	// indexers are the informer's own, and byIndex maps index name, then value, to the
	// keys of the assumed objects the index maps to that value: ByIndex looks at those
	// alone. Looking at every assumed object instead made each ByIndex cost as much as
	// the writes of the last poll or two, thousands in a burst.
	indexers cache.Indexers
	byIndex  map[string]map[string]map[string]bool
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
	// indexed is what each of the informer's indexers maps obj to.
	indexed map[string][]string
}

func newAssumed(indexers cache.Indexers) *assumed {
	return &assumed{objects: map[string]assumedObject{}, indexers: indexers, byIndex: map[string]map[string]map[string]bool{}}
}

// indexValues is what each indexer maps obj to; an indexer that fails maps it to nothing,
// as the informer's own index then holds it under nothing either.
func (a *assumed) indexValues(obj any) map[string][]string {
	out := make(map[string][]string, len(a.indexers))
	for name, f := range a.indexers {
		if values, err := f(obj); err == nil && len(values) > 0 {
			out[name] = values
		}
	}
	return out
}

// setLocked stores o under key in objects and in byIndex, replacing what was there.
func (a *assumed) setLocked(key string, o assumedObject) {
	a.deleteLocked(key)
	a.objects[key] = o
	for name, values := range o.indexed {
		byValue := a.byIndex[name]
		if byValue == nil {
			byValue = map[string]map[string]bool{}
			a.byIndex[name] = byValue
		}
		for _, v := range values {
			if byValue[v] == nil {
				byValue[v] = map[string]bool{}
			}
			byValue[v][key] = true
		}
	}
}

// deleteLocked removes key from objects and from byIndex.
func (a *assumed) deleteLocked(key string) {
	cur, ok := a.objects[key]
	if !ok {
		return
	}
	delete(a.objects, key)
	for name, values := range cur.indexed {
		for _, v := range values {
			delete(a.byIndex[name][v], key)
			if len(a.byIndex[name][v]) == 0 {
				delete(a.byIndex[name], v)
			}
		}
	}
}

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
	indexed := a.indexValues(obj)
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
	a.setLocked(key, assumedObject{obj: obj, version: v, before: before, expires: time.Now().Add(assumeTTL), indexed: indexed})
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
		a.deleteLocked(key)
		return nil, false
	}
	return cur.obj, true
}

// write returns the assumed object of key if it is the write whose _etag is etag.
func (a *assumed) write(key, etag string) (any, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	cur, ok := a.objects[key]
	if !ok || cur.version.etag != etag {
		return nil, false
	}
	return cur.obj, true
}

// keys are the keys of every assumed object, or, given an index, of those the index maps
// value to.
func (a *assumed) keys(index, value string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if index != "" {
		byKey := a.byIndex[index][value]
		out := make([]string, 0, len(byKey))
		for k := range byKey {
			out = append(out, k)
		}
		return out
	}
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

// DecodeStored decodes a document as the store returned it after this process wrote it,
// the way the informer decodes its change feed (lean or full), so that what Assume puts
// in the overlay is what the feed will bring (docwrite.StoredDecoder).
func (i *Informer[P]) DecodeStored(body []byte) (*api.Document[P], error) {
	return decodeFunc[P](i.documents)(body)
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
// replace cached ones, and, when an index is given (cached being what it maps value to,
// and match telling whether an object is mapped to it), the assumed objects it maps value
// to are added and replaced ones that no longer match are dropped. Without an index,
// cached is the whole cache and every assumed object is added.
func overlaid(indexer cache.Indexer, a *assumed, cached []any, index, value string, match func(obj any) bool) []any {
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
	for _, key := range a.keys(index, value) {
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
