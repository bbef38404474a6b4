// Package controller is hcpsched's one keyed controller: client-go's typed rate-limiting
// workqueue, N workers, event handlers that map cached objects to keys, a periodic
// resync, explicit requeue-after for expected waits, and metrics. Every controller of
// both binaries runs on it, so there is one worker loop in the codebase.
package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/hcpsched/hcpsched/internal/api"
)

// DefaultReconcileTimeout bounds one reconcile. It is a backstop for a remote call
// that hangs, not a budget to plan for: it is well above the worst case of what a
// reconcile does (a Cosmos read that the SDK retries, five tries of
// cosmos.DefaultTryTimeout with its 1 s pauses, about 54 s; a write, 10 s; a Cluster
// Service call, clusterservice.DefaultTimeout), so a reconcile that reaches it is stuck.
const DefaultReconcileTimeout = 2 * time.Minute

// Result tells the worker what to do with a key after a successful reconcile.
type Result struct {
	// RequeueAfter schedules the key again after an expected wait (no capacity yet,
	// waiting on another component). It is not a failure: the retry backoff is reset
	// and no retry is counted.
	RequeueAfter time.Duration
}

// ReconcileFunc handles one key. Reconcilers read caches only, check on the cached
// object that there is work before doing any, and write with etag-guarded replaces. An
// error is retried with exponential backoff.
type ReconcileFunc func(ctx context.Context, key string) (Result, error)

// Options configure a controller. Name, Metrics and Reconcile are required.
type Options struct {
	Name    string
	Workers int
	// ResyncPeriod re-enqueues every key of every watched informer, jittered by up to
	// 10%, so that state missed by a handler is reconciled eventually. 0 disables it.
	ResyncPeriod time.Duration
	RateLimiter  workqueue.TypedRateLimiter[string]
	Metrics      *Metrics
	Logger       *slog.Logger
	// OnPanic runs after a reconcile's panic has been recovered, counted and logged with
	// its stack. When it returns, the key is retried with backoff, as controller-runtime
	// does by default: the process stays up, so the panic counter is scraped and
	// ControllerPanic can fire, and one bad document does not crash-loop every replica.
	// nil does nothing more; CrashOnPanic opts in to crashing instead.
	OnPanic func(recovered any)
	// ReconcileTimeout bounds each reconcile: its ctx ends then, and a reconcile cut
	// short returns the ctx error and is retried with backoff. 0 is
	// DefaultReconcileTimeout.
	ReconcileTimeout time.Duration
	// Clock times requeue-after waits; nil is the real clock. Tests pass a fake one to
	// step through waits without sleeping.
	Clock Clock
	// Ownership, when set, limits the controller to the keys this replica owns
	// (leaderless replicas; see ownership.go). nil works every key.
	Ownership Ownership
	// EventDelay holds a key that an informer event enqueues for this long, counted
	// from the first event, so that every event of a burst in that window costs one
	// reconcile of the key. It is for a controller keyed by something many documents
	// map to (an MC), whose reconcile reads them all; 0 enqueues at once.
	EventDelay time.Duration
	// Settled, when set, reports that the caches leave the controller nothing to do for
	// key: an informer event of a settled key enqueues nothing. Most events of a cluster
	// are another controller's step, and a reconcile that only finds its gate closed costs
	// a queue round trip, a worker's wake-up and a deadline. Resyncs, requeues and keys a
	// replica's lease brings still enqueue: they are the safety net if Settled is wrong.
	// It must be true only where a reconcile would return at once with no side effect.
	Settled func(key string) bool
}

// Clock is the time source of the controller's delayed requeues.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed, unless stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not started, reporting whether it did so.
	Stop() bool
}

// CrashOnPanic is an OnPanic policy that re-panics, crashing the process, for a
// controller that must not carry on in whatever state the panic left behind. The panic
// has been counted by then, but only a scrape that lands before the crash sees it.
func CrashOnPanic(recovered any) { panic(recovered) }

type realClock struct{}

