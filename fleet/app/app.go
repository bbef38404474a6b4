// Package app assembles `fleet controller` from its parts: the informer caches over a
// store and the five management-cluster-keyed controllers. The fleet binary runs it under
// the process shell; the scenario runner runs it in-process next to the backend.
package app

import (
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/fleet/agentpools"
	"github.com/hcpsched/hcpsched/fleet/capacity"
	"github.com/hcpsched/hcpsched/fleet/controllers"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/process"
	"github.com/hcpsched/hcpsched/internal/shard"
)

// Config is everything the fleet's controllers are built from.
type Config struct {
	Store          database.Store
	ClusterService clusterservice.ProvisionShards
	AgentPools     agentpools.Source
	VMSizes        capacity.VMSizes
	// Region is where provision shards are created.
	Region       string
	Workers      int
	ResyncPeriod time.Duration
	// ReconcileTimeout bounds each reconcile; 0 is controller.DefaultReconcileTimeout.
	ReconcileTimeout     time.Duration
	CapacityPollInterval time.Duration
	ScaleCeilingInterval time.Duration
	Registerer           prometheus.Registerer
	Logger               *slog.Logger
	Informers            informers.Options
	// Sharding, when set, splits the MC keys with the other replicas by shard leases
	// (leaderless mode). nil works every key.
	Sharding *shard.Config
}

// New builds the fleet's caches and controllers; nothing runs until the returned App's
// functions are called.
func New(cfg Config) (process.App, error) {
	if cfg.Store == nil || cfg.ClusterService == nil || cfg.AgentPools == nil || cfg.Registerer == nil || cfg.Logger == nil {
		return process.App{}, errors.New("fleet: Store, ClusterService, AgentPools, Registerer and Logger are required")
	}
	infOpts := cfg.Informers
	infOpts.Logger, infOpts.Registerer = cfg.Logger, cfg.Registerer
	factory, err := informers.NewFactory(cfg.Store, infOpts)
	if err != nil {
		return process.App{}, err
	}
	metrics, err := controller.NewMetrics(cfg.Registerer)
	if err != nil {
		return process.App{}, err
	}
	env := controllers.Env{
		Store:          cfg.Store,
		Caches:         informers.NewCaches(factory),
		ClusterService: cfg.ClusterService,
		AgentPools:     cfg.AgentPools,
		VMSizes:        cfg.VMSizes,
		Region:         cfg.Region,
		Registerer:     cfg.Registerer,
	}
	rt := controller.Runtime{Metrics: metrics, Logger: cfg.Logger}
	shards, err := process.NewShardManager(cfg.Sharding, cfg.Registerer, cfg.Logger)
	if err != nil {
		return process.App{}, err
	}
	if shards != nil {
		rt.Ownership = shards
	}
	running, err := controller.Build(env, rt, controllers.Definitions(), settings(cfg))
	if err != nil {
		return process.App{}, err
	}
	a := controller.NewApp(factory, running)
	// Synced once is not enough: a hung or failing change feed freezes the caches.
	a.ReadinessChecks = append(a.ReadinessChecks, process.ReadinessCheck{Name: informers.FeedReadinessCheck, Check: factory.CheckFeeds})
	return process.RunSharded(a, shards), nil
}

// settings are the controllers' settings from the fleet's flags: one worker count and
// reconcile timeout for all, the resync period for the controllers that resync, and
// the polling intervals of the two that time themselves.
func settings(cfg Config) map[string]controller.Settings {
	out := map[string]controller.Settings{}
	for _, def := range controllers.Definitions() {
		s := def.Defaults
		s.Workers, s.ReconcileTimeout = cfg.Workers, cfg.ReconcileTimeout
		switch def.Name {
		case controllers.CapacityReportingControllerName:
			s.RequeueAfter = cfg.CapacityPollInterval
		case controllers.ScaleCeilingControllerName:
			s.RequeueAfter = cfg.ScaleCeilingInterval
		default:
			s.ResyncPeriod = cfg.ResyncPeriod
		}
		out[def.Name] = s
	}
	return out
}
