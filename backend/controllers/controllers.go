// Package controllers holds the backend's controllers. Together they are the creation
// flow of a hosted control plane: a new cluster gets its ServiceProviderCluster and a
// pre-assigned Cluster Service ID, is placed on a management cluster (or, when Cluster
// Service already has it, adopted where it is), is created in Cluster Service pinned to
// that management cluster's provision shard, and finally has where Cluster Service
// actually put it recorded.
//
// Every controller is an internal/controller Definition over Env, one per file, reads
// only the informer caches (plus Cluster Service where the flow needs it) and writes
// through internal/database/docwrite: an etag-guarded replace of the fields it owns in
// a copy of the cached document, so each step is idempotent and safe to repeat after a
// crash.
package controllers

import (
	"time"

	"github.com/hcpsched/hcpsched/backend/candidates"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// Defaults of every controller setting, defined once; the backend's flags take them
// from here.
const (
	// DefaultWorkers is how many clusters each controller reconciles in parallel. A
	// reconcile is a few cache reads and at most a couple of Cosmos or Cluster Service
	// calls, so a handful of workers keeps a burst of new clusters moving without
	// flooding Cluster Service.
	DefaultWorkers = 5
	// DefaultCreationFlowWorkers is how many clusters each controller on the path of every
	// new cluster reconciles in parallel: CreateServiceProviderCluster,
	// PendingClusterServiceIDAssign, ClusterServiceCreate and
	// ManagementClusterPlacementSync, the last two waiting on a Cluster Service call. At
	// DefaultWorkers their queues, not placement, set the pace of a burst: in
	// `scenario bench` (2000 clusters on 50 MCs, memory store, 20 placement workers)
	// ClusterServiceCreate's queue wait was 87–136 s per cluster against Placement's 26–50 s,
	// and raising only the two Cluster Service callers to 20 moved the wait to
	// PendingClusterServiceIDAssign (11–50 s to 34–80 s). All four at 20, like placement,
	// settled the burst in 0.28–0.56 of the time (61–74 s against 131–222 s, paired runs),
	// with the same two Cluster Service calls per cluster; the extra reconciles a larger
	// pool makes (ClusterServiceCreate 3.2–5.0 per cluster against 2.7–3.7) call nothing
	// remote. Twenty concurrent Cluster Service requests per controller is well within
	// what one backend asks of it while placing as fast.
	DefaultCreationFlowWorkers = 20
	// DefaultResyncPeriod re-enqueues every cached cluster so that a state an event
	// handler missed is reconciled eventually; the caches themselves are repaired by
	// the informers' relist.
	DefaultResyncPeriod = 5 * time.Minute
	// DefaultPlacementObservationInterval is how long ManagementClusterPlacementSync
	// waits before asking Cluster Service again while it has not placed a cluster. A
	// pinned create is placed at once, so this is a rare wait.
	DefaultPlacementObservationInterval = 15 * time.Second
)

// Env is what the backend's controllers are built from: the caches, the store's
// containers (for the writers and the few point reads), Cluster Service, the placement
// engine's configuration and metrics, and the clock. A definition's New takes from it
// only the listers, writers and clients its reconciler uses.
type Env struct {
	Caches informers.Caches
	// Resources is the container of clusters and ServiceProviderClusters.
	Resources database.Container
	// Fleet is the container of management clusters and their scheduling documents.
	Fleet          database.Container
	ClusterService clusterservice.Clusters
	// Snapshot is the engine's parsed view of the MCs, shared with the metrics, and
	// Waiting the clusters that fit nowhere, woken by its changes; PlacementMetrics
	// counts placement's outcomes (nil: counted on a private registry).
	Snapshot         *candidates.Snapshot
	Waiting          *candidates.WaitingRoom
	PlacementMetrics *PlacementMetrics
	// CreationWaits counts the clusters ClusterServiceCreate waits on, by reason (nil:
	// counted on a private registry).
	CreationWaits *CreationWaits
	// Now is the clock placement stamps and judges report ages by; nil is time.Now.
	Now func() time.Time
	// NewClusterID mints the Cluster Service ID a cluster is pre-assigned; nil is
	// clusterservice.NewClusterID.
	NewClusterID func() string
	// PreferMC, when set, is the MCs (by key) Placement tries first when the best MC
	// overall is not one of them: in leaderless mode, the MCs whose shard this replica
	// owns, so that replicas placing at once mostly reserve on different scheduling
	// documents. nil prefers none.
	PreferMC func(mcKey string) bool
	// KeysMove says a cluster's key may move to another replica and back (leaderless
	// replicas that split the keys): this process then cannot know that no create went
	// out under an ID it minted while another replica owned the cluster, so every create
	// searches Cluster Service first, as ARO-HCP's own controller does.
	KeysMove bool
}

func (e Env) now() func() time.Time {
	if e.Now != nil {
		return e.Now
	}
	return time.Now
}

// The writers of the documents the backend changes: each writes through to the cache
// its readers use, so this process's next decision sees its own write at once.

func (e Env) clusterWriter() docwrite.Writer[api.ClusterProperties] {
	return docwrite.New(e.Resources, e.Caches.Clusters())
}

func (e Env) serviceProviderClusterWriter() docwrite.Writer[api.ServiceProviderClusterProperties] {
	return docwrite.New(e.Resources, e.Caches.ServiceProviderClusters())
}

func (e Env) schedulingWriter() docwrite.Writer[api.ManagementClusterSchedulingProperties] {
	return docwrite.New(e.Fleet, e.Caches.ManagementClusterSchedulings())
}

// Definitions lists the backend's controllers in the order of the flow: the SPC and the
// pending CS ID, adoption of clusters CS already has, placement of the others, the
// pinned CS create, the observed placement, and the sweep of stale reservations.
func Definitions() []controller.Definition[Env] {
	// The IDs the pending-ID controller mints and the create has not sent yet: shared by
	// the two, for the lifetime of the controllers built from this list.
	ids := newUnsentIDs()
	return []controller.Definition[Env]{
		createServiceProviderClusterDefinition(),
		pendingClusterServiceIDAssignDefinition(ids),
		clusterServiceAdoptionDefinition(),
		placementDefinition(),
		clusterServiceCreateDefinition(ids),
		managementClusterPlacementSyncDefinition(),
		pendingCleanupDefinition(),
	}
}

// defaults are the settings of a controller with the given workers, resync period and
// expected wait (0: none), and the framework's reconcile deadline.
func defaults(workers int, resync, requeueAfter time.Duration) controller.Settings {
	return controller.Settings{
		Workers:          workers,
		ResyncPeriod:     resync,
		RequeueAfter:     requeueAfter,
		ReconcileTimeout: controller.DefaultReconcileTimeout,
	}
}

// withEventDelay sets a definition's default event delay (controller.Options.EventDelay).
func withEventDelay(s controller.Settings, delay time.Duration) controller.Settings {
	s.EventDelay = delay
	return s
}

// clusterKeyed triggers a controller keyed by the lowercased cluster resource ID on
// every event of the given informers (an SPC event becomes its cluster's key).
func clusterKeyed(watch ...controller.Informer) []controller.Trigger {
	out := make([]controller.Trigger, len(watch))
	for i, inf := range watch {
		out[i] = controller.Trigger{Informer: inf, KeyFor: controller.KeyForType(api.ClusterResourceType)}
	}
	return out
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
