// Package versionsim stands in for ARO-HCP's ControlPlaneDesiredVersion backend
// controller in a local region, as package mcsim stands in for the management clusters.
// In ARO-HCP that controller, which stays on beside hcpsched, writes each
// ServiceProviderCluster's spec.control_plane_version.desired_version, the full version
// Cluster Service creates; hcpsched's ClusterServiceCreate waits for it. The simulator
// is a foreign writer of that one field: it watches the Resources container through
// caches of its own and, for every SPC without a desired version whose cluster exists,
// replaces the whole document under If-Match on the etag it read, as ARO-HCP does, so
// that hcpsched's own SPC writes meet a concurrent writer. It never changes a version
// once set.
package versionsim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// ControllerName is the name ARO-HCP gives the controller the simulator stands in for;
// it labels the simulator's logs.
const ControllerName = "ControlPlaneDesiredVersion"

// Defaults of Config, defined once.
const (
	DefaultWorkers = 2
	// DefaultResyncPeriod looks at every SPC again now and then, as ARO-HCP's controller
	// does every 5 minutes, in case an event was missed.
	DefaultResyncPeriod = time.Minute
	// DefaultConflictRetries bounds the re-reads after a 412 within one reconcile; past
	// it the key goes back to the workqueue's backoff.
	DefaultConflictRetries = 5
	// DefaultLatency is how long the simulator takes to choose a version once it sees an
	// SPC without one; ARO-HCP's controller asks Cincinnati over the network first.
	DefaultLatency = 0
)

// Config wires a Simulator. Zero fields take the defaults above.
type Config struct {
	Store database.Store
	// DefaultMinor is the X.Y of clusters whose customerProperties.version.id is empty;
	// empty means DefaultMinor.
	DefaultMinor string
	// Releases is the z-stream of each X.Y by channel group; nil means DefaultReleases.
	Releases Releases
	// Latency delays each write after the SPC is first seen without a version.
	Latency         time.Duration
	Workers         int
	ResyncPeriod    time.Duration
	ConflictRetries int
	// Informers tunes the simulator's own caches (poll interval and so on).
	Informers informers.Options
	Logger    *slog.Logger
	Now       func() time.Time
}

// Simulator writes the desired control plane version of every SPC that has none.
type Simulator struct {
	cfg Config

	mu sync.Mutex
	// seen is when each cluster (by key) was first found needing a version, for Latency.
	seen map[string]time.Time

	clusters *informers.Lister[api.ClusterProperties]
	spcs     *informers.Lister[api.ServiceProviderClusterProperties]
}

