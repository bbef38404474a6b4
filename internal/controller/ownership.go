package controller

import "context"

// Ownership says which keys this replica may work, for replicas that split the keys
// between them instead of electing one leader (internal/shard implements it). A key the
// replica does not own is dropped when a worker takes it from the queue: its owner
// works it. When the replica comes to own more keys, every controller enqueues the
// owned keys of its caches again, since the events that queued them went by while
// another replica owned them.
type Ownership interface {
	// Claim reports whether the replica owns key now. While it does, ctx ends when
	// ownership is lost or handed back, and release must be called once the reconcile
	// is over: ownership is handed back only once its claims are released.
	Claim(key string) (ctx context.Context, release func(), ok bool)
	// Owns reports whether the replica owns key now, without claiming it.
	Owns(key string) bool
	// OnAcquire registers f to be called whenever the replica comes to own more keys.
	OnAcquire(f func()) (stop func())
}

// claim is the worker's check before a reconcile: with no Ownership every key is this
// replica's. The returned context ends with ctx or with the ownership.
func (c *Controller) claim(ctx context.Context, key string) (context.Context, func(), bool) {
	if c.opts.Ownership == nil {
		return ctx, func() {}, true
	}
	owned, release, ok := c.opts.Ownership.Claim(key)
	if !ok {
		return nil, nil, false
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(owned, cancel)
	return ctx, func() {
		stop()
		cancel()
		release()
	}, true
}

// resyncOnAcquire enqueues, each time the replica comes to own more keys, the owned keys
// of every watched cache. It returns the unsubscribe.
func (c *Controller) resyncOnAcquire() func() {
	if c.opts.Ownership == nil {
		return func() {}
	}
	return c.opts.Ownership.OnAcquire(func() { c.enqueueCached(c.opts.Ownership.Owns) })
}
