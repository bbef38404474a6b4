package controllers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// A cluster with a clusterServiceID is adopted where Cluster Service put it, never placed
// afresh; anything else is not adoption's.
func TestClusterServiceAdoption(t *testing.T) {
	t.Parallel()
	unplaced := `{"kind":"ProvisionShard"}`
	tests := []struct {
		name    string
		cluster func(*api.Cluster)
		spec    bool
		// inCS creates the cluster in CS, on the owner's shard, under fixedCSID.
		inCS  bool
		fault *fakeclusterservice.Fault
		// wantAdopted: the intent is the owner; wantUnmappable: the ID is recorded as
		// unmappable; neither: nothing is written.
		wantAdopted, wantUnmappable bool
		wantResult                  controller.Result
		wantErr                     string
		wantCSCalls                 bool
	}{
		{name: "clusterServiceID Cluster Service knows", cluster: withClusterServiceID(fixedHREF), inCS: true, wantAdopted: true, wantCSCalls: true},
		{name: "ended, with a clusterServiceID Cluster Service knows", cluster: func(c *api.Cluster) {
			withClusterServiceID(fixedHREF)(c)
			c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateFailed
		}, inCS: true, wantAdopted: true, wantCSCalls: true},
		{
			name: "Cluster Service has not placed it yet", cluster: withClusterServiceID(fixedHREF), inCS: true,
			fault:      &fakeclusterservice.Fault{Method: http.MethodGet, PathPrefix: clusterservice.ClustersPath + "/", Status: http.StatusOK, Body: &unplaced},
			wantResult: controller.Result{RequeueAfter: testRequeueAfter}, wantCSCalls: true,
		},
		{
			name: "Cluster Service is down", cluster: withClusterServiceID(fixedHREF), inCS: true,
			fault:   &fakeclusterservice.Fault{Method: http.MethodGet, Status: http.StatusServiceUnavailable},
			wantErr: "asking Cluster Service where " + fixedCSID + " is", wantCSCalls: true,
		},
		{name: "clusterServiceID Cluster Service does not know", cluster: withClusterServiceID(fixedHREF), wantUnmappable: true, wantCSCalls: true},
		{name: "not a Cluster Service reference", cluster: withClusterServiceID("/api/somewhere/else/1"), wantUnmappable: true},
		{name: "a pending ID only", cluster: withPending(fixedHREF), inCS: true},
		{name: "intent already set", cluster: withClusterServiceID(fixedHREF), inCS: true, spec: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			ownerShard := controllertest.RegisterShard(t, w.CSClient, 1)
			owner := controllertest.CreateManagementCluster(t, w.Fleet, "1", ownerShard)
			controllertest.StoreScheduling(t, w.Fleet, owner, 30, 0)
			other := controllertest.CreateManagementCluster(t, w.Fleet, "2", controllertest.RegisterShard(t, w.CSClient, 2))
			rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("Old"), tt.cluster))
			if tt.inCS {
				createInClusterService(t, w, rid, ownerShard)
			}
			controllertest.StoreSPC(t, w.Resources, rid, func(s *api.ServiceProviderCluster) {
				if tt.spec {
					withSpec(other)(s)
				}
			})
			if tt.fault != nil {
				_, err := w.CS.InjectFault(*tt.fault)
				require.NoError(t, err)
			}
			w.CS.ResetRequests()
			r := w.reconciler(t, clusterServiceAdoptionDefinition())
			w.Start(t)
			before := resourcesSnapshot(t, w.Resources)

			res, err := r.Reconcile(rid.Key())
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tt.wantResult, res)
			}
			assert.Equal(t, tt.wantCSCalls, len(w.CS.Requests()) > 0, "Cluster Service calls")
			assert.Empty(t, getScheduling(t, w.Fleet, owner).Properties.Status.PendingAssignedClusters, "adoption reserves nothing")
			spc := controllertest.GetSPC(t, w.Resources, rid)
			switch {
			case tt.wantAdopted:
				assert.Equal(t, strings.ToLower(owner.String()), spc.Properties.Spec.ManagementClusterResourceID, "the MC of the CS cluster's shard")
				assert.True(t, spc.Properties.Spec.ManagementClusterPlacementTime.IsZero(), "adoption is not a placement")
				cond := capacityCondition(spc)
				require.NotNil(t, cond)
				assert.Equal(t, api.ConditionTrue, cond.Status)
				assert.Equal(t, placement.ConditionReasonAvailable, cond.Reason)
			case tt.wantUnmappable:
				cond := capacityCondition(spc)
				require.NotNil(t, cond)
				assert.Equal(t, placement.ConditionReasonClusterServiceIDUnmappable, cond.Reason)
				assert.Empty(t, spc.Properties.IntendedManagementCluster())
			default:
				assert.Equal(t, before, resourcesSnapshot(t, w.Resources), "nothing written")
			}
		})
	}
}

