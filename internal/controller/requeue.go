package controller

import (
	"sync"
	"time"
)

// delayedAdds holds at most one pending delayed add per key, the way client-go's delaying
// queue merges AddAfter calls, but without going through that queue: its AddAfter counts
// as a retry, and an expected wait must leave the retry metrics (and the hot-loop alert)
// quiet.
//
// One timer per key is what keeps a waiting key from looping more than once: every event
// or resync of the key reconciles it, and each such reconcile asks to be looked at again
// later. Were every request its own timer, each would start a chain of its own that never
// merged with the others.
type delayedAdds struct {
	clock Clock
	add   func(key string)

	mu      sync.Mutex
	pending map[string]*delayedAdd
	stopped bool
}

type delayedAdd struct {
	at    time.Time
	timer Timer
}

func newDelayedAdds(clock Clock, add func(key string)) *delayedAdds {
	return &delayedAdds{clock: clock, add: add, pending: map[string]*delayedAdd{}}
}

// after adds key once wait has passed. A key already waiting keeps its timer unless this
// request is due sooner, which moves it earlier; a later request adds nothing, since the
// reconcile the earlier add causes will say again when it wants the key back.
func (d *delayedAdds) after(key string, wait time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	at := d.clock.Now().Add(wait)
	if p, ok := d.pending[key]; ok {
		if !at.Before(p.at) {
			return
		}
		// If the old timer is already firing, its add is only one more reconcile of a
		// level-triggered key; the check in fire keeps it from dropping the new timer.
		p.timer.Stop()
	}
	p := &delayedAdd{at: at}
	p.timer = d.clock.AfterFunc(wait, func() { d.fire(key, p) })
	d.pending[key] = p
}

func (d *delayedAdds) fire(key string, p *delayedAdd) {
	d.mu.Lock()
	if d.pending[key] == p {
		delete(d.pending, key)
	}
	stopped := d.stopped
	d.mu.Unlock()
	if !stopped {
		d.add(key)
	}
}

// stop cancels every pending add and refuses new ones: the controller is shutting down.
func (d *delayedAdds) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	for key, p := range d.pending {
		p.timer.Stop()
		delete(d.pending, key)
	}
}
