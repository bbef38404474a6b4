package controllers

import (
	"context"
	"fmt"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// PendingClusterServiceIDAssignName labels the controller's metrics and logs.
const PendingClusterServiceIDAssignName = "PendingClusterServiceIDAssign"

// pendingClusterServiceIDAssign pre-assigns the Cluster Service ID a cluster will be
// created under, so that a create retried after a timeout is recognisable as the same
// cluster. It does not wait for placement: the review of the seed PR settled that the ID
// costs nothing and other components may start on it while placement is pending.
type pendingClusterServiceIDAssign struct {
	clusters  *informers.Lister[api.ClusterProperties]
	resources database.Container
	newID     func() string
}

func newPendingClusterServiceIDAssign(d Deps) *pendingClusterServiceIDAssign {
	return &pendingClusterServiceIDAssign{
		clusters:  d.Informers.Clusters.Lister(),
		resources: d.Resources,
		newID:     clusterservice.NewClusterID,
	}
}

// NewPendingClusterServiceIDAssign builds the controller, triggered by the cluster
// informer.
func NewPendingClusterServiceIDAssign(d Deps, s Settings) (*controller.Controller, error) {
	r := newPendingClusterServiceIDAssign(d)
	return newClusterKeyed(d, PendingClusterServiceIDAssignName, s, r.reconcile, d.Informers.Clusters)
}

// needsPendingClusterServiceID: a live cluster with neither a Cluster Service ID nor a
// pending one.
func needsPendingClusterServiceID(cluster *api.Cluster) bool {
	p := cluster.Properties.ServiceProvider()
	return !deleting(cluster) && p.ClusterServiceID == "" && p.PendingClusterServiceID == ""
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

	update := cluster.DeepCopy()
	if update.Properties.ServiceProviderProperties == nil {
		update.Properties.ServiceProviderProperties = &api.ClusterServiceProviderProperties{}
	}
	update.Properties.ServiceProviderProperties.PendingClusterServiceID = href

	written, err := replaceCopy(ctx, r.resources, update)
	if err != nil {
		return controller.Result{}, err
	}
	if written == nil {
		return lostRace, nil
	}
	controller.LoggerFrom(ctx).Info("assigned pending Cluster Service ID", "pendingClusterServiceID", href)
	return controller.Result{}, nil
}
