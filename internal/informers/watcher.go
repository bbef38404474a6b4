package informers

import (
	"net/http"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// watcher is one informer's watch on the pump. The pump must never block on a slow
// informer (that would stall the feed for every type), so events queue without bound
// here and a goroutine hands them to the reflector.
type watcher struct {
	out   chan watch.Event
	stop  chan struct{}
	ready chan struct{} // closed by start, once the list this watch follows is done

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []queued
	closed  bool
	stopped bool
	started bool
	// versions gates events: for each key, the object the list or an accepted event
	// will leave in the cache, whose version a change must supersede or be dropped, so a
	// replayed feed page is harmless (see supersedes for the ordering). It holds the
	// object, not a copy of its version: the cache holds that object anyway, so the
	// gate costs one map entry per document.
	versions map[string]versioned
}

// versioned is what the gate orders: a cached object that knows its stored version.
type versioned interface{ storedVersion() version }

// versionedObject is a cache object the gate can order.
type versionedObject interface {
	runtime.Object
	versioned
}

// queued is an event waiting for the reflector, with what the gate knew of it.
type queued struct {
	event   watch.Event
	key     string
	version version
	gated   bool // false for the relist request, which is always delivered
}

func newWatcher() *watcher {
	w := &watcher{out: make(chan watch.Event), stop: make(chan struct{}), ready: make(chan struct{}), versions: map[string]versioned{}}
	w.cond = sync.NewCond(&w.mu)
	go w.forward()
	return w
}

func (w *watcher) ResultChan() <-chan watch.Event { return w.out }

func (w *watcher) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.stopped = true
		close(w.stop)
		w.cond.Broadcast()
	}
}

// start lets queued events flow to the reflector. Watch calls it, after List returned:
// only then has the list recorded every version it read, so an event queued before the
// list finished can be checked against what the list put in the cache.
func (w *watcher) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started {
		w.started = true
		close(w.ready)
	}
}

// listed records a version the list returned. The list is applied to the cache before
// any queued event, so a feed event queued for the same key earlier is delivered after
// it: it stays current unless the listed version is known to be newer. When the two
// cannot be ordered (same second, no _lsn on the listed one) the feed event wins; if it
// was in fact the older one, the listed write comes through the feed later with a
// higher _lsn.
func (w *watcher) listed(key string, obj versioned) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if cur, ok := w.versions[key]; !ok || compare(obj.storedVersion(), cur.storedVersion()) == newer {
		w.versions[key] = obj
	}
}

// current is the version the gate holds for key (the zero version if none).
func (w *watcher) current(key string) version {
	if cur, ok := w.versions[key]; ok {
		return cur.storedVersion()
	}
	return version{}
}

// send queues an event if it supersedes what this watcher already delivered or listed.
func (w *watcher) send(typ watch.EventType, obj versionedObject, key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.stopped {
		return false
	}
	v := obj.storedVersion()
	if cur, ok := w.versions[key]; ok && !supersedes(v, cur.storedVersion()) {
		return false
	}
	w.versions[key] = obj
	w.queue = append(w.queue, queued{event: watch.Event{Type: typ, Object: obj}, key: key, version: v, gated: true})
	w.cond.Signal()
	return true
}

// expire asks the reflector to relist, the way an API server says a resourceVersion is
// too old. The relist repairs whatever the feed missed, hard deletes included.
func (w *watcher) expire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.stopped {
		return
	}
	w.queue = append(w.queue, queued{event: watch.Event{Type: watch.Error, Object: &metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired,
		Message: "periodic relist",
	}}})
	w.closed = true
	w.cond.Signal()
}

// next takes the first queued event that is still current: one superseded since it was
// queued (by the list, or by a later event for the same key, which is queued behind
// it) is dropped, so the cache never steps back to it.
func (w *watcher) next() (watch.Event, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		for len(w.queue) == 0 && !w.stopped && !w.closed {
			w.cond.Wait()
		}
		if w.stopped || len(w.queue) == 0 {
			return watch.Event{}, false
		}
		q := w.queue[0]
		w.queue[0] = queued{}
		w.queue = w.queue[1:]
		if q.gated && compare(q.version, w.current(q.key)) != same {
			continue
		}
		return q.event, true
	}
}

func (w *watcher) forward() {
	defer close(w.out)
	select {
	case <-w.ready:
	case <-w.stop:
		return
	}
	for {
		ev, ok := w.next()
		if !ok {
			return
		}
		select {
		case w.out <- ev:
		case <-w.stop:
			return
		}
	}
}
