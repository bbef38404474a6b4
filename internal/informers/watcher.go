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
	out  chan watch.Event
	stop chan struct{}

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []watch.Event
	closed  bool
	stopped bool
	// versions gates events: one not newer than what the list (or an earlier event)
	// delivered for the same key is dropped, so a replayed feed page is harmless.
	versions map[string]int64
}

func newWatcher() *watcher {
	w := &watcher{out: make(chan watch.Event), stop: make(chan struct{}), versions: map[string]int64{}}
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

// listed records the versions the list returned, before any event is delivered.
func (w *watcher) listed(key string, version int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if version > w.versions[key] {
		w.versions[key] = version
	}
}

// send queues an event if it is newer than what this watcher already delivered.
func (w *watcher) send(typ watch.EventType, obj runtime.Object, key string, version int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.stopped {
		return false
	}
	if version <= w.versions[key] {
		return false
	}
	w.versions[key] = version
	w.queue = append(w.queue, watch.Event{Type: typ, Object: obj})
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
	w.queue = append(w.queue, watch.Event{Type: watch.Error, Object: &metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired,
		Message: "periodic relist",
	}})
	w.closed = true
	w.cond.Signal()
}

func (w *watcher) forward() {
	defer close(w.out)
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.stopped && !w.closed {
			w.cond.Wait()
		}
		if w.stopped || len(w.queue) == 0 {
			w.mu.Unlock()
			return
		}
		ev := w.queue[0]
		w.queue[0] = watch.Event{}
		w.queue = w.queue[1:]
		w.mu.Unlock()
		select {
		case w.out <- ev:
		case <-w.stop:
			return
		}
	}
}
