package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/logbuffer"
	"github.com/hcpsched/hcpsched/internal/informers"
)

const clusterID = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1"

type harness struct {
	reg     *prometheus.Registry
	metrics *Metrics
	ctrl    *Controller
	logs    *logbuffer.Buffer
}

func newHarness(t *testing.T, opts Options, fn ReconcileFunc) *harness {
	t.Helper()
	h := &harness{reg: prometheus.NewRegistry(), logs: &logbuffer.Buffer{}}
	var err error
	h.metrics, err = NewMetrics(h.reg)
	require.NoError(t, err)
	if opts.Name == "" {
		opts.Name = "test"
	}
	opts.Metrics = h.metrics
	opts.Logger = slog.New(slog.NewJSONHandler(h.logs, nil))
	if opts.RateLimiter == nil {
		opts.RateLimiter = workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 20*time.Millisecond)
	}
	h.ctrl, err = New(opts, fn)
	require.NoError(t, err)
	return h
}

func (h *harness) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		assert.NoError(t, h.ctrl.Run(ctx))
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func (h *harness) reconciles(result string) float64 {
	return testutil.ToFloat64(h.metrics.reconciles.WithLabelValues(h.ctrl.opts.Name, result))
}

func (h *harness) retries() float64 {
	return testutil.ToFloat64(h.metrics.workqueue.retries.WithLabelValues(h.ctrl.opts.Name))
}

func TestErrorsRetryWithBackoff(t *testing.T) {
	var calls atomic.Int32
	var mu sync.Mutex
	var at []time.Time
	h := newHarness(t, Options{}, func(ctx context.Context, key string) (Result, error) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		if calls.Add(1) <= 3 {
			return Result{}, errors.New("transient")
		}
		return Result{}, nil
	})
	h.run(t)
	h.ctrl.Enqueue("k")
	require.Eventually(t, func() bool { return h.reconciles(ResultSuccess) == 1 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 3.0, h.reconciles(ResultError))
	assert.Equal(t, 3.0, h.retries(), "each error is a rate-limited retry")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, at, 4)
	assert.GreaterOrEqual(t, at[3].Sub(at[2]), 4*time.Millisecond, "the third retry waits 2^2 times the base delay")
	assert.Contains(t, h.logs.String(), `"resourceID":"k"`)
	assert.Contains(t, h.logs.String(), "transient")
}

