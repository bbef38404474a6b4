package controllers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/backend/controllers/flowtest"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
)

const deferralMessage = "deferring Cluster Service creation until placement is resolved"

// flowFixture is one cluster and two management clusters, each registered in CS as a
// provision shard.
type flowFixture struct {
	cluster        *api.ResourceID
	stored         *api.Cluster // the cluster as first stored
	mcA, mcB       *api.ResourceID
	shardA, shardB string
}

// setupFlow stores a real ARO-HCP cluster document (the frontend's fresh Accepted
// cluster, given the tenant its identity sync would write) and two MCs.
func setupFlow(t *testing.T, e *testEnv) flowFixture {
	t.Helper()
	var f flowFixture
	f.shardA, f.shardB = flowtest.RegisterShard(t, e.csClient, 1), flowtest.RegisterShard(t, e.csClient, 2)
	f.mcA = flowtest.CreateManagementCluster(t, e.fleet, "1", f.shardA)
	f.mcB = flowtest.CreateManagementCluster(t, e.fleet, "2", f.shardB)
	e.cs.ResetRequests()

	f.cluster = flowtest.StoreCluster(t, e.resources, flowtest.FixtureCluster(t))
	f.stored = flowtest.GetCluster(t, e.resources, f.cluster)
	return f
}

// driveHappyPath follows one cluster through the flow on running controllers: SPC and
// pending ID, deferral while spec is nil, a pinned POST once placement chose mcA, and
// the observed placement in status.
func driveHappyPath(t *testing.T, e *testEnv, f flowFixture) (*api.Cluster, *api.ServiceProviderCluster) {
	t.Helper()
	flowtest.WaitForSPC(t, e.resources, f.cluster, waitFor, "created", func(*api.ServiceProviderCluster) bool { return true })
	pending := flowtest.WaitForCluster(t, e.resources, f.cluster, waitFor, "pending Cluster Service ID assigned",
		func(p api.ClusterServiceProviderProperties) bool { return p.PendingClusterServiceID != "" }).
		Properties.ServiceProviderProperties.PendingClusterServiceID
	pendingID, err := clusterservice.ParseClusterHREF(pending)
	require.NoError(t, err, "the pending ID is an aro_hcp cluster href")

	require.Eventually(t, func() bool { return strings.Contains(e.logs.String(), deferralMessage) },
		waitFor, tick, "ClusterServiceCreate defers while spec is nil")
	assert.Empty(t, flowtest.ClusterPosts(t, e.cs), "nothing is created in CS before placement")
	assert.Empty(t, flowtest.GetCluster(t, e.resources, f.cluster).Properties.ServiceProvider().ClusterServiceID)

	flowtest.Place(t, e.resources, f.cluster, f.mcA, waitFor)

	cluster := flowtest.WaitForCluster(t, e.resources, f.cluster, waitFor, "Cluster Service ID recorded",
		func(p api.ClusterServiceProviderProperties) bool { return p.ClusterServiceID != "" })
	sp := cluster.Properties.ServiceProvider()
	assert.Equal(t, pending, sp.ClusterServiceID, "the cluster is created under its pending ID")
	assert.Empty(t, sp.PendingClusterServiceID, "the pending ID is cleared")

	created := flowtest.CreatedClusters(t, e.cs)
	require.Len(t, created, 1)
	post := created[0]
	assert.Equal(t, f.shardA, post.Shard, "the POST is pinned to the shard of the MC in SPC spec")
	assert.Equal(t, pendingID, post.ID)
	assert.Equal(t, f.cluster.Name(), post.Name)
	assert.Equal(t, f.cluster.SubscriptionID, post.Azure.SubscriptionID)
	assert.Equal(t, f.cluster.ResourceGroup, post.Azure.ResourceGroupName)
	assert.Equal(t, f.cluster.Name(), post.Azure.ResourceName)
	assert.Equal(t, flowtest.Tenant, post.Azure.TenantID)
	assert.Equal(t, f.stored.Properties.CustomerProperties.Platform.ManagedResourceGroup, post.Azure.ManagedResourceGroupName)
	onShard, err := e.cs.ClustersOnShard(f.shardA)
	require.NoError(t, err)
	require.Len(t, onShard, 1)
	assert.Equal(t, pendingID, onShard[0].ID())

	spc := flowtest.WaitForSPC(t, e.resources, f.cluster, waitFor, "observed placement recorded",
		func(s *api.ServiceProviderCluster) bool { return s.Properties.ObservedManagementCluster() != "" })
	assert.Equal(t, f.mcA.String(), spc.Properties.ObservedManagementCluster())
	assert.Equal(t, f.mcA.String(), spc.Properties.IntendedManagementCluster())
	return cluster, spc
}

