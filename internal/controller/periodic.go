package controller

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// DefaultPeriodicJitter is the share of its interval a periodic key's next pass is put
// off by, at most: enough for keys that start together (all of them, at startup) to
// drift apart within a few passes, little enough that a pass is never much late.
const DefaultPeriodicJitter = 0.1

// Periodic is the shape of a controller that revisits every key on a timer of its own
// (a poll of something no informer watches, a recompute from a remote API): a pass over
// a key that ends without an error is followed by another one an interval later. Events
// start passes in between; the worker keeps one pending requeue per key, so those never
// start a second chain of passes.
type Periodic struct {
	// Interval is the time from one pass over a key to the next.
	Interval time.Duration
	// Jitter puts each next pass off by up to this fraction of Interval, at random.
	Jitter float64
	// random returns a number in [0, 1); nil is math/rand/v2. Tests fix it.
	random func() float64
}

// Next is when a periodic pass wants its key back.
type Next struct {
	idle bool
	in   time.Duration
}

// Again is the usual end of a pass: the key comes back after the interval, jittered.
func Again() Next { return Next{} }

// DueIn brings the key back after exactly d: the pass knows from what it read when the
// key is due (a heartbeat it wrote an interval ago, say) and did nothing now. A d that is
// not positive is Again.
func DueIn(d time.Duration) Next { return Next{in: d} }

// Idle takes the key off the timer: it is gone, or waits for an event (another
// component's write) rather than for time. A requeue already pending still fires once,
// into a pass that finds the same.
func Idle() Next { return Next{idle: true} }

// PassFunc is one pass over a key of a periodic controller.
type PassFunc func(ctx context.Context, key string) (Next, error)

// Reconcile makes pass a reconcile on p's timer. A pass's error is retried with the
// controller's backoff, and the retry's own end sets the next pass.
func (p Periodic) Reconcile(pass PassFunc) (ReconcileFunc, error) {
	if p.Interval <= 0 {
		return nil, errors.New("controller: a periodic controller needs a positive interval")
	}
	if p.Jitter < 0 {
		return nil, errors.New("controller: a periodic controller's jitter cannot be negative")
	}
	random := p.random
	if random == nil {
		random = rand.Float64
	}
	return func(ctx context.Context, key string) (Result, error) {
		next, err := pass(ctx, key)
		switch {
		case err != nil:
			return Result{}, err
		case next.idle:
			return Result{}, nil
		case next.in > 0:
			return Result{RequeueAfter: next.in}, nil
		}
		return Result{RequeueAfter: p.Interval + time.Duration(random()*p.Jitter*float64(p.Interval))}, nil
	}, nil
}