func TestExpectedWaitIsARequeueNotARetry(t *testing.T) {
	var calls atomic.Int32
	h := newHarness(t, Options{}, func(ctx context.Context, key string) (Result, error) {
		if calls.Add(1) <= 2 {
			return Result{RequeueAfter: 5 * time.Millisecond}, nil
		}
		return Result{}, nil
	})
	h.run(t)
	h.ctrl.Enqueue("k")
	require.Eventually(t, func() bool { return h.reconciles(ResultSuccess) == 1 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 2.0, h.reconciles(ResultRequeue))
	assert.Zero(t, h.reconciles(ResultError))
	assert.Zero(t, h.retries(), "an expected wait does not count as a retry")
}

func TestPanicIsCountedThenHandedToPolicy(t *testing.T) {
	recovered := make(chan any, 1)
	var calls atomic.Int32
	h := newHarness(t, Options{OnPanic: func(r any) { recovered <- r }}, func(ctx context.Context, key string) (Result, error) {
		if calls.Add(1) == 1 {
			panic("boom")
		}
		return Result{}, nil
	})
	h.run(t)
	h.ctrl.Enqueue("k")
	select {
	case r := <-recovered:
		assert.Equal(t, "boom", r)
	case <-time.After(5 * time.Second):
		t.Fatal("panic policy not called")
	}
	assert.Equal(t, 1.0, testutil.ToFloat64(h.metrics.panics.WithLabelValues("test")))
	require.Eventually(t, func() bool { return h.reconciles(ResultSuccess) == 1 }, 5*time.Second, time.Millisecond)
	assert.Contains(t, h.logs.String(), "reconcile panicked")
}

// CrashOnPanic is the opt-in to crash: the panic is counted, then raised again.
func TestCrashOnPanicRePanics(t *testing.T) {
	h := newHarness(t, Options{OnPanic: CrashOnPanic}, func(context.Context, string) (Result, error) { panic("boom") })
	assert.PanicsWithValue(t, "boom", func() {
		_, _, _ = h.ctrl.reconcileSafely(context.Background(), "k", &keyLogger{base: slog.New(slog.DiscardHandler), key: "k"})
	})
	assert.Equal(t, 1.0, testutil.ToFloat64(h.metrics.panics.WithLabelValues("test")), "counted before crashing")
}

func TestWorkersRunInParallel(t *testing.T) {
	const workers = 4
	inFlight := make(chan struct{}, workers)
	release := make(chan struct{})
	h := newHarness(t, Options{Workers: workers}, func(ctx context.Context, key string) (Result, error) {
		inFlight <- struct{}{}
		<-release
		return Result{}, nil
	})
	h.run(t)
	for i := range workers {
		h.ctrl.Enqueue(fmt.Sprint(i))
	}
	require.Eventually(t, func() bool { return len(inFlight) == workers }, 5*time.Second, time.Millisecond)
	close(release)
	require.Eventually(t, func() bool { return h.reconciles(ResultSuccess) == workers }, 5*time.Second, time.Millisecond)
}

// Events on an SPC reach its cluster's key; deletes too; and the resync re-enqueues.
func TestInformerEventsMapToKeys(t *testing.T) {
	store := memory.New()
	factory, err := informers.NewFactory(store, informers.Options{PollInterval: 20 * time.Millisecond})
	require.NoError(t, err)
	spcs := informers.NewCaches(factory).ServiceProviderClusters()

	seen := make(chan string, 100)
	h := newHarness(t, Options{ResyncPeriod: 100 * time.Millisecond}, func(ctx context.Context, key string) (Result, error) {
		LoggerFrom(ctx).Info("reconciling")
		seen <- key
		return Result{}, nil
	})
	require.NoError(t, h.ctrl.Watch(spcs, KeyForType(api.ClusterResourceType)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx)
	require.True(t, factory.WaitForCacheSync(ctx))
	h.run(t)

	spcID := api.MustParseResourceID(clusterID).Child("serviceProviderClusters", "default")
	created, err := database.Create(ctx, store.Container(api.ResourcesContainer), api.NewDocument(spcID, "s", api.ServiceProviderClusterProperties{}))
	require.NoError(t, err)
	want := informers.KeyOf(clusterID)
	expectKey(t, seen, want, "add")
	expectKey(t, seen, want, "resync")

	item, err := store.Container(api.ResourcesContainer).Get(ctx, created.PartitionKey, created.ID)
	require.NoError(t, err)
	_, err = database.SoftDelete(ctx, store.Container(api.ResourcesContainer), item, time.Now())
	require.NoError(t, err)
	expectKey(t, seen, want, "delete")
	assert.Contains(t, h.logs.String(), `"resourceID":"`+want+`"`, "logs are keyed by the resource")
}

func expectKey(t *testing.T, seen <-chan string, want, what string) {
	t.Helper()
	select {
	case k := <-seen:
		assert.Equal(t, want, k, what)
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no reconcile", what)
	}
}

func TestKeyForType(t *testing.T) {
	spc := api.MustParseResourceID(clusterID + "/serviceProviderClusters/default")
	obj := &informers.Object[api.RawProperties]{Doc: &api.Document[api.RawProperties]{ResourceID: spc.String()}}
	// As the cache holds it: named by its lowercased ID.
	cached := &informers.Object[api.RawProperties]{Name: spc.Key(), Doc: obj.Doc}
	tests := []struct {
		name string
		typ  string
		obj  any
		want []string
	}{
		{"child to parent", api.ClusterResourceType, obj, []string{informers.KeyOf(clusterID)}},
		{"self", api.ServiceProviderClusterResourceType, obj, []string{informers.KeyOf(spc.String())}},
		{"unrelated type", api.StampResourceType, obj, nil},
		{"not an object", api.ClusterResourceType, "nope", nil},
		{"cached child to parent", api.ClusterResourceType, cached, []string{informers.KeyOf(clusterID)}},
		{"cached self", api.ServiceProviderClusterResourceType, cached, []string{informers.KeyOf(spc.String())}},
		{"deleted", api.ClusterResourceType, cache.DeletedFinalStateUnknown{Key: cached.Name, Obj: cached}, []string{informers.KeyOf(clusterID)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, KeyForType(tt.typ)(tt.obj))
		})
	}
}

// An ancestor's key is cut from the object's name only when the name starts with the
// ancestor's ID lowercased; otherwise it is the ID lowercased afresh.
func TestAncestorKey(t *testing.T) {
	cluster := api.MustParseResourceID("/subscriptions/SUB/resourceGroups/RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/Web")
	lowered := strings.ToLower(cluster.String())
	tests := []struct {
		name, objName string
	}{
		{"own ID", lowered},
		{"child's ID", lowered + "/serviceproviderclusters/default"},
		{"name not lowercased", cluster.String() + "/serviceProviderClusters/default"},
		{"another cluster's name", strings.Replace(lowered, "/web", "/wec", 1) + "/serviceproviderclusters/default"},
		{"shorter name", lowered[:10]},
		{"no name", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ancestorKey(tt.objName, cluster)
			assert.Equal(t, lowered, got)
		})
	}
	nonASCII := api.MustParseResourceID("/subscriptions/sub/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/Kelvin")
	assert.Equal(t, nonASCII.Key(), ancestorKey(nonASCII.Key(), nonASCII), "a non-ASCII ID is lowercased afresh")
}

