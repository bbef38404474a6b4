package controllers

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

func TestManagementClusterPlacementSync(t *testing.T) {
	t.Parallel()
	t.Run("waits for the SPC and never overwrites an observed placement", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
		w.CS.ResetRequests()
		noSPC := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("nospc"), withClusterServiceID(fixedHREF)))
		observed := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("observed"), withClusterServiceID(fixedHREF)))
		controllertest.StoreSPC(t, w.Resources, observed, func(s *api.ServiceProviderCluster) {
			s.Properties.Status.ManagementClusterResourceID = mc.String()
		})
		notCreated := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("notcreated"), withPending(fixedHREF)))
		controllertest.StoreSPC(t, w.Resources, notCreated)
		r := w.reconciler(t, managementClusterPlacementSyncDefinition())
		w.Start(t)
		before := resourcesSnapshot(t, w.Resources)

		for _, rid := range []*api.ResourceID{noSPC, observed, notCreated} {
			res, err := r.Reconcile(rid.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{}, res)
		}
		assert.Equal(t, before, resourcesSnapshot(t, w.Resources))
		assert.Empty(t, w.CS.Requests())
	})
	t.Run("a legacy clusterServiceID Cluster Service does not know is left alone", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		legacy, err := api.Decode[api.ClusterProperties](arohcp.Get("hcpcluster-accepted-clusters-mgmt-v1-csid.json"))
		require.NoError(t, err)
		rid := controllertest.StoreCluster(t, w.Resources, legacy)
		controllertest.StoreSPC(t, w.Resources, rid)
		r := w.reconciler(t, managementClusterPlacementSyncDefinition())
		w.Start(t)
		before := resourcesSnapshot(t, w.Resources)

		res, err := r.Reconcile(rid.Key())
		require.NoError(t, err, "retrying cannot help")
		assert.Equal(t, controller.Result{}, res)
		assert.Equal(t, 1, w.csRequests(http.MethodGet, clusterservice.ClustersPath+"/1243e9e9-d150-4ef1-9735-2bbc3cabc7d0"),
			"the clusters_mgmt reference is looked up under the same id through aro_hcp")
		assert.Equal(t, before, resourcesSnapshot(t, w.Resources))
		assert.Contains(t, w.Logs.String(), "Cluster Service does not know the cluster's clusterServiceID")
	})
	// Finding 7: a clusters_mgmt clusterServiceID names the same cluster as its aro_hcp
	// twin, so placement sync observes it through the same mapping adoption uses.
	t.Run("a legacy clusterServiceID Cluster Service knows is observed under the same id", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		shard := controllertest.RegisterShard(t, w.CSClient, 1)
		mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", shard)
		rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("Legacy"),
			withClusterServiceID(clusterservice.LegacyClustersPath+"/"+fixedCSID)))
		createInClusterService(t, w, rid, shard)
		controllertest.StoreSPC(t, w.Resources, rid, withSpec(mc))
		r := w.reconciler(t, managementClusterPlacementSyncDefinition())
		w.Start(t)

		_, err := r.Reconcile(rid.Key())
		require.NoError(t, err)
		assert.True(t, api.ResourceIDsEqual(mc.String(), controllertest.GetSPC(t, w.Resources, rid).Properties.ObservedManagementCluster()))
	})
	t.Run("a foreign clusterServiceID cannot be observed", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1"), withClusterServiceID("/api/somewhere/else/1")))
		controllertest.StoreSPC(t, w.Resources, rid)
		r := w.reconciler(t, managementClusterPlacementSyncDefinition())
		w.Start(t)

		res, err := r.Reconcile(rid.Key())
		require.NoError(t, err, "retrying cannot help")
		assert.Equal(t, controller.Result{}, res)
		assert.Empty(t, w.CS.Requests())
		assert.Contains(t, w.Logs.String(), "not a Cluster Service cluster reference")
	})
	t.Run("a shard no MC is registered as is an error", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		unknownShard := controllertest.RegisterShard(t, w.CSClient, 7)
		controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
		rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1"), withPending(fixedHREF)))
		createInClusterService(t, w, rid, unknownShard)
		c := controllertest.GetCluster(t, w.Resources, rid)
		c.Properties.ServiceProviderProperties.ClusterServiceID = fixedHREF
		c.Properties.ServiceProviderProperties.PendingClusterServiceID = ""
		_, err := database.Replace(t.Context(), w.Resources, c)
		require.NoError(t, err)
		controllertest.StoreSPC(t, w.Resources, rid)
		r := w.reconciler(t, managementClusterPlacementSyncDefinition())
		w.Start(t)
		before := resourcesSnapshot(t, w.Resources)

		_, err = r.Reconcile(rid.Key())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no management cluster is registered as provision shard")
		assert.Equal(t, before, resourcesSnapshot(t, w.Resources))
	})
	t.Run("a cluster CS does not know is logged, not retried", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1"), withClusterServiceID(fixedHREF)))
		controllertest.StoreSPC(t, w.Resources, rid)
		r := w.reconciler(t, managementClusterPlacementSyncDefinition())
		w.Start(t)
		before := resourcesSnapshot(t, w.Resources)

		res, err := r.Reconcile(rid.Key())
		require.NoError(t, err, "Cluster Service's 404 will not change on a back-off")
		assert.Equal(t, controller.Result{}, res)
		assert.Equal(t, before, resourcesSnapshot(t, w.Resources))
		assert.Contains(t, w.Logs.String(), "Cluster Service does not know the cluster's clusterServiceID")
	})
}

func TestManagementClusterPlacementSyncLeavesDeletingClustersAlone(t *testing.T) {
	t.Parallel()
	leavesDeletingClustersAlone(t, managementClusterPlacementSyncDefinition())
}
