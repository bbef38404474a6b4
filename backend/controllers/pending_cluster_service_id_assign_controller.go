package controllers

import (
	"context"
	"fmt"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// PendingClusterServiceIDAssignName labels the controller's metrics and logs.
const PendingClusterServiceIDAssignName = "PendingClusterServiceIDAssign"

// pendingClusterServiceIDFields is what PendingClusterServiceIDAssign writes.
var pendingClusterServiceIDFields = docwrite.Fields{"properties.serviceProviderProperties.pendingClusterServiceID"}

// pendingClusterServiceIDAssignDefinition: cluster-keyed, triggered by the cluster
// informer. It enters every ID it mints in ids (nil: nowhere), for ClusterServiceCreate.
func pendingClusterServiceIDAssignDefinition(ids *unsentIDs) controller.Definition[Env] {
	return controller.Definition[Env]{
		Name:       PendingClusterServiceIDAssignName,
		FlagPrefix: "pending-cluster-service-id-assign",
		Defaults:   defaults(DefaultCreationFlowWorkers, DefaultResyncPeriod, 0),
		Triggers:   func(e Env) []controller.Trigger { return clusterKeyed(e.Caches.Clusters()) },
		New: func(e Env, _ controller.Settings) (controller.ReconcileFunc, error) {
			r := &pendingClusterServiceIDAssign{
				clusters: e.Caches.Clusters().Lister(),
				writer:   e.clusterWriter(),
				newID:    e.NewClusterID,
				unsent:   ids.unlessKeysMove(e),
			}
			if r.newID == nil {
				r.newID = clusterservice.NewClusterID
			}
			return r.reconcile, nil
		},
		Settled: settledUnless(func(c *api.Cluster, _ *api.ServiceProviderCluster) bool { return needsPendingClusterServiceID(c) }),
	}
}

// pendingClusterServiceIDAssign pre-assigns the Cluster Service ID a cluster will be
// created under, so that a create retried after a timeout is recognisable as the same
// cluster. It does not wait for placement: the review of the seed PR settled that the ID
// costs nothing and other components may start on it while placement is pending.
type pendingClusterServiceIDAssign struct {
	clusters *informers.Lister[api.ClusterProperties]
	writer   docwrite.Writer[api.ClusterProperties]
	newID    func() string
	// unsent learns every ID this controller writes, so that ClusterServiceCreate can
	// create the cluster without searching Cluster Service first.
	unsent *unsentIDs
}

// needsPendingClusterServiceID: a live cluster with neither a Cluster Service ID nor a
// pending one.
func needsPendingClusterServiceID(cluster *api.Cluster) bool {
	p := cluster.Properties.ServiceProvider()
	return !api.ClusterDeleting(cluster) && p.ClusterServiceID == "" && p.PendingClusterServiceID == ""
}

func (r *pendingClusterServiceIDAssign) reconcile(ctx context.Context, key string) (controller.Result, error) {
	cluster, _, err := cachedCluster(r.clusters, key)
	if err != nil || cluster == nil || !needsPendingClusterServiceID(cluster) {
		return controller.Result{}, err
	}
	href, err := clusterservice.ClusterHREF(r.newID())
	if err != nil {
		return controller.Result{}, fmt.Errorf("pre-assigning a Cluster Service ID: %w", err)
	}

	// Entered before the write: the writer puts a written document into the cache at
	// once, and the create that cache event wakes must already know the ID is unsent.
	r.unsent.minting(key, href)
	res, err := r.writer.Update(ctx, cluster, pendingClusterServiceIDFields, func(c *api.Cluster) error {
		if c.Properties.ServiceProviderProperties == nil {
			c.Properties.ServiceProviderProperties = &api.ClusterServiceProviderProperties{}
		}
		c.Properties.ServiceProviderProperties.PendingClusterServiceID = href
		return nil
	})
	if err != nil || res.Outcome != docwrite.Written {
		r.unsent.notWritten(key, href)
	}
	if err != nil {
		return controller.Result{}, err
	}
	if res.Outcome == docwrite.LostRace {
		return lostRace(ctx, cluster.ResourceID), nil
	}
	controller.LoggerFrom(ctx).Info("assigned pending Cluster Service ID", "pendingClusterServiceID", href)
	return controller.Result{}, nil
}
