// Package controllertest is the one test kit of both binaries' controllers: a memory
// store (wrapped so the data-flow check records what controllers write), the informer
// caches over it, a fake Cluster Service on 127.0.0.1 reached through the real OCM SDK
// client, metrics and a log buffer. A unit test builds the controller's reconcile from
// its definition and calls it synchronously, key by key, as client-go's
// sample-controller tests do; only flow tests run the controllers and wait.
package controllertest

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/dataflowtest"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/informertest"
	"github.com/hcpsched/hcpsched/internal/dev/logbuffer"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// Timing of the kit: the feed is polled often, so a change reaches the caches within
// milliseconds, and Eventually looks every Tick for at most WaitFor.
const (
	PollInterval = 5 * time.Millisecond
	WaitFor      = 10 * time.Second
	Tick         = 5 * time.Millisecond
)

// Kit is one test's world.
type Kit struct {
	// Memory is the store itself (nil on OnStore's); Resources and Fleet are the test's
	// own handles on the store, for seeding and reading back, and are not recorded by
	// the data-flow check.
	Memory    *memory.Store
	Resources database.Container
	Fleet     database.Container
	// Store is what controllers are given: the memory store wrapped by the data-flow
	// recorder and by any Option.
	Store    database.Store
	Factory  *informers.Factory
	Caches   informers.Caches
	CS       *fakeclusterservice.Server
	CSClient *clusterservice.Client
	Registry *prometheus.Registry
	Logs     *logbuffer.Buffer
	Logger   *slog.Logger
	// Runtime is what controller.Build needs: the kit's metrics and logger, and a retry
	// back-off of milliseconds.
	Runtime controller.Runtime
	// Synced are what Start waits for after the caches, for state built on them that
	// syncs behind them (the backend's placement snapshot).
	Synced []cache.InformerSynced
}

// Option changes how New builds the kit.
type Option func(*options)

type options struct {
	base     database.Store
	poll     time.Duration
	wrap     []func(database.Store) database.Store
	csConfig func(*clusterservice.Config)
}

// OnStore builds the kit on s instead of a fresh memory store (Memory is then nil): kits
// on one store are replicas of a binary sharing a database, and s may be the Cosmos
// emulator.
func OnStore(s database.Store) Option {
	return func(o *options) { o.base = s }
}

// WithPollInterval changes how often the caches poll the change feed (PollInterval by
// default): a store slower than memory, such as the emulator, needs longer.
func WithPollInterval(d time.Duration) Option {
	return func(o *options) { o.poll = d }
}

// WithStore wraps the store the controllers (and the caches) see, to inject faults or
// count requests; wrappers apply in order, innermost first.
func WithStore(wrap func(database.Store) database.Store) Option {
	return func(o *options) { o.wrap = append(o.wrap, wrap) }
}

// WithClusterServiceClient changes the SDK client's configuration (retries, timeouts).
func WithClusterServiceClient(f func(*clusterservice.Config)) Option {
	return func(o *options) { o.csConfig = f }
}

// New builds a kit whose servers and caches stop when the test ends. Register the caches
// the test needs (through Caches or a controller's Triggers), then Start.
func New(t testing.TB, opts ...Option) *Kit {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	k := &Kit{
		CS:       fakeclusterservice.New(fakeclusterservice.WithSeed(1)),
		Registry: prometheus.NewRegistry(),
		Logs:     &logbuffer.Buffer{},
	}
	base := o.base
	if base == nil {
		k.Memory = memory.New()
		base = k.Memory
	}
	k.Resources = base.Container(api.ResourcesContainer)
	k.Fleet = base.Container(api.FleetContainer)
	k.Store = dataflowtest.WrapStore(base)
	for _, w := range o.wrap {
		k.Store = w(k.Store)
	}
	k.Logger = slog.New(slog.NewJSONHandler(k.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	srv := httptest.NewServer(k.CS)
	t.Cleanup(srv.Close)
	cfg := clusterservice.Config{URL: srv.URL, RetryInterval: time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
	if o.csConfig != nil {
		o.csConfig(&cfg)
	}
	var err error
	k.CSClient, err = clusterservice.New(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = k.CSClient.Close() })

	poll := PollInterval
	if o.poll > 0 {
		poll = o.poll
	}
	k.Factory, err = informers.NewFactory(k.Store, informers.Options{PollInterval: poll, Registerer: k.Registry})
	require.NoError(t, err)
	k.Caches = informers.NewCaches(k.Factory)
	metrics, err := controller.NewMetrics(k.Registry)
	require.NoError(t, err)
	k.Runtime = controller.Runtime{
		Metrics: metrics,
		Logger:  k.Logger,
		RateLimiter: func() workqueue.TypedRateLimiter[string] {
			return workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 50*time.Millisecond)
		},
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("controller logs:\n%s", k.Logs.String())
		}
	})
	return k
}

