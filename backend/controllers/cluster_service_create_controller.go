package controllers

import (
	"context"
	"errors"
	"fmt"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// ClusterServiceCreateName labels the controller's metrics and logs.
const ClusterServiceCreateName = "ClusterServiceCreate"

// clusterServiceIDFields is what ClusterServiceCreate writes: the created (or adopted)
// ID, and the pending one cleared in the same write.
var clusterServiceIDFields = docwrite.Fields{
	"properties.serviceProviderProperties.clusterServiceID",
	"properties.serviceProviderProperties.pendingClusterServiceID",
}

// clusterServiceCreateDefinition: cluster-keyed, triggered by the cluster and SPC
// informers: the SPC update that records placement is what ends the deferral.
func clusterServiceCreateDefinition() controller.Definition[Env] {
	return controller.Definition[Env]{
		Name:       ClusterServiceCreateName,
		FlagPrefix: "cluster-service-create",
		Defaults:   defaults(DefaultWorkers, DefaultResyncPeriod, 0),
		Triggers: func(e Env) []controller.Trigger {
			return clusterKeyed(e.Caches.Clusters(), e.Caches.ServiceProviderClusters())
		},
		New: func(e Env, _ controller.Settings) (controller.ReconcileFunc, error) {
			r := &clusterServiceCreate{
				clusters: e.Caches.Clusters().Lister(),
				spcs:     e.Caches.ServiceProviderClusters().Lister(),
				mcs:      e.Caches.ManagementClusters().Lister(),
				writer:   e.clusterWriter(),
				cs:       e.ClusterService,
			}
			return r.reconcile, nil
		},
	}
}

// clusterServiceCreate creates the cluster in Cluster Service, pinned to the provision
// shard of the management cluster placement chose. Without the pin Cluster Service
// would pick a shard itself and placement would be mere advice.
type clusterServiceCreate struct {
	clusters *informers.Lister[api.ClusterProperties]
	spcs     *informers.Lister[api.ServiceProviderClusterProperties]
	mcs      *informers.Lister[api.ManagementClusterProperties]
	writer   docwrite.Writer[api.ClusterProperties]
	cs       clusterservice.Clusters
}

// needsClusterServiceCluster: a live cluster, not Failed or Canceled, with a pending
// Cluster Service ID and no Cluster Service ID yet. A terminal state in the cache is
// authoritative (it only ever follows a live one), and a cluster in it has nothing
// left to create.
func needsClusterServiceCluster(cluster *api.Cluster) bool {
	p := cluster.Properties.ServiceProvider()
	return !api.ClusterDeleting(cluster) && !terminal(cluster) && p.PendingClusterServiceID != "" && p.ClusterServiceID == ""
}

func (r *clusterServiceCreate) reconcile(ctx context.Context, key string) (controller.Result, error) {
	cluster, rid, err := cachedCluster(r.clusters, key)
	if err != nil || cluster == nil || !needsClusterServiceCluster(cluster) {
		return controller.Result{}, err
	}
	logger := controller.LoggerFrom(ctx)
	identity, missing := azureIdentity(cluster, rid)
	if len(missing) > 0 {
		// Not an error: the fields are written by other components, and their write is
		// an event that brings the cluster back here.
		logger.Info("waiting for the cluster's Azure identity before creating it in Cluster Service", "missing", missing)
		return controller.Result{}, nil
	}
	pending := cluster.Properties.ServiceProvider().PendingClusterServiceID

	// An earlier attempt may have created the cluster and crashed, or lost a 412, before
	// recording it; adopting what Cluster Service already has makes the create idempotent.
	existing, err := r.cs.SearchClusters(ctx, identity)
	if err != nil {
		return controller.Result{}, fmt.Errorf("searching Cluster Service for the cluster's Azure identity: %w", err)
	}
	if len(existing) > 0 {
		adopted, err := adoptable(existing, pending)
		if err != nil {
			return controller.Result{}, err
		}
		logger.Info("adopting the cluster Cluster Service already has", "clusterServiceClusterID", adopted.ID())
		return r.recordClusterServiceID(ctx, cluster, adopted.ID())
	}

	spc, err := cachedServiceProviderCluster(r.spcs, rid)
	if err != nil {
		return controller.Result{}, err
	}
	if spc == nil || spc.Properties.IntendedManagementCluster() == "" {
		logger.Info("deferring Cluster Service creation until placement is resolved")
		return controller.Result{}, nil
	}
	mcID := spc.Properties.IntendedManagementCluster()
	shardID, err := r.provisionShardOf(mcID)
	if err != nil {
		return controller.Result{}, err
	}
	csID, err := clusterservice.ParseClusterHREF(pending)
	if err != nil {
		return controller.Result{}, fmt.Errorf("pendingClusterServiceID: %w", err)
	}
	body, err := clusterBody(csID, rid.Name(), identity, shardID)
	if err != nil {
		return controller.Result{}, err
	}
	created, err := r.cs.CreatePinnedCluster(ctx, body, shardID)
	if errors.Is(err, clusterservice.ErrConflict) {
		return controller.Result{}, fmt.Errorf("creating the cluster in Cluster Service (an earlier attempt may have created it; the retry adopts it): %w", err)
	}
	if err != nil {
		return controller.Result{}, fmt.Errorf("creating the cluster in Cluster Service: %w", err)
	}
	logger.Info("created the cluster in Cluster Service, pinned to the placed management cluster",
		"clusterServiceClusterID", created.ID(), "provisionShardID", shardID, "managementClusterResourceID", mcID)
	return r.recordClusterServiceID(ctx, cluster, created.ID())
}

// clusterBody is the cluster as POSTed to Cluster Service: its pre-assigned ID, its name,
// the Azure identity the adoption search matches on, and the pin.
func clusterBody(csID, name string, identity clusterservice.AzureIdentity, shardID string) (*arohcp.Cluster, error) {
	body, err := arohcp.NewCluster().
		ID(csID).
		Name(name).
		Azure(arohcp.NewAzure().
			SubscriptionID(identity.SubscriptionID).
			ResourceGroupName(identity.ResourceGroupName).
			ResourceName(identity.ResourceName).
			TenantID(identity.TenantID).
			ManagedResourceGroupName(identity.ManagedResourceGroupName)).
		ProvisionShardID(shardID).
		Build()
	if err != nil {
		return nil, fmt.Errorf("building the Cluster Service cluster %s: %w", csID, err)
	}
	return body, nil
}

// adoptable picks the Cluster Service cluster to adopt: the one created under the
// pending ID if there is one, else the only match. Several foreign matches are left for
// a human: adopting the wrong one would bind the cluster to someone else's.
func adoptable(matches []*arohcp.Cluster, pendingHREF string) (*arohcp.Cluster, error) {
	for _, m := range matches {
		if href, err := clusterservice.ClusterHREF(m.ID()); err == nil && href == pendingHREF {
			return m, nil
		}
	}
	if len(matches) == 1 {
		return matches[0], nil
	}
	ids := make([]string, len(matches))
	for i, m := range matches {
		ids[i] = m.ID()
	}
	return nil, fmt.Errorf("%d Cluster Service clusters match the cluster's Azure identity (%v); refusing to guess which to adopt", len(matches), ids)
}

// provisionShardOf resolves the bare provision shard ID of a management cluster from
// the cache. A missing MC or shard is an error, retried with back-off: placement only
// chooses registered MCs, so either the cache lags or the fleet's data is broken.
func (r *clusterServiceCreate) provisionShardOf(mcID string) (string, error) {
	mc, err := r.mcs.Get(mcID)
	if err != nil {
		return "", fmt.Errorf("management cluster %s chosen by placement: %w", mcID, err)
	}
	href := provisionShard(mc)
	if href == "" {
		return "", fmt.Errorf("management cluster %s has no status.clusterServiceProvisionShardID yet", mcID)
	}
	shardID, err := clusterservice.ParseShardHREF(href)
	if err != nil {
		return "", fmt.Errorf("management cluster %s: %w", mcID, err)
	}
	return shardID, nil
}

// recordClusterServiceID moves the cluster from pending to created: clusterServiceID is
// set and pendingClusterServiceID cleared, in one etag-guarded write.
func (r *clusterServiceCreate) recordClusterServiceID(ctx context.Context, cluster *api.Cluster, csID string) (controller.Result, error) {
	href, err := clusterservice.ClusterHREF(csID)
	if err != nil {
		return controller.Result{}, fmt.Errorf("recording Cluster Service cluster ID %q: %w", csID, err)
	}
	res, err := r.writer.Update(ctx, cluster, clusterServiceIDFields, func(c *api.Cluster) error {
		c.Properties.ServiceProviderProperties.ClusterServiceID = href
		c.Properties.ServiceProviderProperties.PendingClusterServiceID = ""
		return nil
	})
	if err != nil {
		return controller.Result{}, err
	}
	if res.Outcome == docwrite.LostRace {
		return lostRace(ctx, cluster.ResourceID), nil
	}
	controller.LoggerFrom(ctx).Info("recorded Cluster Service ID", "clusterServiceID", href)
	return controller.Result{}, nil
}
