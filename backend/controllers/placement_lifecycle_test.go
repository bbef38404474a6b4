package controllers

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/backend/controllers/flowtest"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// createInClusterService creates a cluster in the fake CS under fixedCSID on a shard,
// as an earlier backend would have.
func createInClusterService(t *testing.T, e *testEnv, rid *api.ResourceID, shard string) {
	t.Helper()
	identity, _ := azureIdentity(flowtest.GetCluster(t, e.resources, rid), rid)
	body, err := clusterBody(fixedCSID, rid.Name(), identity, shard)
	require.NoError(t, err)
	_, err = e.csClient.CreatePinnedCluster(t.Context(), body, shard)
	require.NoError(t, err)
}

// Finding 7: a clusters_mgmt clusterServiceID names the same cluster as its aro_hcp
// twin, so placement adopts its shard like any cluster CS already has.
func TestLegacyClusterServiceIDIsAdopted(t *testing.T) {
	e := newPlacementEnv(t)
	shard := flowtest.RegisterShard(t, e.csClient, 1)
	mc := flowtest.CreateManagementCluster(t, e.fleet, "1", shard)
	flowtest.StoreScheduling(t, e.fleet, mc, 30, 0)
	rid := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("Legacy"),
		withClusterServiceID(clusterservice.LegacyClustersPath+"/"+fixedCSID)))
	createInClusterService(t, e, rid, shard)
	storeSPC(t, e.resources, rid)
	e.startCaches(t)
	require.Eventually(t, func() bool { return len(e.deps.Informers.ServiceProviderClusters.Lister().List()) == 1 }, waitFor, tick)

	res, err := e.placementReconciler().reconcile(e.reconcileCtx(t, PlacementName), rid.Key())
	require.NoError(t, err)
	assert.Zero(t, res.RequeueAfter)
	assert.Equal(t, mc.Key(), flowtest.GetSPC(t, e.resources, rid).Properties.IntendedManagementCluster(), "adopted from CS's shard")

	// Placement sync observes it through the same mapping.
	e2 := newManagementClusterPlacementSync(e.deps, Settings{})
	require.Eventually(t, func() bool {
		spc, err := e.deps.Informers.ServiceProviderClusters.Lister().Get(api.ServiceProviderClusterResourceID(rid).String())
		return err == nil && spc.Properties.IntendedManagementCluster() != ""
	}, waitFor, tick)
	_, err = e2.reconcile(e.reconcileCtx(t, ManagementClusterPlacementSyncName), rid.Key())
	require.NoError(t, err)
	assert.True(t, api.ResourceIDsEqual(mc.String(), flowtest.GetSPC(t, e.resources, rid).Properties.ObservedManagementCluster()))
}

// Finding 7: a clusterServiceID Cluster Service does not resolve is said once, in the
// SPC condition, and then left alone: no requeue, no further Cluster Service calls.
func TestUnmappableClusterServiceIDIsSaidOnce(t *testing.T) {
	e := newPlacementEnv(t)
	mc := flowtest.CreateManagementCluster(t, e.fleet, "1", flowtest.RegisterShard(t, e.csClient, 1))
	flowtest.StoreScheduling(t, e.fleet, mc, 30, 0)
	legacy, err := api.Decode[api.ClusterProperties](arohcp.Get("hcpcluster-accepted-clusters-mgmt-v1-csid.json"))
	require.NoError(t, err)
	rid := flowtest.StoreCluster(t, e.resources, legacy)
	storeSPC(t, e.resources, rid)
	e.startCaches(t)
	require.Eventually(t, func() bool { return len(e.deps.Informers.ServiceProviderClusters.Lister().List()) == 1 }, waitFor, tick)
	p := e.placementReconciler()

	res, err := p.reconcile(e.reconcileCtx(t, PlacementName), rid.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{}, res, "waiting will not change Cluster Service's answer")
	spc := flowtest.GetSPC(t, e.resources, rid)
	cond := capacityCondition(spc)
	require.NotNil(t, cond)
	assert.Equal(t, ReasonClusterServiceIDUnmappable, cond.Reason)
	assert.Contains(t, cond.Message, legacy.Properties.ServiceProvider().ClusterServiceID)
	assert.Empty(t, spc.Properties.IntendedManagementCluster())
	assert.True(t, UnmappableRecorded(flowtest.GetCluster(t, e.resources, rid), spc), "the metrics count it as unmappable, not backlog")

	require.Eventually(t, func() bool {
		cached, err := e.deps.Informers.ServiceProviderClusters.Lister().Get(api.ServiceProviderClusterResourceID(rid).String())
		return err == nil && cached.ETag == spc.ETag
	}, waitFor, tick)
	e.cs.ResetRequests()
	res, err = p.reconcile(e.reconcileCtx(t, PlacementName), rid.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{}, res)
	assert.Empty(t, e.cs.Requests(), "asked once")
	assert.Equal(t, spc.ETag, flowtest.GetSPC(t, e.resources, rid).ETag, "said once")
	assert.Empty(t, getScheduling(t, e.fleet, mc).Properties.Status.PendingAssignedClusters)
}