// Finding 7: a clusters_mgmt clusterServiceID names the same cluster as its aro_hcp
// twin, so adoption takes its shard like any cluster CS already has.
func TestLegacyClusterServiceIDIsAdopted(t *testing.T) {
	w := newWorld(t)
	shard := controllertest.RegisterShard(t, w.CSClient, 1)
	mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", shard)
	controllertest.StoreScheduling(t, w.Fleet, mc, 30, 0)
	rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("Legacy"),
		withClusterServiceID(clusterservice.LegacyClustersPath+"/"+fixedCSID)))
	createInClusterService(t, w, rid, shard)
	controllertest.StoreSPC(t, w.Resources, rid)
	r := w.reconciler(t, clusterServiceAdoptionDefinition())
	w.Start(t)

	res, err := r.Reconcile(rid.Key())
	require.NoError(t, err)
	assert.Zero(t, res.RequeueAfter)
	assert.Equal(t, mc.Key(), controllertest.GetSPC(t, w.Resources, rid).Properties.IntendedManagementCluster(), "adopted from CS's shard")
}

// Finding 7: a clusterServiceID Cluster Service does not resolve is said once, in the
// SPC condition, and then left alone: no requeue, no further Cluster Service calls, and
// placement does not place it either.
func TestUnmappableClusterServiceIDIsSaidOnce(t *testing.T) {
	w := newWorld(t)
	mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
	controllertest.StoreScheduling(t, w.Fleet, mc, 30, 0)
	legacy, err := api.Decode[api.ClusterProperties](arohcp.Get("hcpcluster-accepted-clusters-mgmt-v1-csid.json"))
	require.NoError(t, err)
	rid := controllertest.StoreCluster(t, w.Resources, legacy)
	controllertest.StoreSPC(t, w.Resources, rid)
	r := w.reconciler(t, clusterServiceAdoptionDefinition())
	p := w.reconciler(t, placementDefinition())
	w.Start(t)

	res, err := r.Reconcile(rid.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{}, res, "waiting will not change Cluster Service's answer")
	spc := controllertest.GetSPC(t, w.Resources, rid)
	cond := capacityCondition(spc)
	require.NotNil(t, cond)
	assert.Equal(t, placement.ConditionReasonClusterServiceIDUnmappable, cond.Reason)
	assert.Contains(t, cond.Message, legacy.Properties.ServiceProvider().ClusterServiceID)
	assert.Empty(t, spc.Properties.IntendedManagementCluster())
	assert.True(t, placement.UnmappableRecorded(controllertest.GetCluster(t, w.Resources, rid), spc), "the metrics count it as unmappable, not backlog")
	assert.Contains(t, w.Logs.String(), "leaving it unplaced")

	cached, err := w.Caches.ServiceProviderClusters().Lister().Get(api.ServiceProviderClusterID(rid))
	require.NoError(t, err)
	require.Equal(t, spc.ETag, cached.ETag, "the write is in the cache at once")
	w.CS.ResetRequests()
	res, err = r.Reconcile(rid.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{}, res)
	res, err = p.Reconcile(rid.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{}, res)
	assert.Empty(t, w.CS.Requests(), "asked once")
	assert.Equal(t, spc.ETag, controllertest.GetSPC(t, w.Resources, rid).ETag, "said once")
	assert.Empty(t, getScheduling(t, w.Fleet, mc).Properties.Status.PendingAssignedClusters)
}

func TestClusterServiceAdoptionLeavesDeletingClustersAlone(t *testing.T) {
	t.Parallel()
	leavesDeletingClustersAlone(t, clusterServiceAdoptionDefinition())
}
