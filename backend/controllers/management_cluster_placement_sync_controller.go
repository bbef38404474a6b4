package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// ManagementClusterPlacementSyncName labels the controller's metrics and logs.
const ManagementClusterPlacementSyncName = "ManagementClusterPlacementSync"

// observedPlacementFields is what ManagementClusterPlacementSync writes.
var observedPlacementFields = docwrite.Fields{"properties.status.managementClusterResourceID"}

// managementClusterPlacementSyncDefinition: cluster-keyed, triggered by the cluster and
// SPC informers, waiting DefaultPlacementObservationInterval while Cluster Service has
// not placed the cluster.
func managementClusterPlacementSyncDefinition() controller.Definition[Env] {
	return controller.Definition[Env]{
		Name:       ManagementClusterPlacementSyncName,
		FlagPrefix: "management-cluster-placement-sync",
		Defaults:   defaults(DefaultCreationFlowWorkers, DefaultResyncPeriod, DefaultPlacementObservationInterval),
		Triggers: func(e Env) []controller.Trigger {
			return clusterKeyed(e.Caches.Clusters(), e.Caches.ServiceProviderClusters())
		},
		New: func(e Env, s controller.Settings) (controller.ReconcileFunc, error) {
			r := &managementClusterPlacementSync{
				clusters:     e.Caches.Clusters().Lister(),
				spcs:         e.Caches.ServiceProviderClusters().Lister(),
				mcs:          e.Caches.ManagementClusters().Lister(),
				writer:       e.serviceProviderClusterWriter(),
				cs:           e.ClusterService,
				requeueAfter: s.RequeueAfter,
			}
			if r.requeueAfter <= 0 {
				r.requeueAfter = DefaultPlacementObservationInterval
			}
			return r.reconcile, nil
		},
		Settled: settledUnless(needsPlacementObservation),
	}
}

// managementClusterPlacementSync records where Cluster Service actually put a cluster in
// SPC status.managementClusterResourceID. It is the only writer of that field and never
// touches spec: spec is placement's intent, status is the observation, and a difference
// between them is for metrics and alerts to surface, not for this controller to heal.
type managementClusterPlacementSync struct {
	clusters *informers.Lister[api.ClusterProperties]
	spcs     *informers.Lister[api.ServiceProviderClusterProperties]
	mcs      *informers.Lister[api.ManagementClusterProperties]
	writer   docwrite.Writer[api.ServiceProviderClusterProperties]
	cs       clusterservice.Clusters
	// requeueAfter is the wait while Cluster Service has not placed the cluster.
	requeueAfter time.Duration
}

// needsPlacementObservation: a live cluster that exists in Cluster Service and whose
// SPC has no observed management cluster yet. Once observed, the field is immutable.
func needsPlacementObservation(cluster *api.Cluster, spc *api.ServiceProviderCluster) bool {
	return !api.ClusterDeleting(cluster) && cluster.Properties.ServiceProvider().ClusterServiceID != "" &&
		spc != nil && spc.Properties.ObservedManagementCluster() == ""
}

func (r *managementClusterPlacementSync) reconcile(ctx context.Context, key string) (controller.Result, error) {
	cluster, rid, err := cachedCluster(r.clusters, key)
	if err != nil || cluster == nil {
		return controller.Result{}, err
	}
	spc, err := cachedServiceProviderCluster(r.spcs, rid)
	if err != nil || !needsPlacementObservation(cluster, spc) {
		return controller.Result{}, err
	}
	logger := controller.LoggerFrom(ctx)
	href := cluster.Properties.ServiceProvider().ClusterServiceID
	// A legacy clusters_mgmt reference names the same cluster as its aro_hcp twin.
	csID, _, err := clusterservice.ParseAnyClusterHREF(href)
	if err != nil {
		// Foreign values never become parseable; retrying would only fill the logs.
		logger.Warn("clusterServiceID is not a Cluster Service cluster reference; cannot observe placement", "clusterServiceID", href, "error", err.Error())
		return controller.Result{}, nil
	}

	placement, err := r.cs.GetClusterProvisionShard(ctx, csID)
	if errors.Is(err, clusterservice.ErrNotFound) {
		// Cluster Service does not know the reference (placement records it as
		// unmappable); asking again on a back-off would not change the answer.
		logger.Warn("Cluster Service does not know the cluster's clusterServiceID; cannot observe placement", "clusterServiceID", href)
		return controller.Result{}, nil
	}
	if err != nil {
		return controller.Result{}, fmt.Errorf("reading the cluster's provision shard from Cluster Service: %w", err)
	}
	if !placement.Placed() {
		logger.Info("Cluster Service has not placed the cluster yet", "retryAfter", r.requeueAfter.String())
		return controller.Result{RequeueAfter: r.requeueAfter}, nil
	}
	mc, err := shardOwner(r.mcs, placement.ShardID)
	if err != nil {
		return controller.Result{}, err
	}
	mcRID, err := mc.ParsedResourceID()
	if err != nil {
		return controller.Result{}, fmt.Errorf("management cluster of provision shard %s: %w", placement.ShardID, err)
	}
	mcID := mcRID.String()

	res, err := r.writer.Update(ctx, spc, observedPlacementFields, func(s *api.ServiceProviderCluster) error {
		if s.Properties.Status == nil {
			s.Properties.Status = &api.ServiceProviderClusterStatus{}
		}
		s.Properties.Status.ManagementClusterResourceID = mcID
		return nil
	})
	if err != nil {
		return controller.Result{}, err
	}
	if res.Outcome == docwrite.LostRace {
		return lostRace(ctx, spc.ResourceID), nil
	}
	logger.Info("recorded the management cluster Cluster Service placed the cluster on",
		"managementClusterResourceID", mcID, "provisionShardID", placement.ShardID)
	if spec := spc.Properties.IntendedManagementCluster(); spec != "" && !api.ResourceIDsEqual(spec, mcID) {
		logger.Warn("Cluster Service placed the cluster on another management cluster than placement chose; spec is left as it is",
			"specManagementClusterResourceID", spec, "statusManagementClusterResourceID", mcID)
	}
	return controller.Result{}, nil
}
