package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/backend/candidates"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/process"
)

// deps are what the command reaches outside itself; tests replace them.
type deps struct {
	// openStore connects to Cosmos DB; nil opens cfg with cosmos.Open.
	openStore func(cfg cosmos.Config) (database.Store, error)
	now       func() time.Time
	lookupEnv process.LookupEnvFunc
}

func (d deps) withDefaults() deps {
	if d.openStore == nil {
		d.openStore = func(cfg cosmos.Config) (database.Store, error) {
			return cosmos.Open(cfg, prometheus.NewRegistry())
		}
	}
	if d.now == nil {
		d.now = time.Now
	}
	return d
}

// region is every document placement reads, cached and parsed exactly as the backend
// caches and parses them, at one moment.
type region struct {
	store    database.Store
	caches   informers.Caches
	snapshot *candidates.Snapshot
	now      time.Time
}

// store connects to the configured database and checks, with one point read, that the
// endpoint, the credential and the database answer: a change feed that cannot be read
// would otherwise only show as a timeout.
func (c *command) store(ctx context.Context) (database.Store, error) {
	store, err := c.deps.openStore(c.globals.cosmos)
	if err != nil {
		return nil, fmt.Errorf("opening Cosmos DB %s: %w", c.globals.cosmos.Endpoint, err)
	}
	probe := api.ManagementClusterResourceID("hcpsched-connectivity-probe").String()
	_, err = database.Get[api.ManagementClusterProperties](ctx, store.Container(api.FleetContainer), "hcpsched-connectivity-probe", probe)
	if err != nil && !errors.Is(err, database.ErrNotFound) {
		return nil, fmt.Errorf("reading database %q at %s: %w", c.globals.cosmos.Database, c.globals.cosmos.Endpoint, err)
	}
	return store, nil
}

// loadRegion lists the Resources and Fleet containers into the backend's caches and
// waits until placement's snapshot has parsed every MC. The caches stop with ctx, or
// when the command stops, which waits for them.
func (c *command) loadRegion(ctx context.Context) (*region, error) {
	store, err := c.store(ctx)
	if err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	factory, err := informers.NewFactory(store, informers.Options{Logger: logger, Registerer: prometheus.NewRegistry()})
	if err != nil {
		return nil, err
	}
	caches := informers.NewCaches(factory)
	snapshot, err := candidates.New(caches, c.globals.placement)
	if err != nil {
		return nil, err
	}
	// Registered before Start: the verbs read SPCs too.
	caches.ServiceProviderClusters()
	ctx, cancel := context.WithCancel(ctx)
	c.stops = append(c.stops, func() {
		cancel()
		factory.Shutdown()
	})
	factory.Start(ctx)
	if !factory.WaitForCacheSync(ctx) || !cache.WaitForCacheSync(ctx.Done(), snapshot.HasSynced) {
		return nil, fmt.Errorf("listing the region's documents did not finish within --timeout %s: %w", c.globals.timeout, context.Cause(ctx))
	}
	return &region{store: store, caches: caches, snapshot: snapshot, now: c.deps.now()}, nil
}