// Finding 8: an intended MC that is deleted, or loses its provision shard, before CS has
// the cluster sends the cluster back to placement: its reservation is released, the
// intent withdrawn and counted, and the cluster placed on another MC.
func TestIntentIsWithdrawnWhenTheMCVanishesBeforeCreate(t *testing.T) {
	tests := []struct {
		name   string
		vanish func(t *testing.T, e *testEnv, mc *api.ResourceID)
		reason string
	}{
		{"deleted", func(t *testing.T, e *testEnv, mc *api.ResourceID) {
			pk, err := api.FleetPartitionKey(mc)
			require.NoError(t, err)
			item, err := e.fleet.Get(t.Context(), pk, api.CosmosID(mc.String()))
			require.NoError(t, err)
			_, err = database.SoftDelete(t.Context(), e.fleet, item, time.Now())
			require.NoError(t, err)
		}, ReplacementManagementClusterDeleted},
		{"provision shard lost", func(t *testing.T, e *testEnv, mc *api.ResourceID) {
			pk, err := api.FleetPartitionKey(mc)
			require.NoError(t, err)
			doc, err := database.Get[api.ManagementClusterProperties](t.Context(), e.fleet, pk, mc.String())
			require.NoError(t, err)
			doc.Properties.Status.ClusterServiceProvisionShardID = ""
			_, err = database.Replace(t.Context(), e.fleet, doc)
			require.NoError(t, err)
		}, ReplacementProvisionShardLost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newPlacementEnv(t)
			gone := flowtest.CreateManagementCluster(t, e.fleet, "1", flowtest.RegisterShard(t, e.csClient, 1))
			other := flowtest.CreateManagementCluster(t, e.fleet, "2", flowtest.RegisterShard(t, e.csClient, 2))
			rid := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("Moved"), withPending(fixedHREF)))
			flowtest.StoreScheduling(t, e.fleet, gone, 30, 0, rid.Key())
			flowtest.StoreScheduling(t, e.fleet, other, 30, 0)
			storeSPC(t, e.resources, rid, withSpec(gone))
			// Only placement runs (and no resync): the MC's own event must wake the cluster.
			var defs []Definition
			for _, def := range Definitions() {
				if def.Name == PlacementName {
					defs = append(defs, def)
				}
			}
			e.runDefinitions(t, defs)
			tt.vanish(t, e, gone)

			spc := flowtest.WaitForSPC(t, e.resources, rid, waitFor, "placed again", func(s *api.ServiceProviderCluster) bool {
				return api.ResourceIDsEqual(s.Properties.IntendedManagementCluster(), other.String())
			})
			assert.Equal(t, placement.ConditionReasonAvailable, capacityCondition(spc).Reason)
			assert.Empty(t, getScheduling(t, e.fleet, gone).Properties.Status.PendingAssignedClusters, "released on the vanished MC")
			assert.Equal(t, []string{rid.Key()}, getScheduling(t, e.fleet, other).Properties.Status.PendingAssignedClusters)
			assert.Equal(t, 1.0, testutil.ToFloat64(e.deps.PlacementMetrics.replacements.WithLabelValues(tt.reason)))
		})
	}
}

// Once Cluster Service has the cluster, spec never changes, even if its MC vanished:
// here CS has it under the pending ID (created, not yet recorded), or it is recorded.
func TestIntentStaysOnceClusterServiceHasTheCluster(t *testing.T) {
	for _, recorded := range []bool{false, true} {
		e := newPlacementEnv(t)
		shard := flowtest.RegisterShard(t, e.csClient, 1)
		gone := flowtest.CreateManagementCluster(t, e.fleet, "1", "")
		mutate := withPending(fixedHREF)
		if recorded {
			mutate = withClusterServiceID(fixedHREF)
		}
		rid := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("Created"), mutate))
		createInClusterService(t, e, rid, shard)
		storeSPC(t, e.resources, rid, withSpec(gone))
		e.startCaches(t)
		require.Eventually(t, func() bool { return len(e.deps.Informers.ServiceProviderClusters.Lister().List()) == 1 }, waitFor, tick)
		before := resourcesSnapshot(t, e.resources)

		res, err := e.placementReconciler().reconcile(e.reconcileCtx(t, PlacementName), rid.Key())
		require.NoError(t, err)
		assert.Equal(t, controller.Result{}, res)
		assert.Equal(t, before, resourcesSnapshot(t, e.resources), "spec untouched (recorded=%v)", recorded)
		assert.Zero(t, testutil.ToFloat64(e.deps.PlacementMetrics.replacements.WithLabelValues(ReplacementProvisionShardLost)))
	}
}
