package candidates

import (
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/internal/placement"
)

// WaitingRoom holds the clusters that fit on no MC and wakes each one as soon as an MC
// changes so that it now fits there, in the manner of kube-scheduler's queueing hints:
// a cordon lifted, an MC become Ready, a ceiling raised, capacity freed by a report or a
// dropped reservation, or a reported cluster found cheaper than charged. A waiting
// cluster is thus decided again within one change-feed poll of the change, not after a
// timer; the controller keeps a slow timer only as a safety net.
//
// It is a source of events for a controller trigger (controller.Informer): each event is
// a Wakeup naming the clusters to decide again.
type WaitingRoom struct {
	now func() time.Time

	mu       sync.Mutex
	waiting  map[string]placement.Cluster
	handlers []cache.ResourceEventHandler
	store    cache.Store
}

// Wakeup is the event a WaitingRoom delivers: the keys of the clusters that now fit on
// the MC that changed, which have left the room.
type Wakeup struct {
	Keys []string
}

// NewWaitingRoom wakes clusters on the snapshot's MC changes, judging freshness by now.
func NewWaitingRoom(s *Snapshot, now func() time.Time) *WaitingRoom {
	w := &WaitingRoom{now: now, waiting: map[string]placement.Cluster{}, store: cache.NewStore(func(any) (string, error) { return "", nil })}
	s.Listen(w.changed)
	return w
}

// Wait puts the cluster of key in the room. Call it before reading the snapshot the
// decision is made from: a change after that read then wakes the cluster, and one before
// it is in what the decision sees.
func (w *WaitingRoom) Wait(key string, c placement.Cluster) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waiting[key] = c
}

// Leave takes the cluster of key out of the room: it was placed, or needs no placement.
func (w *WaitingRoom) Leave(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.waiting, key)
}

// Holds reports whether the cluster with key is in the room.
func (w *WaitingRoom) Holds(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.waiting[key]
	return ok
}

// Waiting is how many clusters are in the room.
func (w *WaitingRoom) Waiting() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.waiting)
}

// changed wakes the clusters that fit on the MC parsed again.
func (w *WaitingRoom) changed(_, updated *placement.MC) {
	if updated == nil {
		return
	}
	now := w.now()
	w.mu.Lock()
	var keys []string
	for key, c := range w.waiting {
		if updated.Fits(c, now) {
			keys = append(keys, key)
			delete(w.waiting, key)
		}
	}
	handlers := w.handlers
	w.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	for _, h := range handlers {
		h.OnAdd(Wakeup{Keys: keys}, false)
	}
}

// AddEventHandler makes the room a trigger: h receives each Wakeup as an add.
func (w *WaitingRoom) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.handlers = append(w.handlers, h)
	return nil, nil
}

// GetStore is empty: a resync has nothing to wake.
func (w *WaitingRoom) GetStore() cache.Store { return w.store }

// WakeupKeys is the trigger's KeyFunc: the keys a Wakeup names.
func WakeupKeys(obj any) []string {
	if w, ok := obj.(Wakeup); ok {
		return w.Keys
	}
	return nil
}