// RunAll stops every controller when one of them stops, and when ctx ends.
func TestRunAllStopsTogether(t *testing.T) {
	a := newHarness(t, Options{Name: "a"}, func(context.Context, string) (Result, error) { return Result{}, nil })
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	require.NoError(t, err)
	b, err := New(Options{Name: "b", Metrics: m}, func(context.Context, string) (Result, error) { return Result{}, nil })
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- RunAll(ctx, []*Controller{a.ctrl, b}) }()
	a.ctrl.Enqueue("k")
	require.Eventually(t, func() bool { return a.reconciles(ResultSuccess) == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("RunAll did not return after ctx ended")
	}
}

// fakeClock is a Clock whose timers fire only when the test says so, synchronously.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	clock   *fakeClock
	at      time.Time
	f       func()
	stopped bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// advance moves the clock without firing anything.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fireNext moves the clock to the earliest live timer due by until and runs it; false
// when there is none.
func (c *fakeClock) fireNext(until time.Time) bool {
	c.mu.Lock()
	var next *fakeTimer
	for _, t := range c.timers {
		if !t.stopped && !t.at.After(until) && (next == nil || t.at.Before(next.at)) {
			next = t
		}
	}
	if next == nil {
		c.mu.Unlock()
		return false
	}
	next.stopped = true
	if next.at.After(c.now) {
		c.now = next.at
	}
	c.mu.Unlock()
	next.f()
	return true
}

// pending counts the timers that have neither fired nor been stopped.
func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.stopped {
			n++
		}
	}
	return n
}

// A key that keeps asking to be looked at later is queued once however many events
// arrive: over three waits, ten events cost ten reconciles plus one per wait, not a loop
// of their own each (finding 3 of issue 14: 10 events became 89 reconciles in 2 s).
func TestRequeueAfterKeepsOneTimerPerKey(t *testing.T) {
	const (
		events = 10
		wait   = time.Minute
		window = 3 * wait
	)
	clk := newFakeClock()
	h := newHarness(t, Options{Clock: clk}, func(context.Context, string) (Result, error) {
		return Result{RequeueAfter: wait}, nil
	})
	h.run(t)
	start := clk.Now()
	for i := range events {
		h.ctrl.Enqueue("k")
		require.Eventually(t, func() bool { return h.reconciles(ResultRequeue) == float64(i+1) }, 5*time.Second, time.Millisecond)
		clk.advance(wait / (2 * events)) // the events spread over the first half of a wait
	}
	assert.Equal(t, 1, clk.pending(), "one pending requeue for the key")

	for {
		before := h.reconciles(ResultRequeue)
		if !clk.fireNext(start.Add(window)) {
			break
		}
		require.Eventually(t, func() bool { return h.reconciles(ResultRequeue) == before+1 }, 5*time.Second, time.Millisecond)
	}
	assert.LessOrEqual(t, h.reconciles(ResultRequeue), float64(events+int(window/wait)),
		"one reconcile per event and one per wait")
	assert.Equal(t, 1, clk.pending(), "still one pending requeue")
	assert.Zero(t, h.retries(), "an expected wait is not a retry")
}

