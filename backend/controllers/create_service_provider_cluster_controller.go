package controllers

import (
	"context"
	"errors"
	"fmt"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// CreateServiceProviderClusterName labels the controller's metrics and logs.
const CreateServiceProviderClusterName = "CreateServiceProviderCluster"

// createServiceProviderCluster gives every live cluster its ServiceProviderCluster, the
// document placement and placement sync write into.
type createServiceProviderCluster struct {
	clusters  *informers.Lister[api.ClusterProperties]
	spcs      *informers.Informer[api.ServiceProviderClusterProperties]
	resources database.Container
}

func newCreateServiceProviderCluster(d Deps) *createServiceProviderCluster {
	return &createServiceProviderCluster{
		clusters:  d.Informers.Clusters.Lister(),
		spcs:      d.Informers.ServiceProviderClusters,
		resources: d.Resources,
	}
}

// NewCreateServiceProviderCluster builds the controller, triggered by the cluster and
// SPC informers.
func NewCreateServiceProviderCluster(d Deps, s Settings) (*controller.Controller, error) {
	r := newCreateServiceProviderCluster(d)
	return newClusterKeyed(d, CreateServiceProviderClusterName, s, r.reconcile,
		d.Informers.Clusters, d.Informers.ServiceProviderClusters)
}

// needsServiceProviderCluster: a live cluster without an SPC in the cache.
func needsServiceProviderCluster(cluster *api.Cluster, spc *api.ServiceProviderCluster) bool {
	return !deleting(cluster) && spc == nil
}

func (r *createServiceProviderCluster) reconcile(ctx context.Context, key string) (controller.Result, error) {
	cluster, rid, err := cachedCluster(r.clusters, key)
	if err != nil || cluster == nil {
		return controller.Result{}, err
	}
	spc, err := cachedServiceProviderCluster(r.spcs.Lister(), rid)
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
	created, err := database.Create(ctx, r.resources, doc)
	if errors.Is(err, database.ErrConflict) {
		// Created by an earlier attempt or another writer; the cache has not seen it yet.
		logger.Debug("ServiceProviderCluster already exists", "serviceProviderCluster", spcID.String())
		return controller.Result{}, nil
	}
	if err != nil {
		return controller.Result{}, fmt.Errorf("creating ServiceProviderCluster %s: %w", spcID, err)
	}
	// Into this process's cache at once, like every other write: placement and the
	// reservation sweep of this replica must not act on a cluster as if it had no SPC.
	r.spcs.Assume(created)
	logger.Info("created ServiceProviderCluster", "serviceProviderCluster", spcID.String())
	return controller.Result{}, nil
}
