package controllers

import (
	"context"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// CreateServiceProviderClusterName labels the controller's metrics and logs.
const CreateServiceProviderClusterName = "CreateServiceProviderCluster"

// createServiceProviderClusterDefinition: cluster-keyed, triggered by the cluster and
// SPC informers.
func createServiceProviderClusterDefinition() controller.Definition[Env] {
	return controller.Definition[Env]{
		Name:       CreateServiceProviderClusterName,
		FlagPrefix: "create-service-provider-cluster",
		Defaults:   defaults(DefaultCreationFlowWorkers, DefaultResyncPeriod, 0),
		Triggers: func(e Env) []controller.Trigger {
			return clusterKeyed(e.Caches.Clusters(), e.Caches.ServiceProviderClusters())
		},
		New: func(e Env, _ controller.Settings) (controller.ReconcileFunc, error) {
			r := &createServiceProviderCluster{
				clusters: e.Caches.Clusters().Lister(),
				spcs:     e.Caches.ServiceProviderClusters().Lister(),
				writer:   e.serviceProviderClusterWriter(),
			}
			return r.reconcile, nil
		},
		Settled: settledUnless(needsServiceProviderCluster),
	}
}

// createServiceProviderCluster gives every live cluster its ServiceProviderCluster, the
// document placement and placement sync write into.
type createServiceProviderCluster struct {
	clusters *informers.Lister[api.ClusterProperties]
	spcs     *informers.Lister[api.ServiceProviderClusterProperties]
	writer   docwrite.Writer[api.ServiceProviderClusterProperties]
}

// needsServiceProviderCluster: a live cluster without an SPC in the cache.
func needsServiceProviderCluster(cluster *api.Cluster, spc *api.ServiceProviderCluster) bool {
	return !api.ClusterDeleting(cluster) && spc == nil
}

func (r *createServiceProviderCluster) reconcile(ctx context.Context, key string) (controller.Result, error) {
	cluster, rid, err := cachedCluster(r.clusters, key)
	if err != nil || cluster == nil {
		return controller.Result{}, err
	}
	spc, err := cachedServiceProviderCluster(r.spcs, rid)
	if err != nil || !needsServiceProviderCluster(cluster, spc) {
		return controller.Result{}, err
	}

	spcID := api.ServiceProviderClusterResourceID(rid)
	pk, err := api.ResourcesPartitionKey(rid)
	if err != nil {
		return controller.Result{}, err
	}
	doc := api.NewDocument(spcID, pk, api.ServiceProviderClusterProperties{
		Spec:   &api.ServiceProviderClusterSpec{},
		Status: &api.ServiceProviderClusterStatus{},
	})
	// The registered type, as ARO-HCP writes it, whatever casing the cluster ID has.
	doc.ResourceType = api.ServiceProviderClusterResourceType

	logger := controller.LoggerFrom(ctx)
	// The writer puts the created SPC into this process's cache at once: placement and
	// the reservation sweep of this replica must not act on a cluster as if it had no SPC.
	res, err := r.writer.Create(ctx, doc)
	if err != nil {
		return controller.Result{}, err
	}
	if res.Outcome == docwrite.LostRace {
		// Created by an earlier attempt or another writer; the cache has not seen it yet.
		logger.Debug("ServiceProviderCluster already exists", "serviceProviderCluster", spcID.String())
		return controller.Result{}, nil
	}
	logger.Info("created ServiceProviderCluster", "serviceProviderCluster", spcID.String())
	return controller.Result{}, nil
}
