package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// ClusterServiceAdoptionName labels the controller's metrics and logs.
const ClusterServiceAdoptionName = "ClusterServiceAdoption"

// adoptionFields is what ClusterServiceAdoption writes: the intent (never a placement
// time: hcpsched did not place the cluster) and the CapacityAvailable condition.
var adoptionFields = docwrite.Fields{"properties.spec.managementClusterResourceID", capacityConditionField}

// clusterServiceAdoptionDefinition: cluster-keyed, triggered by the cluster and SPC
// informers (a clusterServiceID recorded by ClusterServiceCreate's search is a cluster
// event). It waits DefaultPlacementObservationInterval while Cluster Service has the
// cluster but has not placed it, the same wait as ManagementClusterPlacementSync's.
func clusterServiceAdoptionDefinition() controller.Definition[Env] {
	return controller.Definition[Env]{
		Name:       ClusterServiceAdoptionName,
		FlagPrefix: "cluster-service-adoption",
		Defaults:   defaults(DefaultWorkers, DefaultResyncPeriod, DefaultPlacementObservationInterval),
		Triggers: func(e Env) []controller.Trigger {
			return clusterKeyed(e.Caches.Clusters(), e.Caches.ServiceProviderClusters())
		},
		New: func(e Env, s controller.Settings) (controller.ReconcileFunc, error) {
			r := &clusterServiceAdoption{
				clusters:     e.Caches.Clusters().Lister(),
				spcs:         e.Caches.ServiceProviderClusters().Lister(),
				mcs:          e.Caches.ManagementClusters().Lister(),
				writer:       e.serviceProviderClusterWriter(),
				cs:           e.ClusterService,
				requeueAfter: s.RequeueAfter,
				now:          e.now(),
			}
			if r.requeueAfter <= 0 {
				r.requeueAfter = DefaultPlacementObservationInterval
			}
			return r.reconcile, nil
		},
		Settled: settledUnless(needsAdoption),
	}
}

// clusterServiceAdoption gives a cluster that Cluster Service already has (it has a
// clusterServiceID: created by an earlier backend, by ARO-HCP's own controller, or
// adopted by ClusterServiceCreate's search) the intent of where CS put it, so that it is
// never placed afresh. A clusterServiceID CS does not resolve is recorded as unmappable,
// once. Placement leaves every cluster with a clusterServiceID to this controller, so
// placing a new cluster calls no CS (only re-placement asks CS, before it withdraws an
// intent); docs/placement.md says why a pending ID alone is not the signal.
type clusterServiceAdoption struct {
	clusters     *informers.Lister[api.ClusterProperties]
	spcs         *informers.Lister[api.ServiceProviderClusterProperties]
	mcs          *informers.Lister[api.ManagementClusterProperties]
	writer       docwrite.Writer[api.ServiceProviderClusterProperties]
	cs           clusterservice.Clusters
	requeueAfter time.Duration
	now          func() time.Time
}

// needsAdoption: a live cluster with a clusterServiceID whose SPC has no intent yet and
// does not already record that ID as unmappable. A terminal state does not stop it: the
// cluster is in CS, and its intent says where.
func needsAdoption(cluster *api.Cluster, spc *api.ServiceProviderCluster) bool {
	return !api.ClusterDeleting(cluster) && cluster.Properties.ServiceProvider().ClusterServiceID != "" &&
		spc != nil && spc.Properties.IntendedManagementCluster() == "" && !placement.UnmappableRecorded(cluster, spc)
}

func (r *clusterServiceAdoption) reconcile(ctx context.Context, key string) (controller.Result, error) {
	cluster, rid, err := cachedCluster(r.clusters, key)
	if err != nil || cluster == nil {
		return controller.Result{}, err
	}
	spc, err := cachedServiceProviderCluster(r.spcs, rid)
	if err != nil || !needsAdoption(cluster, spc) {
		return controller.Result{}, err
	}
	href := cluster.Properties.ServiceProvider().ClusterServiceID
	// A legacy clusters_mgmt reference names the same cluster as its aro_hcp twin.
	id, _, err := clusterservice.ParseAnyClusterHREF(href)
	if err != nil {
		return r.recordUnmappable(ctx, spc, href)
	}
	where, err := r.cs.GetClusterProvisionShard(ctx, id)
	switch {
	case errors.Is(err, clusterservice.ErrNotFound):
		return r.recordUnmappable(ctx, spc, href)
	case err != nil:
		return controller.Result{}, fmt.Errorf("asking Cluster Service where %s is: %w", id, err)
	}
	return r.adopt(ctx, spc, where)
}

// adopt sets the intent of a cluster CS already placed to the MC that owns its shard.
func (r *clusterServiceAdoption) adopt(ctx context.Context, spc *api.ServiceProviderCluster, where clusterservice.Placement) (controller.Result, error) {
	if !where.Placed() {
		return controller.Result{RequeueAfter: r.requeueAfter}, nil
	}
	owner, err := shardOwner(r.mcs, where.ShardID)
	if err != nil {
		return controller.Result{}, err
	}
	mc := strings.ToLower(owner.ResourceID)
	res, err := r.writer.Update(ctx, spc, adoptionFields, func(s *api.ServiceProviderCluster) error {
		if s.Properties.Spec == nil {
			s.Properties.Spec = &api.ServiceProviderClusterSpec{}
		}
		// No placement time: hcpsched did not place it, and its latency would be fiction.
		s.Properties.Spec.ManagementClusterResourceID = mc
		setCapacityCondition(s, api.ConditionTrue, placement.ConditionReasonAvailable, "adopted from Cluster Service's placement", r.now())
		return nil
	})
	if err != nil {
		return controller.Result{}, err
	}
	if res.Outcome == docwrite.LostRace {
		return lostRace(ctx, spc.ResourceID), nil
	}
	controller.LoggerFrom(ctx).Info("adopted existing placement", "managementCluster", mc)
	return controller.Result{}, nil
}

// recordUnmappable says once, in the SPC condition and the log, that the cluster cannot
// be mapped, and stops: no requeue, since waiting will not change Cluster Service's answer.
// A reservation the cluster holds is released by PendingCleanup on that condition.
func (r *clusterServiceAdoption) recordUnmappable(ctx context.Context, spc *api.ServiceProviderCluster, href string) (controller.Result, error) {
	res, err := r.writer.Update(ctx, spc, capacityConditionFields, func(s *api.ServiceProviderCluster) error {
		setCapacityCondition(s, api.ConditionFalse, placement.ConditionReasonClusterServiceIDUnmappable, placement.UnmappableMessage(href), r.now())
		return nil
	})
	switch {
	case err != nil:
		return controller.Result{}, err
	case res.Outcome == docwrite.LostRace:
		return lostRace(ctx, spc.ResourceID), nil
	case res.Outcome == docwrite.Written:
		controller.LoggerFrom(ctx).Warn("cluster has a Cluster Service ID that does not resolve; leaving it unplaced", "clusterServiceID", href)
	}
	return controller.Result{}, nil
}
