package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// PendingCleanupName names the controller in metrics and logs.
const PendingCleanupName = "PendingCleanup"

// PendingCleanup defaults.
const (
	DefaultPendingCleanupWorkers = 5
	// DefaultPendingCleanupResyncPeriod sweeps every MC this often; a reservation left
	// by a crash or a lost race holds capacity until then at the latest.
	DefaultPendingCleanupResyncPeriod = 10 * time.Minute
	// DefaultPendingCleanupEventDelay gathers an MC's events: every event of a cluster
	// holding a reservation wakes its MC, whose reconcile judges every reservation the
	// MC holds. In a burst of placements an MC's clusters are written several times a
	// second each, and with events enqueued at once PendingCleanup judged each MC's
	// reservations about five times per placed cluster, the backend's largest single
	// CPU cost after the writes (docs/benchmarks.md). A reservation that should go is
	// dropped within this delay instead of at once: capacity is freed a second later,
	// never handed out twice.
	DefaultPendingCleanupEventDelay = time.Second
)

// reservationFields is what a writer of reservations writes: PendingCleanup drops
// entries, Placement adds its cluster's (or drops it from an MC that vanished).
var reservationFields = docwrite.Fields{"properties.status.pendingAssignedClusters"}

// pendingCleanupDefinition: MC-keyed, woken by scheduling document events, by every
// cluster or SPC event of a cluster an MC holds a reservation for (so a cluster that
// fails or is deleted releases its reservation within the event delay), and by its
// resync.
func pendingCleanupDefinition() controller.Definition[Env] {
	return controller.Definition[Env]{
		Name:       PendingCleanupName,
		FlagPrefix: "pending-cleanup",
		Defaults:   withEventDelay(defaults(DefaultPendingCleanupWorkers, DefaultPendingCleanupResyncPeriod, 0), DefaultPendingCleanupEventDelay),
		Triggers: func(e Env) []controller.Trigger {
			// A cluster or SPC event wakes the MCs whose scheduling documents hold a
			// reservation for that cluster.
			holders := keysThroughIndex(e.Caches.ManagementClusterSchedulings().Lister(), informers.IndexByPendingCluster,
				api.ClusterResourceType, api.ManagementClusterResourceType)
			return []controller.Trigger{
				{Informer: e.Caches.ManagementClusterSchedulings(), KeyFor: controller.KeyForType(api.ManagementClusterResourceType)},
				{Informer: e.Caches.Clusters(), KeyFor: holders},
				{Informer: e.Caches.ServiceProviderClusters(), KeyFor: holders},
			}
		},
		New: func(e Env, _ controller.Settings) (controller.ReconcileFunc, error) {
			p := &pendingCleanupController{
				clusters:    e.Caches.Clusters().Lister(),
				spcs:        e.Caches.ServiceProviderClusters().Lister(),
				schedulings: e.Caches.ManagementClusterSchedulings().Lister(),
				resources:   e.Resources,
				writer:      e.schedulingWriter(),
			}
			return p.reconcile, nil
		},
	}
}

// pendingCleanupController drops reservations that no longer stand for a placement in
// flight. It is keyed by MC.
//
// Dropping a reservation frees capacity that placement may hand to another cluster at
// once, so it is decided only on an authoritative signal (docs/placement.md): the
// cluster ended, its SPC places it elsewhere, or its SPC is confirmed gone by a point
// read. A cache miss is never one: the Resources and Fleet change feeds arrive
// separately, so a replica often sees a reservation before the SPC it was made for.
type pendingCleanupController struct {
	clusters    *informers.Lister[api.ClusterProperties]
	spcs        *informers.Lister[api.ServiceProviderClusterProperties]
	schedulings *informers.Lister[api.ManagementClusterSchedulingProperties]
	// resources is for the point read of an SPC the cache misses.
	resources database.Container
	writer    docwrite.Writer[api.ManagementClusterSchedulingProperties]
}

// Why a reservation is dropped or kept, for logs.
const (
	keepOwn          = "placed here"
	keepInFlight     = "placement in flight"
	keepUnknown      = "cluster not in cache"
	dropEmpty        = "empty entry"
	dropUnparsable   = "not a resource ID"
	dropNoSPC        = "ServiceProviderCluster confirmed gone"
	dropElsewhere    = "placed on another management cluster"
	dropClusterEnded = "cluster deleting or ended"
	dropUnmappable   = "cluster has a Cluster Service ID that does not resolve; hcpsched will not place it"
)

