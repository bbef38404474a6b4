// Package app assembles the backend from its parts: the informer caches over a store, the
// controllers of the creation flow and the collectors behind its metrics. The backend
// binary runs it under the process shell; the scenario runner runs it in-process over the
// memory store, so that what is measured is what ships.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/backend/candidates"
	"github.com/hcpsched/hcpsched/backend/controllers"
	clustermetrics "github.com/hcpsched/hcpsched/backend/metrics"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
	"github.com/hcpsched/hcpsched/internal/process"
	"github.com/hcpsched/hcpsched/internal/shard"
)

// Config is everything the backend is built from.
type Config struct {
	Store          database.Store
	ClusterService clusterservice.Clusters
	// Registerer receives every metric of the caches, the controllers and the
	// collectors.
	Registerer  prometheus.Registerer
	Logger      *slog.Logger
	Informers   informers.Options
	Placement   placement.Config
	Controllers controllers.Config
	// Sharding, when set, splits the keys with the other replicas by shard leases
	// (leaderless mode): every controller works only the keys of shards this replica
	// holds. nil works every key (leader election, or a lone replica).
	Sharding *shard.Config
}

// New builds the backend's caches and controllers; nothing runs until the returned App's
// functions are called.
func New(cfg Config) (process.App, error) {
	if cfg.Store == nil || cfg.ClusterService == nil || cfg.Registerer == nil || cfg.Logger == nil {
		return process.App{}, errors.New("backend: Store, ClusterService, Registerer and Logger are required")
	}
	infOpts := cfg.Informers
	infOpts.Logger = cfg.Logger.With("component", "informers")
	infOpts.Registerer = cfg.Registerer
	factory, err := informers.NewFactory(cfg.Store, infOpts)
	if err != nil {
		return process.App{}, err
	}
	metrics, err := controller.NewMetrics(cfg.Registerer)
	if err != nil {
		return process.App{}, fmt.Errorf("controller metrics: %w", err)
	}
	placementMetrics, err := controllers.NewPlacementMetrics(cfg.Registerer)
	if err != nil {
		return process.App{}, fmt.Errorf("placement metrics: %w", err)
	}
	creationWaits, err := controllers.NewCreationWaits(cfg.Registerer)
	if err != nil {
		return process.App{}, fmt.Errorf("creation-wait metrics: %w", err)
	}
	caches := informers.NewCaches(factory)
	cfgPlacement := cfg.Placement
	if len(cfgPlacement.Resources) == 0 {
		cfgPlacement = placement.DefaultConfig()
	}
	// One snapshot of the MCs for placement and the metrics: they count alike.
	snapshot, err := candidates.New(caches, cfgPlacement)
	if err != nil {
		return process.App{}, fmt.Errorf("placement: %w", err)
	}
	if err := cfg.Registerer.Register(clustermetrics.NewCollector(caches, snapshot, nil)); err != nil {
		return process.App{}, fmt.Errorf("cluster metrics: %w", err)
	}
	env := controllers.Env{
		Caches:           caches,
		Resources:        cfg.Store.Container(api.ResourcesContainer),
		Fleet:            cfg.Store.Container(api.FleetContainer),
		ClusterService:   cfg.ClusterService,
		Snapshot:         snapshot,
		Waiting:          candidates.NewWaitingRoom(snapshot, time.Now),
		PlacementMetrics: placementMetrics,
		CreationWaits:    creationWaits,
	}
	rt := controller.Runtime{Metrics: metrics, Logger: cfg.Logger}
	shards, err := process.NewShardManager(cfg.Sharding, cfg.Registerer, cfg.Logger)
	if err != nil {
		return process.App{}, err
	}
	if shards != nil {
		rt.Ownership = shards
		env.PreferMC = shards.Owns
		env.KeysMove = true
	}
	ctrls, err := controller.Build(env, rt, controllers.Definitions(), cfg.Controllers.Settings())
	if err != nil {
		return process.App{}, err
	}
	a := controller.NewApp(syncedCaches{Factory: factory, snapshot: snapshot}, ctrls)
	// Synced once is not enough: a hung or failing change feed freezes the caches.
	a.ReadinessChecks = append(a.ReadinessChecks, process.ReadinessCheck{Name: informers.FeedReadinessCheck, Check: factory.CheckFeeds})
	return process.RunSharded(a, shards), nil
}

// syncedCaches are the informers and placement's snapshot of them: synced once the
// snapshot has parsed what the informers first listed, so that no controller decides,
// and /readyz does not pass, on a partial view of the MCs.
type syncedCaches struct {
	*informers.Factory
	snapshot *candidates.Snapshot
}

func (c syncedCaches) WaitForCacheSync(ctx context.Context) bool {
	return c.Factory.WaitForCacheSync(ctx) && cache.WaitForCacheSync(ctx.Done(), c.snapshot.HasSynced)
}