func TestHappyPath(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	f := setupFlow(t, e)
	e.run(t)

	cluster, _ := driveHappyPath(t, e, f)

	assert.Equal(t, withoutOwnedFields(t, f.stored), withoutOwnedFields(t, cluster),
		"every field the backend does not own is preserved")
	for _, def := range Definitions() {
		assert.Zero(t, e.reconciles(t, def.Name, controller.ResultError), "%s had no failed reconcile", def.Name)
	}
}

// Every write of the flow loses a race once, to a writer that also changes a field
// hcpsched does not know. The controllers take the 412 (and the SPC's 409) as "the
// change feed brings you back", never as an error, and re-decide on the fresh document,
// so the foreign field survives.
func TestEveryWriteConflictsOnce(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	contended := newContendedContainer(e.resources)
	e.deps.Resources = contended
	f := setupFlow(t, e)
	e.run(t)

	cluster, spc := driveHappyPath(t, e, f)

	clusterConflicts, _ := contended.conflicts(cluster.ID)
	assert.GreaterOrEqual(t, clusterConflicts, 2, "pendingClusterServiceID and clusterServiceID each lost a race")
	spcConflicts, spcCreateConflicts := contended.conflicts(spc.ID)
	assert.GreaterOrEqual(t, spcConflicts, 1, "status.managementClusterResourceID lost a race")
	assert.Equal(t, 1, spcCreateConflicts, "the SPC create got a 409")

	for _, doc := range []interface {
		Unknown(string) (json.RawMessage, bool)
	}{&cluster.Properties, &spc.Properties} {
		_, ok := doc.Unknown(foreignWritesKey)
		assert.True(t, ok, "the other writer's field survives the backend's writes")
	}
	assert.Equal(t, withoutOwnedFields(t, f.stored), withoutOwnedFields(t, cluster, foreignWritesKey))

	for _, def := range Definitions() {
		assert.Zero(t, e.reconciles(t, def.Name, controller.ResultError), "%s treated a conflict as an error", def.Name)
	}
}

// A cluster CS already has (an earlier attempt crashed before recording it, or it was
// created outside this flow) is adopted, without a POST and without waiting for
// placement; placement sync then records where it really is.
func TestAdoptsExistingClusterServiceCluster(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	f := setupFlow(t, e)
	identity, missing := azureIdentity(f.stored, f.cluster)
	require.Empty(t, missing)
	existingID := clusterservice.NewClusterID()
	body, err := clusterBody(existingID, f.cluster.Name(), identity, f.shardB)
	require.NoError(t, err)
	_, err = e.csClient.CreatePinnedCluster(t.Context(), body, f.shardB)
	require.NoError(t, err)
	e.cs.ResetRequests()
	e.run(t)

	cluster := flowtest.WaitForCluster(t, e.resources, f.cluster, waitFor, "Cluster Service ID recorded",
		func(p api.ClusterServiceProviderProperties) bool { return p.ClusterServiceID != "" })
	wantHREF, err := clusterservice.ClusterHREF(existingID)
	require.NoError(t, err)
	assert.Equal(t, wantHREF, cluster.Properties.ServiceProvider().ClusterServiceID)
	assert.Empty(t, cluster.Properties.ServiceProvider().PendingClusterServiceID)
	assert.Empty(t, flowtest.ClusterPosts(t, e.cs), "an adopted cluster is not created again")

	spc := flowtest.WaitForSPC(t, e.resources, f.cluster, waitFor, "observed placement recorded",
		func(s *api.ServiceProviderCluster) bool { return s.Properties.ObservedManagementCluster() != "" })
	assert.Equal(t, f.mcB.String(), spc.Properties.ObservedManagementCluster())
	assert.Empty(t, spc.Properties.IntendedManagementCluster(), "placement sync never writes spec")
}

// CS's 5xx answers fail the reconcile, which the workqueue retries with back-off until
// the call goes through; the flow then completes as usual.
func TestClusterServiceServerErrorsAreRetried(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		fault      fakeclusterservice.Fault
		controller string
	}{
		{
			// The SDK does not retry a failed POST (CS may have done the work): the
			// controller's retry searches first and, finding nothing, POSTs again.
			name:       "create",
			fault:      fakeclusterservice.Fault{Method: http.MethodPost, PathPrefix: clusterservice.ClustersPath, Status: http.StatusInternalServerError, Count: 1},
			controller: ClusterServiceCreateName,
		},
		{
			// The SDK retries GETs twice; the third failure reaches the controller.
			name:       "search",
			fault:      fakeclusterservice.Fault{Method: http.MethodGet, PathPrefix: clusterservice.ClustersPath, Status: http.StatusServiceUnavailable, Count: 3},
			controller: ClusterServiceCreateName,
		},
		{
			name:       "provision shard",
			fault:      fakeclusterservice.Fault{Method: http.MethodGet, PathPrefix: clusterservice.ClustersPath + "/", Status: http.StatusBadGateway, Count: 3},
			controller: ManagementClusterPlacementSyncName,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			f := setupFlow(t, e)
			_, err := e.cs.InjectFault(tt.fault)
			require.NoError(t, err)
			e.run(t)

			driveHappyPath(t, e, f)

			assert.Empty(t, e.cs.Faults(), "every injected failure was hit")
			assert.GreaterOrEqual(t, e.reconciles(t, tt.controller, controller.ResultError), 1.0,
				"the failure reached %s as an error", tt.controller)
			if tt.name == "create" {
				posts := flowtest.ClusterPosts(t, e.cs)
				require.Len(t, posts, 2)
				assert.Equal(t, http.StatusInternalServerError, posts[0].Status)
				assert.NotEmpty(t, posts[0].Fault)
				assert.Equal(t, posts[0].ID, posts[1].ID, "the retry creates under the same pre-assigned ID")
				assert.Equal(t, f.shardA, posts[1].Shard)
			}
		})
	}
}