func (p *pendingCleanupController) reconcile(ctx context.Context, key string) (controller.Result, error) {
	mc, err := api.ParseResourceID(key)
	if err != nil {
		return controller.Result{}, nil
	}
	sched, err := p.schedulings.Get(api.SchedulingResourceID(mc).String())
	if errors.Is(err, database.ErrNotFound) {
		return controller.Result{}, nil
	}
	if err != nil {
		return controller.Result{}, err
	}
	st := sched.Properties.Status
	if st == nil || len(st.PendingAssignedClusters) == 0 {
		return controller.Result{}, nil
	}
	logger := controller.LoggerFrom(ctx)
	var keep []string
	for _, entry := range st.PendingAssignedClusters {
		keepIt, why, err := p.judge(ctx, entry, mc)
		if err != nil {
			// Nothing is dropped on a guess: the whole sweep waits for the store.
			return controller.Result{}, fmt.Errorf("judging the reservation for %s: %w", entry, err)
		}
		if keepIt {
			keep = append(keep, entry)
			continue
		}
		logger.Info("dropping reservation", "cluster", entry, "why", why)
	}
	if len(keep) == len(st.PendingAssignedClusters) {
		return controller.Result{}, nil
	}
	res, err := p.writer.Update(ctx, sched, reservationFields, func(s *api.ManagementClusterScheduling) error {
		s.Properties.Status.PendingAssignedClusters = keep
		return nil
	})
	if err != nil {
		return controller.Result{}, err
	}
	if res.Outcome == docwrite.LostRace {
		return lostRace(ctx, sched.ResourceID), nil
	}
	return controller.Result{}, nil
}

// judge applies the rules of docs/placement.md, most final first: a cluster that ended
// releases its reservation wherever it was placed; otherwise the effective placement is
// the SPC's status (where CS put the cluster) or else its spec (placement's intent).
func (p *pendingCleanupController) judge(ctx context.Context, entry string, mc *api.ResourceID) (bool, string, error) {
	if strings.TrimSpace(entry) == "" {
		return false, dropEmpty, nil
	}
	cluster, err := api.ParseResourceID(entry)
	if err != nil {
		return false, dropUnparsable, nil
	}
	// Deleting and Failed only ever follow a live state, so a cached copy that shows
	// them is authoritative: the cache can lag, never run ahead. It needs no SPC read.
	c, err := p.clusters.Get(cluster.String())
	if err != nil {
		c = nil
	}
	if c != nil && (api.ClusterDeleting(c) || api.ClusterEnded(c)) {
		return false, dropClusterEnded, nil
	}
	spc, err := p.serviceProviderCluster(ctx, cluster)
	if err != nil {
		return true, "", err
	}
	keep, why := JudgeReservation(c, spc, mc.String())
	return keep, why, nil
}

// JudgeReservation is PendingCleanup's rule for the reservation on mc of one cluster,
// from what is known of it: cluster is nil when the cache has none, spc nil only when
// confirmed gone (the controller reads the store on a cache miss first). It returns
// whether the reservation stays and why. `hcpsched explain` and `hcpsched clusters` show
// it, so that they say what PendingCleanup will do.
func JudgeReservation(cluster *api.Cluster, spc *api.ServiceProviderCluster, mc string) (keep bool, why string) {
	if cluster != nil && (api.ClusterDeleting(cluster) || api.ClusterEnded(cluster)) {
		return false, dropClusterEnded
	}
	if spc == nil {
		return false, dropNoSPC
	}
	effective := spc.Properties.ObservedManagementCluster()
	if effective == "" {
		effective = spc.Properties.IntendedManagementCluster()
	}
	switch {
	case api.ResourceIDsEqual(effective, mc):
		return true, keepOwn
	case effective != "":
		return false, dropElsewhere
	case cluster != nil && placement.UnmappableRecorded(cluster, spc):
		return false, dropUnmappable
	case cluster == nil:
		return true, keepUnknown
	}
	return true, keepInFlight
}

// serviceProviderCluster returns the cluster's SPC from the cache or, on a miss, from a
// point read: only the store can say that an SPC is gone. nil means confirmed gone
// (not found, or soft-deleted).
func (p *pendingCleanupController) serviceProviderCluster(ctx context.Context, cluster *api.ResourceID) (*api.ServiceProviderCluster, error) {
	id := api.ServiceProviderClusterID(cluster)
	spc, err := p.spcs.Get(id)
	if err == nil {
		return spc, nil
	}
	pk, err := api.ResourcesPartitionKey(cluster)
	if err != nil {
		return nil, err
	}
	spc, err = database.Get[api.ServiceProviderClusterProperties](ctx, p.resources, pk, id)
	switch {
	case errors.Is(err, database.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading ServiceProviderCluster %s, missing from the cache: %w", id, err)
	case spc.IsDeleted():
		return nil, nil
	}
	return spc, nil
}
