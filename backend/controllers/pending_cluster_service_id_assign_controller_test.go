package controllers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
)

func TestPendingClusterServiceIDAssign(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cluster *api.Cluster
		// wantAssigned: a pending ID is written, else the cluster is left as it is.
		wantAssigned bool
	}{
		{name: "fresh cluster", cluster: newCluster(t, clusterID("c1")), wantAssigned: true},
		{name: "fresh cluster without serviceProviderProperties", cluster: newCluster(t, clusterID("c1"), func(c *api.Cluster) {
			c.Properties.ServiceProviderProperties = nil
		}), wantAssigned: true},
		{name: "already pending", cluster: newCluster(t, clusterID("c1"), withPending("/api/aro_hcp/v1alpha1/clusters/abcdefghijklmnopqrstuvwxyz012345"))},
		{name: "already created", cluster: newCluster(t, clusterID("c1"), withClusterServiceID("/api/clusters_mgmt/v1/clusters/1243e9e9-d150-4ef1-9735-2bbc3cabc7d0"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.env.NewClusterID = func() string { return fixedCSID }
			rid := controllertest.StoreCluster(t, w.Resources, tt.cluster)
			r := w.reconciler(t, pendingClusterServiceIDAssignDefinition(nil))
			w.Start(t)
			before := controllertest.GetCluster(t, w.Resources, rid)

			res, err := r.Reconcile(rid.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{}, res)

			after := controllertest.GetCluster(t, w.Resources, rid)
			if !tt.wantAssigned {
				assert.Equal(t, before.ETag, after.ETag, "nothing was written")
				return
			}
			assert.Equal(t, fixedHREF, after.Properties.ServiceProvider().PendingClusterServiceID)
			assert.Empty(t, after.Properties.ServiceProvider().ClusterServiceID)
			assert.Equal(t, before.InstanceVersion()+1, after.InstanceVersion())
		})
	}
	t.Run("not gated on placement", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1")))
		controllertest.StoreSPC(t, w.Resources, rid) // spec.managementClusterResourceID is nil
		r := w.reconciler(t, pendingClusterServiceIDAssignDefinition(nil))
		w.Start(t)
		_, err := r.Reconcile(rid.Key())
		require.NoError(t, err)
		assert.NotEmpty(t, controllertest.GetCluster(t, w.Resources, rid).Properties.ServiceProvider().PendingClusterServiceID)
	})
	t.Run("a 412 writes nothing and looks again soon", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.contend()
		rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("c1")))
		r := w.reconciler(t, pendingClusterServiceIDAssignDefinition(nil))
		w.Start(t)

		res, err := r.Reconcile(rid.Key())
		require.NoError(t, err)
		assert.Equal(t, controller.Result{RequeueAfter: DefaultConflictRequeue}, res, "a lost race is a requeue, not an error")
		assert.Empty(t, controllertest.GetCluster(t, w.Resources, rid).Properties.ServiceProvider().PendingClusterServiceID,
			"the write lost the race")
	})
}

func TestPendingClusterServiceIDAssignLeavesDeletingClustersAlone(t *testing.T) {
	t.Parallel()
	leavesDeletingClustersAlone(t, pendingClusterServiceIDAssignDefinition(nil))
}
