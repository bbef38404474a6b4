package controllers

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// Deleting and ended clusters are never placed, nor is one Cluster Service already has
// (it is ClusterServiceAdoption's), and nothing is written for them.
func TestPlacementGates(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*api.Cluster)
		spec   bool
	}{
		{"deleting", func(c *api.Cluster) {
			c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateDeleting
		}, false},
		{"delete requested", func(c *api.Cluster) {
			ts := time.Now().UTC()
			c.Properties.ServiceProviderProperties.DeletionTimestamp = &ts
		}, false},
		{"failed", func(c *api.Cluster) {
			c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateFailed
		}, false},
		{"canceled", func(c *api.Cluster) {
			c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateCanceled
		}, false},
		{"already placed", func(*api.Cluster) {}, true},
		{"has a clusterServiceID", withClusterServiceID(fixedHREF), false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
			controllertest.StoreScheduling(t, w.Fleet, mc, 30, 0)
			rid := clusterID(fmt.Sprintf("Gated%d", i))
			controllertest.StoreCluster(t, w.Resources, newCluster(t, rid, tt.mutate))
			controllertest.StoreSPC(t, w.Resources, rid, func(s *api.ServiceProviderCluster) {
				if tt.spec {
					s.Properties.Spec.ManagementClusterResourceID = mc.String()
				}
			})
			p := w.reconciler(t, placementDefinition())
			w.Start(t)
			w.CS.ResetRequests()
			before := resourcesSnapshot(t, w.Resources)

			res, err := p.Reconcile(rid.Key())
			require.NoError(t, err)
			assert.Zero(t, res.RequeueAfter)
			assert.Equal(t, before, resourcesSnapshot(t, w.Resources), "nothing written")
			assert.Empty(t, getScheduling(t, w.Fleet, mc).Properties.Status.PendingAssignedClusters, "nothing reserved")
			assert.Empty(t, w.CS.Requests(), "Cluster Service is not asked")
		})
	}
}

// A Cluster Service outage does not stop placement: a new cluster (with the pending ID
// PendingClusterServiceIDAssign gives every cluster) is placed from the caches alone.
func TestPlacementDoesNotWaitForClusterService(t *testing.T) {
	w := newWorld(t)
	mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
	controllertest.StoreScheduling(t, w.Fleet, mc, 30, 0)
	rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("DuringOutage"), withPending(fixedHREF)))
	controllertest.StoreSPC(t, w.Resources, rid)
	_, err := w.CS.InjectFault(fakeclusterservice.Fault{Method: http.MethodGet, Status: http.StatusServiceUnavailable})
	require.NoError(t, err)
	w.CS.ResetRequests()
	p := w.reconciler(t, placementDefinition())
	w.Start(t)

	res, err := p.Reconcile(rid.Key())
	require.NoError(t, err, "Cluster Service is not asked")
	assert.Equal(t, controller.Result{}, res)
	assert.Equal(t, mc.String(), controllertest.GetSPC(t, w.Resources, rid).Properties.IntendedManagementCluster())
	assert.Equal(t, []string{rid.Key()}, getScheduling(t, w.Fleet, mc).Properties.Status.PendingAssignedClusters)
	assert.Empty(t, w.CS.Requests(), "placement makes no Cluster Service call")
	assert.Equal(t, 1.0, w.attempts(placement.OutcomePlaced))
}

// A reservation a crash left behind is reused, not doubled.
func TestPlacementReusesReservation(t *testing.T) {
	w := newWorld(t)
	cluster := clusterID("Crashed")
	roomy := controllertest.CreateManagementCluster(t, w.Fleet, "1", "shard-1")
	reserved := controllertest.CreateManagementCluster(t, w.Fleet, "2", "shard-2")
	controllertest.StoreScheduling(t, w.Fleet, roomy, 300, 0)
	controllertest.StoreScheduling(t, w.Fleet, reserved, 30, 0, cluster.Key())
	// The cluster and its SPC were stored before the crash, with the reservation.
	controllertest.StoreCluster(t, w.Resources, newCluster(t, cluster))
	controllertest.StoreSPC(t, w.Resources, cluster)
	p := w.reconciler(t, placementDefinition())
	w.Start(t)

	res, err := p.Reconcile(cluster.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{}, res)
	assert.Equal(t, reserved.String(), controllertest.GetSPC(t, w.Resources, cluster).Properties.IntendedManagementCluster())
	assert.Equal(t, []string{cluster.Key()}, getScheduling(t, w.Fleet, reserved).Properties.Status.PendingAssignedClusters)
	assert.Empty(t, getScheduling(t, w.Fleet, roomy).Properties.Status.PendingAssignedClusters)
}

// Placement reuses a reservation only if the stored scheduling document still holds it:
// the cached copy may show one that was dropped since.
func TestReusedReservationIsCheckedAtApplyTime(t *testing.T) {
	w, blind := newBlindWorld(t)
	mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
	a := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("A")))
	controllertest.StoreSPC(t, w.Resources, a)
	controllertest.StoreScheduling(t, w.Fleet, mc, 3, 0, a.Key())
	p := w.reconciler(t, placementDefinition())
	w.Start(t)
	require.Len(t, w.Caches.ServiceProviderClusters().Lister().List(), 1)
	require.Len(t, w.Caches.ManagementClusterSchedulings().Lister().List(), 1)

	// Another replica drops the reservation; this replica's cache does not see it yet.
	blind.hide(api.CosmosID(api.SchedulingResourceID(mc).String()))
	stored := getScheduling(t, w.Fleet, mc)
	stored.Properties.Status.PendingAssignedClusters = nil
	_, err := database.Replace(t.Context(), w.Fleet, stored)
	require.NoError(t, err)

	res, err := p.Reconcile(a.Key())
	require.NoError(t, err)
	assert.Equal(t, DefaultPlacementConflictRequeue, res.RequeueAfter)
	assert.Empty(t, controllertest.GetSPC(t, w.Resources, a).Properties.IntendedManagementCluster(),
		"not placed on a reservation that no longer stands")
	assert.Equal(t, 1.0, w.attempts(placement.OutcomeConflict))
	assert.Zero(t, w.attempts(placement.OutcomePlaced))
}

// Once Cluster Service has the cluster, spec never changes, even if its MC vanished:
// here CS has it under the pending ID (created, not yet recorded), or it is recorded.
func TestIntentStaysOnceClusterServiceHasTheCluster(t *testing.T) {
	for _, recorded := range []bool{false, true} {
		w := newWorld(t)
		shard := controllertest.RegisterShard(t, w.CSClient, 1)
		gone := controllertest.CreateManagementCluster(t, w.Fleet, "1", "")
		mutate := withPending(fixedHREF)
		if recorded {
			mutate = withClusterServiceID(fixedHREF)
		}
		rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("Created"), mutate))
		createInClusterService(t, w, rid, shard)
		controllertest.StoreSPC(t, w.Resources, rid, withSpec(gone))
		p := w.reconciler(t, placementDefinition())
		w.Start(t)
		before := resourcesSnapshot(t, w.Resources)

		res, err := p.Reconcile(rid.Key())
		require.NoError(t, err)
		assert.Equal(t, controller.Result{}, res)
		assert.Equal(t, before, resourcesSnapshot(t, w.Resources), "spec untouched (recorded=%v)", recorded)
		assert.Zero(t, testutil.ToFloat64(w.env.PlacementMetrics.replacements.WithLabelValues(ReplacementProvisionShardLost)))
	}
}
