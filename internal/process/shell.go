package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/kubernetes"
)

// App is what a binary plugs into the shell.
type App struct {
	// StartCaches starts the informers on every replica, leader or not, and returns once
	// they are started. ctx outlives the controllers: it ends only after they drained.
	// Optional.
	StartCaches func(ctx context.Context) error
	// WaitForCacheSync blocks until every cache has synced and returns true, or returns
	// false when it gives up or ctx ends. Optional.
	WaitForCacheSync func(ctx context.Context) bool
	// RunControllers runs only on the leader, only after the caches synced, until ctx
	// ends. It should return promptly once ctx ends; returning earlier, with or without
	// an error, ends the process. Required.
	RunControllers func(ctx context.Context) error
	// ReadinessChecks are required by /readyz in addition to the shell's own
	// (caches-synced, shutdown).
	ReadinessChecks []ReadinessCheck
}

// ErrLeadershipLost is returned by Run when this replica could not renew its Lease. The
// binary must exit non-zero so that a fresh process rebuilds its caches.
var ErrLeadershipLost = errors.New("leadership lost")

// Shell is one process's HTTP servers, leader election and lifecycle. New binds the
// listeners so that their addresses are known before Run; Run may be called once.
type Shell struct {
	opts      Options
	logger    *slog.Logger
	health    *health
	metrics   *server
	healthSrv *server
	kube      kubernetes.Interface
	namespace string
	isLeader  prometheus.Gauge

	ran          atomic.Bool
	shutdownOnce sync.Once
	deadline     time.Time
}

// Run is New followed by Shell.Run: the whole life of a binary.
func Run(ctx context.Context, opts Options, reg *prometheus.Registry, logger *slog.Logger, app App) error {
	s, err := New(opts, reg, logger)
	if err != nil {
		return err
	}
	return s.Run(ctx, app)
}

// New validates opts, registers the Go and process collectors and the shell's own
// metrics on reg, builds the Kubernetes client when leader election needs one, and binds
// the HTTP listeners. reg is injected rather than global so that tests and the two
// binaries each see exactly what they registered.
func New(opts Options, reg *prometheus.Registry, logger *slog.Logger) (*Shell, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("invalid options: %w", err)
	}
	if reg == nil {
		return nil, errors.New("process: a Prometheus registry is required")
	}
	if logger == nil {
		logger = slog.Default()
	}
	s := &Shell{opts: opts, logger: logger, health: newHealth(logger)}

	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if _, err := registerOrReuse(reg, c); err != nil {
			return nil, err
		}
	}
	isLeader, err := registerOrReuse(reg, prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "hcpsched_is_leader",
		Help: "1 while this replica runs controllers (holds the leader Lease, or --leader-elect=false), else 0.",
	}))
	if err != nil {
		return nil, err
	}
	gauge, ok := isLeader.(prometheus.Gauge)
	if !ok {
		return nil, errors.New("registering metrics: hcpsched_is_leader is already registered with another type")
	}
	s.isLeader = gauge

	if opts.LeaderElect {
		s.kube = opts.KubeClient
		if s.kube == nil {
			client, err := newKubeClient(opts.Kubeconfig, opts.Component)
			if err != nil {
				return nil, err
			}
			s.kube = client
		}
		ns, err := leaseNamespace(opts.LeaderElectionNamespace)
		if err != nil {
			return nil, err
		}
		s.namespace = ns
	}

	metrics, healthSrv, err := newServers(opts, reg, reg, s.health, logger)
	if err != nil {
		return nil, err
	}
	s.metrics, s.healthSrv = metrics, healthSrv
	return s, nil
}