func (realClock) Now() time.Time                            { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Controller runs a ReconcileFunc over a workqueue fed by informers.
type Controller struct {
	opts      Options
	reconcile ReconcileFunc
	queue     workqueue.TypedRateLimitingInterface[string]
	delayed   *delayedAdds
	logger    *slog.Logger

	mu      sync.Mutex
	sources []source

	// reconcileDuration is this controller's series of the duration histogram, looked up
	// at the first reconcile (the series appears then, as before) rather than at each.
	reconcileDuration func() prometheus.Observer
}

type source struct {
	store  cache.Store
	keyFor KeyFunc
}

// KeyFunc maps a cached object (or a delete tombstone) to the keys it affects.
type KeyFunc func(obj any) []string

// New builds a controller; Run starts it.
func New(opts Options, reconcile ReconcileFunc) (*Controller, error) {
	if opts.Name == "" || opts.Metrics == nil || reconcile == nil {
		return nil, errors.New("controller: Name, Metrics and a reconcile function are required")
	}
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	if opts.RateLimiter == nil {
		opts.RateLimiter = workqueue.DefaultTypedControllerRateLimiter[string]()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.OnPanic == nil {
		opts.OnPanic = func(any) {}
	}
	if opts.Clock == nil {
		opts.Clock = realClock{}
	}
	if opts.ReconcileTimeout <= 0 {
		opts.ReconcileTimeout = DefaultReconcileTimeout
	}
	c := &Controller{
		opts:      opts,
		reconcile: reconcile,
		logger:    opts.Logger.With("controller", opts.Name),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(opts.RateLimiter, workqueue.TypedRateLimitingQueueConfig[string]{
			Name:            opts.Name,
			MetricsProvider: opts.Metrics.workqueue,
		}),
	}
	c.delayed = newDelayedAdds(opts.Clock, c.queue.Add)
	c.reconcileDuration = sync.OnceValue(func() prometheus.Observer { return opts.Metrics.duration.WithLabelValues(opts.Name) })
	// The panic counter exists at 0 from the start, so that the alert's increase() sees
	// the first panic too.
	opts.Metrics.panics.WithLabelValues(opts.Name)
	return c, nil
}

// Informer is what Watch needs of an informer: handler registration and its store.
type Informer interface {
	AddEventHandler(cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error)
	GetStore() cache.Store
}

// Watch enqueues keyFor(obj) on every add, update and delete of the informer (except a
// key Options.Settled says is settled), and on each resync.
func (c *Controller) Watch(inf Informer, keyFor KeyFunc) error {
	enqueue := func(obj any) {
		for _, k := range keyFor(obj) {
			if c.opts.Settled != nil && c.opts.Settled(k) {
				continue
			}
			if c.opts.EventDelay > 0 {
				c.delayed.after(k, c.opts.EventDelay)
				continue
			}
			c.queue.Add(k)
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, newObj any) { enqueue(newObj) },
		DeleteFunc: enqueue,
	})
	if err != nil {
		return fmt.Errorf("controller %s: watching informer: %w", c.opts.Name, err)
	}
	c.mu.Lock()
	c.sources = append(c.sources, source{store: inf.GetStore(), keyFor: keyFor})
	c.mu.Unlock()
	return nil
}

// Enqueue adds a key by hand, for tests and for triggers that are not informers.
func (c *Controller) Enqueue(key string) { c.queue.Add(key) }

// resourceIDHolder is implemented by informers.Object, whose name is the lowercased ID.
type resourceIDHolder interface {
	ResourceID() string
	GetName() string
}

// KeyForType maps an object to the lowercased ID of its ancestor (or itself) of the
// given resource type: an SPC event becomes its cluster's key for a cluster-keyed
// controller.
func KeyForType(resourceType string) KeyFunc {
	return func(obj any) []string {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		h, ok := obj.(resourceIDHolder)
		if !ok {
			return nil
		}
		rid, err := api.ParseResourceID(h.ResourceID())
		if err != nil {
			return nil
		}
		if a, ok := rid.Ancestor(resourceType); ok {
			return []string{ancestorKey(h.GetName(), a)}
		}
		return nil
	}
}

// ancestorKey is a.Key() without lowercasing again when the object's name, its own
// lowercased ID, starts with it: every informer event of every controller maps through
// here, and lowercasing an ID allocates.
func ancestorKey(name string, a *api.ResourceID) string {
	id := a.String()
	if len(name) < len(id) {
		return a.Key()
	}
	for i := range len(id) {
		c := id[i]
		if c >= utf8.RuneSelf {
			return a.Key()
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if name[i] != c {
			return a.Key()
		}
	}
	return name[:len(id)]
}

// Run processes keys with the configured number of workers until ctx ends, then drains
// the workers and returns.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	defer c.resyncOnAcquire()()
	c.logger.Info("starting controller", "workers", c.opts.Workers)
	var wg sync.WaitGroup
	for range c.opts.Workers {
		wg.Go(func() {
			for c.processNext(ctx) {
			}
		})
	}
	if c.opts.ResyncPeriod > 0 {
		wg.Go(func() { c.resyncLoop(ctx) })
	}
	<-ctx.Done()
	c.delayed.stop()
	c.queue.ShutDown()
	wg.Wait()
	c.logger.Info("stopped controller")
	return nil
}

// RunAll runs controllers until ctx ends. If one stops early, the others are stopped
// too: a binary missing one of its controllers must restart rather than limp along.
func RunAll(ctx context.Context, ctrls []*Controller) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, c := range ctrls {
		wg.Go(func() {
			if err := c.Run(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			cancel()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c *Controller) resyncLoop(ctx context.Context) {
	for {
		jitter := time.Duration(rand.Float64() * 0.1 * float64(c.opts.ResyncPeriod))
		select {
		case <-ctx.Done():
			return
		case <-time.After(c.opts.ResyncPeriod + jitter):
		}
		c.enqueueCached(func(string) bool { return true })
	}
}

// enqueueCached adds the key of every object in the watched caches that want accepts.
func (c *Controller) enqueueCached(want func(key string) bool) {
	c.mu.Lock()
	sources := append([]source(nil), c.sources...)
	c.mu.Unlock()
	for _, s := range sources {
		for _, obj := range s.store.List() {
			for _, k := range s.keyFor(obj) {
				if want(k) {
					c.queue.Add(k)
				}
			}
		}
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	ctx, release, owned := c.claim(ctx, key)
	if !owned {
		c.queue.Forget(key) // its owner works it; resyncOnAcquire brings it back here
		return true
	}
	defer release()
	logger := &keyLogger{base: c.logger, key: key}
	start := time.Now()
	// The deadline frees a worker stuck on a call that never answers; the reconcile
	// returns its ctx error and goes back through the rate limiter like any failure.
	// The name says which controller every write of the reconcile is made by.
	rctx, cancel := context.WithTimeout(WithName(context.WithValue(ctx, loggerKey{}, logger), c.opts.Name), c.opts.ReconcileTimeout)
	result, panicked, err := c.reconcileSafely(rctx, key, logger)
	timedOut := errors.Is(rctx.Err(), context.DeadlineExceeded)
	cancel()
	c.reconcileDuration().Observe(time.Since(start).Seconds())
	// Each outcome is counted once it has been acted upon, so a count seen by a test
	// means the key's next add is already arranged.
	switch {
	case panicked:
		c.queue.AddRateLimited(key)
		c.count(ResultPanic)
	case err != nil && timedOut:
		logger.get().Error("reconcile exceeded its deadline; retrying with backoff", "error", err,
			"timeout", c.opts.ReconcileTimeout, "retries", c.queue.NumRequeues(key))
		c.queue.AddRateLimited(key)
		c.count(ResultError)
	case err != nil:
		logger.get().Error("reconcile failed; retrying with backoff", "error", err, "retries", c.queue.NumRequeues(key))
		c.queue.AddRateLimited(key)
		c.count(ResultError)
	case result.RequeueAfter > 0:
		c.queue.Forget(key)
		// Not the queue's AddAfter: client-go counts that as a retry, and an expected
		// wait must leave the retry metrics (and the hot-loop alert) quiet.
		c.delayed.after(key, result.RequeueAfter)
		c.count(ResultRequeue)
	default:
		c.queue.Forget(key)
		c.count(ResultSuccess)
	}
	return true
}

func (c *Controller) count(result string) {
	c.opts.Metrics.reconciles.WithLabelValues(c.opts.Name, result).Inc()
}

func (c *Controller) reconcileSafely(ctx context.Context, key string, logger *keyLogger) (result Result, panicked bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			panicked = true
			c.opts.Metrics.panics.WithLabelValues(c.opts.Name).Inc()
			logger.get().Error("reconcile panicked; retrying with backoff", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			c.opts.OnPanic(r)
		}
	}()
	result, err = c.reconcile(ctx, key)
	return result, false, err
}

type loggerKey struct{}

// WithLogger returns ctx carrying logger.
func WithLogger(ctx context.Context, logger *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, logger)
}

// LoggerFrom returns the logger a worker put in ctx, already keyed by controller and
// resource ID.
func LoggerFrom(ctx context.Context) *slog.Logger {
	switch l := ctx.Value(loggerKey{}).(type) {
	case *keyLogger:
		return l.get()
	case *slog.Logger:
		return l
	}
	return slog.New(slog.DiscardHandler)
}

// keyLogger is a reconcile's logger, keyed by its resource ID when it is first asked
// for: most reconciles log nothing (a requeue finding its wait still on, a resync
// finding nothing to do), and keying a logger allocates.
type keyLogger struct {
	base *slog.Logger
	key  string
	once sync.Once
	l    *slog.Logger
}

func (k *keyLogger) get() *slog.Logger {
	k.once.Do(func() { k.l = k.base.With("resourceID", k.key) })
	return k.l
}