// New checks cfg and fills in its defaults.
func New(cfg Config) (*Simulator, error) {
	if cfg.Store == nil {
		return nil, errors.New("versionsim: a store is required")
	}
	if cfg.DefaultMinor == "" {
		cfg.DefaultMinor = DefaultMinor
	}
	minor, err := MinorOf(cfg.DefaultMinor)
	if err != nil {
		return nil, fmt.Errorf("versionsim: default version: %w", err)
	}
	cfg.DefaultMinor = minor
	if cfg.Releases == nil {
		cfg.Releases = DefaultReleases()
	}
	cfg.Releases = cfg.Releases.clone()
	if cfg.Latency < 0 {
		return nil, fmt.Errorf("versionsim: latency must not be negative, got %s", cfg.Latency)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.ResyncPeriod <= 0 {
		cfg.ResyncPeriod = DefaultResyncPeriod
	}
	if cfg.ConflictRetries <= 0 {
		cfg.ConflictRetries = DefaultConflictRetries
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Simulator{cfg: cfg, seen: map[string]time.Time{}}, nil
}

// Run fills the simulator's caches from the store and writes versions until ctx ends.
// It returns once its caches have stopped, so nothing of it logs after.
func (s *Simulator) Run(ctx context.Context) error {
	reg := prometheus.NewRegistry()
	opts := s.cfg.Informers
	if opts.Logger == nil {
		opts.Logger = s.cfg.Logger
	}
	opts.Registerer = reg
	// The simulator stands for an ARO-HCP writer, which replaces whole documents. Its
	// caches keep the declared fields only, which is enough to decide; the document it
	// replaces is read whole at the moment it writes (see write). Caching every field of
	// every cluster and SPC decoded each of their changes whole, which cost the region
	// more CPU than any controller of hcpsched.
	opts.Documents = informers.LeanDocuments
	f, err := informers.NewFactory(s.cfg.Store, opts)
	if err != nil {
		return fmt.Errorf("versionsim: %w", err)
	}
	caches := informers.NewCaches(f)
	clusters, spcs := caches.Clusters(), caches.ServiceProviderClusters()
	s.clusters, s.spcs = clusters.Lister(), spcs.Lister()
	metrics, err := controller.NewMetrics(reg)
	if err != nil {
		return fmt.Errorf("versionsim: %w", err)
	}
	c, err := controller.New(controller.Options{
		Name: ControllerName, Workers: s.cfg.Workers, ResyncPeriod: s.cfg.ResyncPeriod,
		Metrics: metrics, Logger: s.cfg.Logger,
	}, s.reconcile)
	if err != nil {
		return fmt.Errorf("versionsim: %w", err)
	}
	// Cluster-keyed, as upstream: an SPC waits for its cluster, and either may come first.
	for _, inf := range []controller.Informer{clusters, spcs} {
		if err := c.Watch(inf, controller.KeyForType(api.ClusterResourceType)); err != nil {
			return fmt.Errorf("versionsim: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		f.Shutdown()
	}()
	f.Start(ctx)
	if !f.WaitForCacheSync(ctx) {
		if ctx.Err() != nil {
			return nil
		}
		return errors.New("versionsim: the caches did not sync")
	}
	s.cfg.Logger.Info("caches synced; writing desired control plane versions",
		"defaultMinor", s.cfg.DefaultMinor, "latency", s.cfg.Latency.String())
	return c.Run(ctx)
}

// reconcile writes the desired version of one cluster's SPC if it has none yet.
func (s *Simulator) reconcile(ctx context.Context, key string) (controller.Result, error) {
	logger := controller.LoggerFrom(ctx)
	clusterID, err := api.ParseResourceID(key)
	if err != nil {
		return controller.Result{}, nil
	}
	spc, err := s.spcs.Get(api.ServiceProviderClusterID(clusterID))
	if errors.Is(err, database.ErrNotFound) {
		// hcpsched's CreateServiceProviderCluster has not written it yet; its add event
		// brings the key back.
		s.forget(key)
		return controller.Result{}, nil
	}
	if err != nil {
		return controller.Result{}, err
	}
	if v := spc.Properties.DesiredControlPlaneVersion(); v != "" {
		logger.Debug("the SPC has a desired control plane version", "desiredVersion", v)
		s.forget(key)
		return controller.Result{}, nil
	}
	cluster, err := s.clusters.Get(key)
	if errors.Is(err, database.ErrNotFound) {
		// As upstream, nothing is chosen for an SPC whose cluster is gone or not yet seen;
		// the cluster's add event brings the key back.
		logger.Debug("no cluster document for the SPC")
		s.forget(key)
		return controller.Result{}, nil
	}
	if err != nil {
		return controller.Result{}, err
	}
	if api.ClusterDeleting(cluster) {
		s.forget(key)
		return controller.Result{}, nil
	}
	version, err := DesiredVersion(cluster, s.cfg.DefaultMinor, s.cfg.Releases)
	if err != nil {
		// Upstream records IntentFailed and waits for the cluster to change.
		logger.Warn("no desired control plane version for the cluster", "reason", err.Error())
		return controller.Result{}, nil
	}
	if wait := s.latencyLeft(key); wait > 0 {
		return controller.Result{RequeueAfter: wait}, nil
	}
	if err := s.write(ctx, logger, spc, version); err != nil {
		return controller.Result{}, err
	}
	s.forget(key)
	return controller.Result{}, nil
}

// write reads the SPC whole, sets the desired version on it and replaces it under
// If-Match on its etag. After a 412 it reads the SPC again and, if it still has no
// version, tries again: the other writer's change is kept because the retry starts from
// what it wrote. cached is the lean cached copy the decision was made on.
func (s *Simulator) write(ctx context.Context, logger *slog.Logger, cached *api.ServiceProviderCluster, version string) error {
	resources := s.cfg.Store.Container(api.ResourcesContainer)
	pk, id := cached.PartitionKey, cached.ResourceID
	for attempt := 1; ; attempt++ {
		doc, err := database.Get[api.ServiceProviderClusterProperties](ctx, resources, pk, id)
		if errors.Is(err, database.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s to write its desired version: %w", id, err)
		}
		if doc.IsDeleted() {
			return nil
		}
		if v := doc.Properties.DesiredControlPlaneVersion(); v != "" {
			logger.Info("another writer set the desired control plane version first", "desiredVersion", v)
			return nil
		}
		SetDesiredVersion(doc, version)
		_, err = database.Replace(ctx, resources, doc)
		if err == nil {
			logger.Info("desired control plane version written", "desiredVersion", version, "attempts", attempt)
			return nil
		}
		if !errors.Is(err, database.ErrPreconditionFailed) {
			return fmt.Errorf("writing the desired version of %s: %w", id, err)
		}
		if attempt >= s.cfg.ConflictRetries {
			return fmt.Errorf("writing the desired version of %s: still changing under the write after %d attempts: %w", id, attempt, err)
		}
		logger.Debug("the SPC changed under the write; reading it again", "attempt", attempt)
	}
}

// SetDesiredVersion sets spec.control_plane_version.desired_version and nothing else.
func SetDesiredVersion(doc *api.ServiceProviderCluster, version string) {
	if doc.Properties.Spec == nil {
		doc.Properties.Spec = &api.ServiceProviderClusterSpec{}
	}
	if doc.Properties.Spec.ControlPlaneVersion == nil {
		doc.Properties.Spec.ControlPlaneVersion = &api.ControlPlaneVersionSpec{}
	}
	doc.Properties.Spec.ControlPlaneVersion.DesiredVersion = version
}

// latencyLeft is how much of Latency is left for key, starting the clock on first sight.
func (s *Simulator) latencyLeft(key string) time.Duration {
	if s.cfg.Latency <= 0 {
		return 0
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	first, ok := s.seen[key]
	if !ok {
		first = now
		s.seen[key] = now
	}
	return first.Add(s.cfg.Latency).Sub(now)
}

func (s *Simulator) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.seen, key)
}
