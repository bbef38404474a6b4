// Package controllers holds the backend's cluster-keyed controllers. Together they are
// the creation flow of a hosted control plane: a new cluster gets its
// ServiceProviderCluster and a pre-assigned Cluster Service ID, is created in Cluster
// Service pinned to the provision shard of the management cluster placement chose, and
// finally has where Cluster Service actually put it recorded.
//
// Every controller runs on internal/controller, reads only the informer caches (plus
// Cluster Service where the flow needs it) and writes etag-guarded replaces of a copy of
// the cached document, so each step is idempotent and safe to repeat after a crash.
package controllers

import (
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// Defaults of every controller setting, defined once; the backend's flags take them
// from here.
const (
	// DefaultWorkers is how many clusters each controller reconciles in parallel. A
	// reconcile is a few cache reads and at most a couple of Cosmos or Cluster Service
	// calls, so a handful of workers keeps a burst of new clusters moving without
	// flooding Cluster Service.
	DefaultWorkers = 5
	// DefaultResyncPeriod re-enqueues every cached cluster so that a state an event
	// handler missed is reconciled eventually; the caches themselves are repaired by
	// the informers' relist.
	DefaultResyncPeriod = 5 * time.Minute
	// DefaultPlacementObservationInterval is how long ManagementClusterPlacementSync
	// waits before asking Cluster Service again while it has not placed a cluster. A
	// pinned create is placed at once, so this is a rare wait.
	DefaultPlacementObservationInterval = 15 * time.Second
)

// Settings tune one controller.
type Settings struct {
	Workers      int
	ResyncPeriod time.Duration
	// RequeueAfter is how long an expected wait lasts before the controller looks
	// again. Only controllers with such a wait have a default for it.
	RequeueAfter time.Duration
	// ReconcileTimeout bounds each reconcile (see controller.Options); 0 is the
	// framework's default.
	ReconcileTimeout time.Duration
}

// Informers are the caches the backend's controllers share.
type Informers struct {
	Clusters                     *informers.Informer[api.ClusterProperties]
	ServiceProviderClusters      *informers.Informer[api.ServiceProviderClusterProperties]
	ManagementClusters           *informers.Informer[api.ManagementClusterProperties]
	ManagementClusterSchedulings *informers.Informer[api.ManagementClusterSchedulingProperties]
}

// NewInformers registers the backend's informers on f; call it before f.Start.
func NewInformers(f *informers.Factory) Informers {
	return Informers{
		Clusters:                     informers.Clusters(f),
		ServiceProviderClusters:      informers.ServiceProviderClusters(f),
		ManagementClusters:           informers.ManagementClusters(f),
		ManagementClusterSchedulings: informers.ManagementClusterSchedulings(f),
	}
}

// Deps is what every controller is built from.
type Deps struct {
	// Resources is the container of clusters and ServiceProviderClusters.
	Resources database.Container
	// Fleet is the container of management clusters and their scheduling documents.
	Fleet          database.Container
	Informers      Informers
	ClusterService clusterservice.Clusters
	Metrics        *controller.Metrics
	Logger         *slog.Logger
	// RateLimiter, when set, builds each controller's retry rate limiter (tests
	// shorten the back-off); nil keeps the framework's default.
	RateLimiter func() workqueue.TypedRateLimiter[string]
	// Placement configures the placement engine; PlacementMetrics counts its outcomes
	// (nil: counted on a private registry).
	Placement        placement.Config
	PlacementMetrics *PlacementMetrics
	// Now is the clock placement stamps and judges report ages by; nil is time.Now.
	Now func() time.Time
}

func (d Deps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// Definition names one controller of the backend and says how to build it.
type Definition struct {
	// Name labels the controller's metrics and logs.
	Name string
	// FlagPrefix starts the controller's flags: --<prefix>-workers and so on.
	FlagPrefix string
	Defaults   Settings
	New        func(Deps, Settings) (*controller.Controller, error)
}

// Definitions lists the backend's controllers in the order of the flow: the SPC and the
// pending CS ID, placement, the pinned CS create, the observed placement, and the sweep
// of stale reservations.
func Definitions() []Definition {
	return []Definition{
		{
			Name:       CreateServiceProviderClusterName,
			FlagPrefix: "create-service-provider-cluster",
			Defaults:   Settings{Workers: DefaultWorkers, ResyncPeriod: DefaultResyncPeriod, ReconcileTimeout: controller.DefaultReconcileTimeout},
			New:        NewCreateServiceProviderCluster,
		},
		{
			Name:       PendingClusterServiceIDAssignName,
			FlagPrefix: "pending-cluster-service-id-assign",
			Defaults:   Settings{Workers: DefaultWorkers, ResyncPeriod: DefaultResyncPeriod, ReconcileTimeout: controller.DefaultReconcileTimeout},
			New:        NewPendingClusterServiceIDAssign,
		},
		{
			Name:       PlacementName,
			FlagPrefix: "placement",
			Defaults: Settings{
				Workers:          DefaultPlacementWorkers,
				ResyncPeriod:     DefaultResyncPeriod,
				RequeueAfter:     DefaultPlacementRequeueAfter,
				ReconcileTimeout: controller.DefaultReconcileTimeout,
			},
			New: NewPlacement,
		},
		{
			Name:       ClusterServiceCreateName,
			FlagPrefix: "cluster-service-create",
			Defaults:   Settings{Workers: DefaultWorkers, ResyncPeriod: DefaultResyncPeriod, ReconcileTimeout: controller.DefaultReconcileTimeout},
			New:        NewClusterServiceCreate,
		},
		{
			Name:       ManagementClusterPlacementSyncName,
			FlagPrefix: "management-cluster-placement-sync",
			Defaults: Settings{
				Workers:          DefaultWorkers,
				ResyncPeriod:     DefaultResyncPeriod,
				RequeueAfter:     DefaultPlacementObservationInterval,
				ReconcileTimeout: controller.DefaultReconcileTimeout,
			},
			New: NewManagementClusterPlacementSync,
		},
		{
			Name:       PendingCleanupName,
			FlagPrefix: "pending-cleanup",
			Defaults:   Settings{Workers: DefaultPendingCleanupWorkers, ResyncPeriod: DefaultPendingCleanupResyncPeriod, ReconcileTimeout: controller.DefaultReconcileTimeout},
			New:        NewPendingCleanup,
		},
	}
}

// Build builds every definition with its settings (a definition without an entry in
// cfg gets its defaults). Build before the informers start: controllers register their
// event handlers here.
func Build(d Deps, defs []Definition, cfg Config) ([]*controller.Controller, error) {
	out := make([]*controller.Controller, 0, len(defs))
	for _, def := range defs {
		s := def.Defaults
		if c := cfg[def.Name]; c != nil {
			s = *c
		}
		c, err := def.New(d, s)
		if err != nil {
			return nil, fmt.Errorf("building controller %s: %w", def.Name, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// newClusterKeyed builds a controller keyed by the lowercased cluster resource ID,
// enqueued by every event of the given informers (an SPC event becomes its cluster's
// key).
func newClusterKeyed(d Deps, name string, s Settings, reconcile controller.ReconcileFunc, watch ...controller.Informer) (*controller.Controller, error) {
	return newKeyed(d, name, s, api.ClusterResourceType, reconcile, watch...)
}

// newKeyed builds a controller keyed by the lowercased resource ID of keyType, enqueued
// by every event of the given informers through the object's ancestor of that type.
func newKeyed(d Deps, name string, s Settings, keyType string, reconcile controller.ReconcileFunc, watch ...controller.Informer) (*controller.Controller, error) {
	opts := controller.Options{
		Name:             name,
		Workers:          s.Workers,
		ResyncPeriod:     s.ResyncPeriod,
		ReconcileTimeout: s.ReconcileTimeout,
		Metrics:          d.Metrics,
		Logger:           d.Logger,
	}
	if d.RateLimiter != nil {
		opts.RateLimiter = d.RateLimiter()
	}
	c, err := controller.New(opts, reconcile)
	if err != nil {
		return nil, err
	}
	for _, inf := range watch {
		if err := c.Watch(inf, controller.KeyForType(keyType)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// keysThroughIndex maps an event's object to keys through another cache: the object's
// ancestor of fromType is looked up in lister's index, and each document found gives its
// ancestor of keyType. An SPC event becomes the MCs holding its cluster's reservation, an
// MC event the clusters whose intent names it.
func keysThroughIndex[P any](lister *informers.Lister[P], index, fromType, keyType string) controller.KeyFunc {
	from := controller.KeyForType(fromType)
	to := controller.KeyForType(keyType)
	return func(obj any) []string {
		var keys []string
		for _, k := range from(obj) {
			docs, err := lister.ByIndex(index, k)
			if err != nil {
				continue
			}
			for _, doc := range docs {
				keys = append(keys, to(&informers.Object[P]{Doc: doc})...)
			}
		}
		return keys
	}
}
