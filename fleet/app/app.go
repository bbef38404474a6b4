// Package app assembles `fleet controller` from its parts: the informer caches over a
// store and the five management-cluster-keyed controllers. The fleet binary runs it under
// the process shell; the scenario runner runs it in-process next to the backend.
package app

import (
	"errors"
	"fmt"
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
	inf := controllers.NewInformers(factory)
	metrics, err := controller.NewMetrics(cfg.Registerer)
	if err != nil {
		return process.App{}, err
	}
	reporting := controllers.NewCapacityReporting(inf, cfg.Store, cfg.CapacityPollInterval)
	if err := reporting.Register(cfg.Registerer); err != nil {
		return process.App{}, err
	}
	type builder interface {
		Controller(controller.Options) (*controller.Controller, error)
	}
	var running []*controller.Controller
	for _, b := range []struct {
		builder
		name   string
		resync time.Duration
	}{
		{controllers.NewClustersServiceRegistration(inf, cfg.Store, cfg.ClusterService, cfg.Region), controllers.ClustersServiceRegistrationControllerName, cfg.ResyncPeriod},
		{controllers.NewLifecycle(inf, cfg.Store), controllers.LifecycleControllerName, cfg.ResyncPeriod},
		{controllers.NewCapacityReadDesire(inf, cfg.Store), controllers.CapacityReadDesireControllerName, cfg.ResyncPeriod},
		// The two periodic controllers time themselves (see their docs): a resync would
		// only add passes.
		{reporting, controllers.CapacityReportingControllerName, 0},
		{controllers.NewScaleCeiling(inf, cfg.Store, cfg.AgentPools, cfg.VMSizes, cfg.ScaleCeilingInterval), controllers.ScaleCeilingControllerName, 0},
	} {
		c, err := b.Controller(controller.Options{Name: b.name, Workers: cfg.Workers, ResyncPeriod: b.resync, ReconcileTimeout: cfg.ReconcileTimeout, Metrics: metrics, Logger: cfg.Logger})
		if err != nil {
			return process.App{}, fmt.Errorf("building %s: %w", b.name, err)
		}
		running = append(running, c)
	}
	a := controller.NewApp(factory, running)
	// Synced once is not enough: a hung or failing change feed freezes the caches.
	a.ReadinessChecks = append(a.ReadinessChecks, process.ReadinessCheck{Name: informers.FeedReadinessCheck, Check: factory.CheckFeeds})
	return a, nil
}