// By default a panicking reconcile is recovered, counted, logged with its stack and
// retried with backoff, and the controller keeps running: the process lives to be
// scraped, so ControllerPanic can see the counter (finding 9 of issue 14).
func TestDefaultPanicPolicyRecoversAndRetries(t *testing.T) {
	var calls atomic.Int32
	h := newHarness(t, Options{}, func(ctx context.Context, key string) (Result, error) {
		if key == "bad" && calls.Add(1) == 1 {
			panic("boom")
		}
		return Result{}, nil
	})
	h.run(t)
	h.ctrl.Enqueue("bad")
	require.Eventually(t, func() bool { return h.reconciles(ResultSuccess) == 1 }, 5*time.Second, time.Millisecond, "the key is retried")
	assert.Equal(t, 1.0, testutil.ToFloat64(h.metrics.panics.WithLabelValues("test")))
	assert.Equal(t, 1.0, h.reconciles(ResultPanic))
	assert.Equal(t, 1.0, h.retries(), "a panic is retried with backoff")

	h.ctrl.Enqueue("other")
	require.Eventually(t, func() bool { return h.reconciles(ResultSuccess) == 2 }, 5*time.Second, time.Millisecond, "the controller keeps running")

	logs := h.logs.String()
	assert.Contains(t, logs, "reconcile panicked")
	assert.Contains(t, logs, `"resourceID":"bad"`)
	assert.Contains(t, logs, "TestDefaultPanicPolicyRecoversAndRetries", "the stack is logged")
}

// Every reconcile runs under a deadline: one that blocks on its ctx is cut there, fails
// with the ctx error and is retried with backoff (finding 5 of issue 14).
func TestReconcileIsCutAtItsDeadline(t *testing.T) {
	const timeout = 20 * time.Millisecond
	type call struct {
		deadline bool
		took     time.Duration
		err      error
	}
	calls := make(chan call, 2)
	var n atomic.Int32
	h := newHarness(t, Options{ReconcileTimeout: timeout}, func(ctx context.Context, key string) (Result, error) {
		_, hasDeadline := ctx.Deadline()
		if n.Add(1) > 1 {
			calls <- call{deadline: hasDeadline}
			return Result{}, nil
		}
		start := time.Now()
		<-ctx.Done() // a remote call that never answers
		calls <- call{deadline: hasDeadline, took: time.Since(start), err: ctx.Err()}
		return Result{}, fmt.Errorf("reading the cluster: %w", ctx.Err())
	})
	h.run(t)
	h.ctrl.Enqueue("k")
	var first call
	select {
	case first = <-calls:
	case <-time.After(5 * time.Second):
		t.Fatal("the blocked reconcile was never cut")
	}
	assert.True(t, first.deadline, "the reconcile's ctx has a deadline")
	assert.ErrorIs(t, first.err, context.DeadlineExceeded)
	assert.GreaterOrEqual(t, first.took, timeout)
	require.Eventually(t, func() bool { return h.reconciles(ResultSuccess) == 1 }, 5*time.Second, time.Millisecond, "retried")
	assert.True(t, (<-calls).deadline, "the retry runs under a deadline too")
	assert.Equal(t, 1.0, h.reconciles(ResultError))
	assert.Equal(t, 1.0, h.retries(), "a timed-out reconcile is retried with backoff")
	assert.Contains(t, h.logs.String(), "reconcile exceeded its deadline")
	assert.Contains(t, h.logs.String(), "deadline exceeded", "the error is logged")
}

// handOperatedInformer delivers the events a test hands it to its one handler.
type handOperatedInformer struct {
	handler cache.ResourceEventHandler
	// store is what resyncs list; nil lists nothing.
	store cache.Store
}