// registerOrReuse registers c, or returns the collector already registered under the
// same descriptors, so that New may be called more than once with one registry.
func registerOrReuse(reg prometheus.Registerer, c prometheus.Collector) (prometheus.Collector, error) {
	if err := reg.Register(c); err != nil {
		var already prometheus.AlreadyRegisteredError
		if errors.As(err, &already) {
			return already.ExistingCollector, nil
		}
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	return c, nil
}

// MetricsAddr is the address /metrics is bound to (useful with port 0).
func (s *Shell) MetricsAddr() net.Addr { return s.metrics.listener.Addr() }

// HealthAddr is the address /healthz and /readyz are bound to.
func (s *Shell) HealthAddr() net.Addr { return s.healthSrv.listener.Addr() }

// Close releases the listeners of a Shell whose Run was never called.
func (s *Shell) Close() error {
	if s.ran.Swap(true) {
		return nil // Run owns the listeners
	}
	return s.closeListeners()
}

func (s *Shell) closeListeners() error {
	var errs []error
	for _, srv := range s.servers() {
		if err := srv.listener.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Shell) servers() []*server {
	if s.metrics == s.healthSrv {
		return []*server{s.metrics}
	}
	return []*server{s.metrics, s.healthSrv}
}

// Run serves HTTP, starts and syncs the caches, runs the controllers while leading and
// shuts everything down when ctx ends or SIGTERM/SIGINT arrives. It returns nil after a
// clean shutdown, ErrLeadershipLost (wrapped) when the Lease was lost, and otherwise the
// error that ended the process.
func (s *Shell) Run(ctx context.Context, app App) error {
	if s.ran.Swap(true) {
		return errors.New("process: Run may be called only once per Shell")
	}
	if app.RunControllers == nil {
		_ = s.closeListeners()
		return errors.New("process: App.RunControllers is required")
	}
	// Serving has not started, so the check list can still change without locking.
	s.health.checks = append(s.health.checks, app.ReadinessChecks...)

	ctx, stopSignals := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stopSignals()
	// Once shutting down, a second signal gets the default behaviour and kills the
	// process, for an operator who will not wait for the drain.
	context.AfterFunc(ctx, stopSignals)

	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)

	var (
		serveMu   sync.Mutex
		serveErrs []error
		serving   sync.WaitGroup
	)
	for _, srv := range s.servers() {
		serving.Go(func() {
			if err := srv.serve(); err != nil {
				serveMu.Lock()
				serveErrs = append(serveErrs, err)
				serveMu.Unlock()
				// Without its probes or metrics the pod cannot be operated: stop.
				cancelRun(err)
			}
		})
	}
	s.logger.Info("process starting",
		"component", s.opts.Component,
		"metricsAddress", s.MetricsAddr().String(),
		"healthAddress", s.HealthAddr().String(),
		"leaderElect", s.opts.LeaderElect,
		"gcPercent", gcPercent(), "memoryLimitBytes", debug.SetMemoryLimit(-1))

	// The lifecycle's context ends only after the process is marked unready, so nothing
	// it runs can see the shutdown before /readyz does.
	lifeCtx, cancelLife := context.WithCancelCause(context.WithoutCancel(runCtx))
	defer cancelLife(nil)
	stopShutdownNotice := context.AfterFunc(runCtx, func() {
		s.logger.Info("shutting down", "cause", context.Cause(runCtx).Error())
		s.beginShutdown()
		cancelLife(context.Cause(runCtx))
	})

	runErr := s.lifecycle(lifeCtx, app)
	stopShutdownNotice()

	deadline := s.beginShutdown()
	shutdownCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	var shutdownErrs []error
	for _, srv := range s.servers() {
		if err := srv.shutdown(shutdownCtx); err != nil {
			shutdownErrs = append(shutdownErrs, err)
		}
	}
	serving.Wait()

	serveMu.Lock()
	err := errors.Join(runErr, errors.Join(serveErrs...), errors.Join(shutdownErrs...))
	serveMu.Unlock()
	if err != nil {
		s.logger.Error("process stopped", "error", err.Error())
		return err
	}
	s.logger.Info("process stopped")
	return nil
}

// beginShutdown marks the process unready and fixes the shutdown deadline the first
// time it is called; the drain and the HTTP shutdown share one budget.
func (s *Shell) beginShutdown() time.Time {
	s.shutdownOnce.Do(func() {
		s.health.shuttingDown.Store(true)
		s.deadline = time.Now().Add(s.opts.ShutdownTimeout)
	})
	return s.deadline
}

// lifecycle starts and syncs the caches, then runs the controllers (as leader or not).
// The caches get their own context, cancelled only once the controllers have drained,
// so controllers never work against stopped informers.
func (s *Shell) lifecycle(ctx context.Context, app App) error {
	cacheCtx, stopCaches := context.WithCancel(context.WithoutCancel(ctx))
	defer stopCaches()
	// Until the controllers start, shutting down just stops the caches.
	stopCachesOnShutdown := context.AfterFunc(ctx, stopCaches)

	if app.StartCaches != nil {
		if err := app.StartCaches(cacheCtx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("starting caches: %w", err)
		}
	}
	s.logger.Info("caches started, waiting for sync")
	if app.WaitForCacheSync != nil && !app.WaitForCacheSync(ctx) {
		if ctx.Err() != nil {
			s.logger.Info("shut down before caches synced")
			return nil
		}
		return errors.New("caches did not sync")
	}
	if !stopCachesOnShutdown() {
		return nil // shutdown began while syncing; the caches are already stopping
	}
	s.health.synced.Store(true)
	s.logger.Info("caches synced, ready")

	if !s.opts.LeaderElect {
		return s.runWithoutElection(ctx, app)
	}
	return s.runElected(ctx, app)
}

// runWithoutElection leads at once: local runs have no Kubernetes to elect with. With
// shards, the binary's App works only the keys of the shards it leases.
func (s *Shell) runWithoutElection(ctx context.Context, app App) error {
	s.logger.Info("leader election disabled, starting controllers", "shards", s.opts.Sharding.Shards, "sharded", s.opts.Sharded())
	s.isLeader.Set(1)
	defer s.isLeader.Set(0)
	done := make(chan error, 1)
	go func() { done <- app.RunControllers(ctx) }()
	select {
	case err := <-done:
		return s.controllersResult(ctx, err)
	case <-ctx.Done():
		return s.drain(ctx, done)
	}
}

// drain waits for the controllers to return after ctx ended, within the shutdown budget.
func (s *Shell) drain(ctx context.Context, done <-chan error) error {
	timer := time.NewTimer(time.Until(s.beginShutdown()))
	defer timer.Stop()
	select {
	case err := <-done:
		return s.controllersResult(ctx, err)
	case <-timer.C:
		return fmt.Errorf("controllers did not stop within --shutdown-timeout %s", s.opts.ShutdownTimeout)
	}
}

// controllersResult turns what RunControllers returned into Run's result: a
// cancellation caused by shutdown is a clean stop, anything else is reported.
func (s *Shell) controllersResult(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("running controllers: %w", err)
	}
	if ctx.Err() == nil {
		s.logger.Warn("controllers returned before shutdown, stopping the process")
	}
	return nil
}