// CS put the cluster on another shard than the one it was pinned to. Placement sync
// records what CS did in status and leaves spec exactly as placement wrote it: the
// mismatch is surfaced, not healed.
func TestPlacementMismatchIsRecordedNotHealed(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	f := setupFlow(t, e)
	// Until the test moves the cluster, CS answers as if it had not placed it yet.
	unplaced := `{"kind":"ProvisionShard"}`
	faultID, err := e.cs.InjectFault(fakeclusterservice.Fault{Method: http.MethodGet, PathPrefix: clusterservice.ClustersPath + "/", Status: http.StatusOK, Body: &unplaced})
	require.NoError(t, err)
	e.run(t)

	flowtest.WaitForSPC(t, e.resources, f.cluster, waitFor, "created", func(*api.ServiceProviderCluster) bool { return true })
	flowtest.Place(t, e.resources, f.cluster, f.mcA, waitFor)
	specBefore, err := json.Marshal(flowtest.GetSPC(t, e.resources, f.cluster).Properties.Spec)
	require.NoError(t, err)
	cluster := flowtest.WaitForCluster(t, e.resources, f.cluster, waitFor, "Cluster Service ID recorded",
		func(p api.ClusterServiceProviderProperties) bool { return p.ClusterServiceID != "" })
	require.Eventually(t, func() bool {
		return e.reconciles(t, ManagementClusterPlacementSyncName, controller.ResultRequeue) >= 1
	}, waitFor, tick, "an unplaced cluster is an expected wait, requeued")
	assert.Empty(t, flowtest.GetSPC(t, e.resources, f.cluster).Properties.ObservedManagementCluster())

	csID, err := clusterservice.ParseClusterHREF(cluster.Properties.ServiceProvider().ClusterServiceID)
	require.NoError(t, err)
	_, err = e.cs.MoveCluster(csID, f.shardB)
	require.NoError(t, err)
	require.True(t, e.cs.RemoveFault(faultID))

	spc := flowtest.WaitForSPC(t, e.resources, f.cluster, waitFor, "observed placement recorded",
		func(s *api.ServiceProviderCluster) bool { return s.Properties.ObservedManagementCluster() != "" })
	assert.Equal(t, f.mcB.String(), spc.Properties.ObservedManagementCluster(), "status says where CS really put it")
	specAfter, err := json.Marshal(spc.Properties.Spec)
	require.NoError(t, err)
	assert.JSONEq(t, string(specBefore), string(specAfter), "spec is untouched")
	assert.Equal(t, f.mcA.String(), spc.Properties.IntendedManagementCluster())
	assert.Zero(t, e.reconciles(t, ManagementClusterPlacementSyncName, controller.ResultError))
	assert.Eventually(t, func() bool {
		return strings.Contains(e.logs.String(), "Cluster Service placed the cluster on another management cluster than placement chose")
	}, waitFor, tick, "the mismatch is logged")
}

// withoutOwnedFields returns a document as a generic JSON value without the fields the
// backend writes (and those every write changes), so what is left must be unchanged.
func withoutOwnedFields(t *testing.T, c *api.Cluster, alsoDrop ...string) map[string]any {
	t.Helper()
	b, err := api.Encode(c)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	for _, k := range []string{"_etag", "_ts", "_rid", "_self", "_attachments"} {
		delete(doc, k)
	}
	props := doc["properties"].(map[string]any)
	meta := props["cosmosMetadata"].(map[string]any)
	delete(meta, "etag")
	delete(meta, "instanceVersion")
	sp := props["serviceProviderProperties"].(map[string]any)
	delete(sp, "pendingClusterServiceID")
	delete(sp, "clusterServiceID")
	for _, k := range alsoDrop {
		delete(props, k)
	}
	return doc
}