// Container is the named container as controllers see it (recorded, wrapped).
func (k *Kit) Container(name string) database.Container { return k.Store.Container(name) }

// Start starts the caches registered so far, waits until they have listed, and watches
// them for in-place mutations until the test ends.
func (k *Kit) Start(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	// Stopped and waited for, so no reader of one test runs on into the next.
	t.Cleanup(func() {
		cancel()
		k.Factory.Shutdown()
	})
	k.Factory.Start(ctx)
	require.True(t, k.Factory.WaitForCacheSync(t.Context()), "caches did not sync")
	require.True(t, cache.WaitForCacheSync(t.Context().Done(), k.Synced...), "what is built on the caches did not sync")
	informertest.DetectMutations(t, k.Caches.Registered()...)
}

// Ctx is the context a worker hands a reconcile of the named controller.
func (k *Kit) Ctx(t testing.TB, name string) context.Context {
	// The name, as the worker puts it there, credits the reconcile's writes to the
	// controller in the data-flow check.
	return controller.WithName(controller.WithLogger(t.Context(), k.Logger.With("controller", name)), name)
}

// Reconciler is one controller's reconcile, called by the test key by key.
type Reconciler struct {
	t         testing.TB
	kit       *Kit
	name      string
	reconcile controller.ReconcileFunc
}

// NewReconciler builds def's reconcile from env with settings s (def.Defaults when s is
// nil) without a workqueue: the test calls Reconcile itself.
func NewReconciler[E any](t testing.TB, k *Kit, env E, def controller.Definition[E], s *controller.Settings) *Reconciler {
	t.Helper()
	settings := def.Defaults
	if s != nil {
		settings = *s
	}
	fn, err := def.New(env, settings)
	require.NoError(t, err)
	return &Reconciler{t: t, kit: k, name: def.Name, reconcile: fn}
}

// Reconcile runs one reconcile of key, as a worker would.
func (r *Reconciler) Reconcile(key string) (controller.Result, error) {
	return r.reconcile(r.kit.Ctx(r.t, r.name), key)
}

// Run builds defs on env with cfg (see controller.Build), starts the caches, and runs the
// controllers until the test ends, as a binary does. For flow tests, which then wait for
// what the controllers write.
func Run[E any](t testing.TB, k *Kit, env E, defs []controller.Definition[E], cfg map[string]controller.Settings) []*controller.Controller {
	t.Helper()
	ctrls, err := controller.Build(env, k.Runtime, defs, cfg)
	require.NoError(t, err)
	k.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- controller.RunAll(ctx, ctrls) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return ctrls
}

// Reconciles is hcpsched_controller_reconcile_total for one controller and result.
func (k *Kit) Reconciles(t testing.TB, name, result string) float64 {
	t.Helper()
	families, err := k.Registry.Gather()
	require.NoError(t, err)
	for _, fam := range families {
		if fam.GetName() != "hcpsched_controller_reconcile_total" {
			continue
		}
		for _, m := range fam.GetMetric() {
			labels := labelsOf(m)
			if labels["controller"] == name && labels["result"] == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// WaitQuiet waits until no controller has a key queued or in flight, and none has been
// for quietTicks checks in a row: for each controller, every key the workqueue took
// (workqueue_adds_total) has finished a reconcile (hcpsched_controller_reconcile_total)
// and the queue is empty. The checks in a row cover the events of writes made just
// before, which reach the caches with the next change-feed poll (quietTicks × Tick is
// several PollIntervals). A test that must see a later change, and not some earlier
// event still on its way, cause a reconcile waits for this first. A key waiting out a
// RequeueAfter is not in flight.
func (k *Kit) WaitQuiet(t testing.TB, timeout time.Duration) {
	t.Helper()
	var last float64
	quiet := 0
	require.Eventually(t, func() bool {
		families, err := k.Registry.Gather()
		require.NoError(t, err)
		adds, done, depth, total := map[string]float64{}, map[string]float64{}, 0.0, 0.0
		for _, fam := range families {
			for _, m := range fam.GetMetric() {
				labels := labelsOf(m)
				switch fam.GetName() {
				case "workqueue_adds_total":
					adds[labels["name"]] += m.GetCounter().GetValue()
					total += m.GetCounter().GetValue()
				case "hcpsched_controller_reconcile_total":
					done[labels["controller"]] += m.GetCounter().GetValue()
				case "workqueue_depth":
					depth += m.GetGauge().GetValue()
				}
			}
		}
		idle := depth == 0
		for name, n := range adds {
			idle = idle && done[name] == n
		}
		if !idle || total != last {
			quiet, last = 0, total
			return false
		}
		quiet++
		return quiet >= quietTicks
	}, timeout, Tick, "controllers quiet")
}

// quietTicks is how many checks in a row WaitQuiet wants quiet.
const quietTicks = 10

func labelsOf(m *dto.Metric) map[string]string {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	return labels
}