type syncedRegistration struct{}

func (syncedRegistration) HasSynced() bool { return true }

func (i *handOperatedInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	i.handler = h
	return syncedRegistration{}, nil
}

func (i *handOperatedInformer) GetStore() cache.Store {
	if i.store != nil {
		return i.store
	}
	return cache.NewStore(cache.MetaNamespaceKeyFunc)
}

// With an event delay, the events of a key within the delay cost one reconcile, made
// when the delay from the first event has passed, and an event after it starts a new
// delay. Without one, each event enqueues at once.
func TestEventDelayGathersAKeysEvents(t *testing.T) {
	const delay = time.Second
	clk := newFakeClock()
	seen := make(chan string, 10)
	h := newHarness(t, Options{Clock: clk, EventDelay: delay}, func(_ context.Context, key string) (Result, error) {
		seen <- key
		return Result{}, nil
	})
	inf := &handOperatedInformer{}
	require.NoError(t, h.ctrl.Watch(inf, func(obj any) []string { return []string{obj.(string)} }))
	h.run(t)

	start := clk.Now()
	for range 5 {
		inf.handler.OnUpdate("k", "k")
		clk.advance(delay / 10)
	}
	inf.handler.OnAdd("other", false)
	assert.Equal(t, 2, clk.pending(), "one pending add per key, however many events")
	assert.Zero(t, h.ctrl.queue.Len(), "nothing queued before the delay")

	require.True(t, clk.fireNext(start.Add(delay)))
	expectKey(t, seen, "k", "the first event's delay passed")
	assert.Equal(t, start.Add(delay), clk.Now(), "due one delay after the first event, not the last")
	require.True(t, clk.fireNext(clk.Now().Add(delay)))
	expectKey(t, seen, "other", "the other key's delay passed")
	assert.Zero(t, clk.pending())
	require.Eventually(t, func() bool { return h.reconciles(ResultSuccess) == 2 }, 5*time.Second, time.Millisecond,
		"six events, two keys: two reconciles")

	inf.handler.OnDelete("k")
	assert.Equal(t, 1, clk.pending(), "an event after the reconcile starts a new delay")
}

func TestWithoutEventDelayEventsEnqueueAtOnce(t *testing.T) {
	clk := newFakeClock()
	seen := make(chan string, 10)
	h := newHarness(t, Options{Clock: clk}, func(_ context.Context, key string) (Result, error) {
		seen <- key
		return Result{}, nil
	})
	inf := &handOperatedInformer{}
	require.NoError(t, h.ctrl.Watch(inf, func(obj any) []string { return []string{obj.(string)} }))
	h.run(t)
	inf.handler.OnAdd("k", false)
	expectKey(t, seen, "k", "enqueued at once")
	assert.Zero(t, clk.pending(), "no timer")
}

// An event of a key Options.Settled calls settled enqueues nothing; an event of any other
// key does, and a resync enqueues every cached key, settled or not: it is the safety net
// of a filter that is wrong.
func TestSettledKeysAreNotEnqueuedByEvents(t *testing.T) {
	seen := make(chan string, 10)
	h := newHarness(t, Options{Workers: 1, Settled: func(key string) bool { return key == "settled" }}, func(_ context.Context, key string) (Result, error) {
		seen <- key
		return Result{}, nil
	})
	store := cache.NewStore(func(obj any) (string, error) { return obj.(string), nil })
	require.NoError(t, store.Add("settled"))
	inf := &handOperatedInformer{store: store}
	require.NoError(t, h.ctrl.Watch(inf, func(obj any) []string { return []string{obj.(string)} }))
	h.run(t)

	inf.handler.OnAdd("settled", false)
	inf.handler.OnUpdate("settled", "settled")
	inf.handler.OnDelete("settled")
	inf.handler.OnAdd("open", false)
	// One worker takes keys in order: a settled key enqueued above would come first.
	expectKey(t, seen, "open", "an event of an unsettled key")
	assert.Empty(t, seen, "no event of the settled key reached the reconcile")

	h.ctrl.enqueueCached(func(string) bool { return true })
	expectKey(t, seen, "settled", "a resync enqueues the settled key too")
}
