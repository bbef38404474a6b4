package controllers

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
)

func TestCreateServiceProviderCluster(t *testing.T) {
	t.Parallel()
	t.Run("a live cluster without one gets an empty SPC", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1")))
		r := w.reconciler(t, createServiceProviderClusterDefinition())
		w.Start(t)

		_, err := r.Reconcile(rid.Key())
		require.NoError(t, err)

		spc := controllertest.GetSPC(t, w.Resources, rid)
		require.NotNil(t, spc)
		assert.Equal(t, api.ServiceProviderClusterID(rid), spc.ResourceID)
		assert.Equal(t, api.ServiceProviderClusterResourceType, spc.ResourceType)
		assert.Equal(t, strings.ToLower(rid.SubscriptionID), spc.PartitionKey)
		assert.Equal(t, api.CosmosID(spc.ResourceID), spc.ID)
		assert.Equal(t, int64(1), spc.InstanceVersion())
		assert.Empty(t, spc.Properties.IntendedManagementCluster())
		assert.Empty(t, spc.Properties.ObservedManagementCluster())
	})
	t.Run("an existing SPC is left as it is", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1")))
		controllertest.StoreSPC(t, w.Resources, rid)
		r := w.reconciler(t, createServiceProviderClusterDefinition())
		w.Start(t)
		before := resourcesSnapshot(t, w.Resources)

		_, err := r.Reconcile(rid.Key())
		require.NoError(t, err)
		assert.Equal(t, before, resourcesSnapshot(t, w.Resources))
	})
	t.Run("a 409 from a create the cache has not seen is success", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.contend()
		rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1")))
		r := w.reconciler(t, createServiceProviderClusterDefinition())
		w.Start(t)

		res, err := r.Reconcile(rid.Key())
		require.NoError(t, err)
		assert.Equal(t, controller.Result{}, res)
		spc := controllertest.GetSPC(t, w.Resources, rid)
		require.NotNil(t, spc)
		_, foreign := spc.Properties.Unknown(foreignWritesKey)
		assert.True(t, foreign, "the other writer's SPC was not overwritten")
	})
}

func TestCreateServiceProviderClusterLeavesDeletingClustersAlone(t *testing.T) {
	t.Parallel()
	leavesDeletingClustersAlone(t, createServiceProviderClusterDefinition())
}

// The SPC that CreateServiceProviderCluster writes is in this process's cache at once,
// as every other write is: the replica that created it never judges it missing.
func TestCreatedSPCIsCachedAtOnce(t *testing.T) {
	w, blind := newBlindWorld(t)
	rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("Fresh")))
	blind.hide(spcItemID(rid))
	r := w.reconciler(t, createServiceProviderClusterDefinition())
	w.Start(t)
	require.Len(t, w.Caches.Clusters().Lister().List(), 1)

	_, err := r.Reconcile(rid.Key())
	require.NoError(t, err)
	cached, err := w.Caches.ServiceProviderClusters().Lister().Get(api.ServiceProviderClusterID(rid))
	require.NoError(t, err, "the created SPC is in the cache without waiting for the change feed")
	assert.Equal(t, controllertest.GetSPC(t, w.Resources, rid).ETag, cached.ETag)
}
