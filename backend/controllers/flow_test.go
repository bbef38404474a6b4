package controllers

// Flow tests: the controllers run as the binary runs them (controllertest.Run) and the
// test waits for what they write, or several controllers' reconciles are called in the
// order a race can take.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/util/workqueue"

	"github.com/hcpsched/hcpsched/backend/metrics"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/cosmostest"
	"github.com/hcpsched/hcpsched/internal/dev/emulator"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/storetap"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// flowFixture is one cluster and two management clusters, each registered in CS as a
// provision shard.
type flowFixture struct {
	cluster        *api.ResourceID
	stored         *api.Cluster // the cluster as first stored
	mcA, mcB       *api.ResourceID
	shardA, shardB string
}

// setupFlow stores what ARO-HCP's frontend writes for a new cluster (the cluster in the
// exact shape of its fixture, without a tenant, and its Subscription document with the
// tenant) and two MCs.
func setupFlow(t *testing.T, w *world) flowFixture {
	t.Helper()
	var f flowFixture
	f.shardA, f.shardB = controllertest.RegisterShard(t, w.CSClient, 1), controllertest.RegisterShard(t, w.CSClient, 2)
	f.mcA = controllertest.CreateManagementCluster(t, w.Fleet, "1", f.shardA)
	f.mcB = controllertest.CreateManagementCluster(t, w.Fleet, "2", f.shardB)
	w.CS.ResetRequests()

	c := controllertest.FixtureCluster(t)
	f.cluster = controllertest.StoreCluster(t, w.Resources, c)
	controllertest.StoreSubscription(t, w.Resources, f.cluster.SubscriptionID, controllertest.Tenant)
	f.stored = controllertest.GetCluster(t, w.Resources, f.cluster)
	return f
}

// driveHappyPath follows one cluster through the flow on running controllers: SPC and
// pending ID, the wait for the desired version until ARO-HCP's ControlPlaneDesiredVersion
// writes it, deferral while spec is nil, a pinned POST once placement chose mcA, and the
// observed placement in status.
func driveHappyPath(t *testing.T, w *world, f flowFixture) (*api.Cluster, *api.ServiceProviderCluster) {
	t.Helper()
	controllertest.WaitForSPC(t, w.Resources, f.cluster, waitFor, "created", func(*api.ServiceProviderCluster) bool { return true })
	pending := controllertest.WaitForCluster(t, w.Resources, f.cluster, waitFor, "pending Cluster Service ID assigned",
		func(p api.ClusterServiceProviderProperties) bool { return p.PendingClusterServiceID != "" }).
		Properties.ServiceProviderProperties.PendingClusterServiceID
	pendingID, err := clusterservice.ParseClusterHREF(pending)
	require.NoError(t, err, "the pending ID is an aro_hcp cluster href")

	require.Eventually(t, func() bool { return w.env.CreationWaits.Reason(f.cluster.Key()) == WaitDesiredVersion },
		waitFor, tick, "ClusterServiceCreate waits for the desired version")
	controllertest.ChooseVersion(t, w.Resources, f.cluster, waitFor)

	require.Eventually(t, func() bool { return strings.Contains(w.Logs.String(), deferralMessage) },
		waitFor, tick, "ClusterServiceCreate defers while spec is nil")
	assert.Empty(t, w.env.CreationWaits.Reason(f.cluster.Key()), "the desired version ended the wait")
	assert.Empty(t, controllertest.ClusterPosts(t, w.CS), "nothing is created in CS before placement")
	assert.Empty(t, controllertest.GetCluster(t, w.Resources, f.cluster).Properties.ServiceProvider().ClusterServiceID)

	controllertest.Place(t, w.Resources, f.cluster, f.mcA, waitFor)

	cluster := controllertest.WaitForCluster(t, w.Resources, f.cluster, waitFor, "Cluster Service ID recorded",
		func(p api.ClusterServiceProviderProperties) bool { return p.ClusterServiceID != "" })
	sp := cluster.Properties.ServiceProvider()
	assert.Equal(t, pending, sp.ClusterServiceID, "the cluster is created under its pending ID")
	assert.Empty(t, sp.PendingClusterServiceID, "the pending ID is cleared")

	created := controllertest.CreatedClusters(t, w.CS)
	require.Len(t, created, 1)
	post := created[0]
	assert.Equal(t, f.shardA, post.Shard, "the POST is pinned to the shard of the MC in SPC spec")
	assert.Equal(t, pendingID, post.ID)
	// CS files the cluster under its ARM identity lowercased (research §2.2), the tenant
	// and the managed resource group as stored.
	assert.True(t, strings.EqualFold(f.cluster.Name(), post.Name), "name %q", post.Name)
	assert.True(t, strings.EqualFold(f.cluster.SubscriptionID, post.Azure.SubscriptionID), "subscription %q", post.Azure.SubscriptionID)
	assert.True(t, strings.EqualFold(f.cluster.ResourceGroup, post.Azure.ResourceGroupName), "resource group %q", post.Azure.ResourceGroupName)
	assert.True(t, strings.EqualFold(f.cluster.Name(), post.Azure.ResourceName), "resource name %q", post.Azure.ResourceName)
	assert.Equal(t, controllertest.Tenant, post.Azure.TenantID, "the subscription's tenant")
	assert.Equal(t, f.stored.Properties.CustomerProperties.Platform.ManagedResourceGroup, post.Azure.ManagedResourceGroupName)
	assert.Equal(t, "openshift-v"+controllertest.DesiredVersion, post.Version.ID, "the SPC's desired version, on the stable channel")
	onShard, err := w.CS.ClustersOnShard(f.shardA)
	require.NoError(t, err)
	require.Len(t, onShard, 1)
	assert.Equal(t, pendingID, onShard[0].ID())

	spc := controllertest.WaitForSPC(t, w.Resources, f.cluster, waitFor, "observed placement recorded",
		func(s *api.ServiceProviderCluster) bool { return s.Properties.ObservedManagementCluster() != "" })
	assert.Equal(t, f.mcA.String(), spc.Properties.ObservedManagementCluster())
	assert.Equal(t, f.mcA.String(), spc.Properties.IntendedManagementCluster())
	return cluster, spc
}

// flowStores are the stores a flow test runs on, each as the kit options that select it:
// the memory store, and the Cosmos emulator (or the account in HCPSCHED_COSMOS_ENDPOINT),
// whose feed is polled less often. The emulator's subtest is named emulator, so that make
// check, which runs without it, skips it.
func flowStores() map[string]func(t *testing.T) []controllertest.Option {
	return map[string]func(t *testing.T) []controllertest.Option{
		"memory": func(*testing.T) []controllertest.Option { return nil },
		"emulator": func(t *testing.T) []controllertest.Option {
			db := cosmostest.New(t, "hcpsched-flow", nil, api.ResourcesContainer, api.FleetContainer)
			return []controllertest.Option{controllertest.OnStore(db.Store), controllertest.WithPollInterval(50 * time.Millisecond)}
		},
	}
}

// Issue 16's acceptance: a cluster in the exact shape of ARO-HCP's fixture, with a
// Subscription document and no identity.tenantId, goes from creation to a pinned Cluster
// Service create the fake accepts, with the subscription's tenant, on the memory store
// and on the emulator.
func TestHappyPath(t *testing.T) {
	t.Parallel()
	for name, store := range flowStores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, store(t)...)
			f := setupFlow(t, w)
			storedBody, err := api.Encode(f.stored)
			require.NoError(t, err)
			require.NotContains(t, string(storedBody), "tenantId", "the cluster carries no tenant")
			w.run(t, creationFlow())

			cluster, _ := driveHappyPath(t, w, f)

			created := controllertest.CreatedClusters(t, w.CS)
			require.Len(t, created, 1)
			var body struct {
				Azure struct {
					TenantID string `json:"tenant_id"`
				} `json:"azure"`
				ProvisionShardID string `json:"provision_shard_id"`
			}
			require.NoError(t, json.Unmarshal(created[0].Body, &body))
			assert.Equal(t, controllertest.Tenant, body.Azure.TenantID, "azure.tenant_id is the subscription's tenant")
			assert.Equal(t, f.shardA, body.ProvisionShardID, "pinned to the placed MC's shard")
			assert.Equal(t, withoutOwnedFields(t, f.stored), withoutOwnedFields(t, cluster),
				"every field the backend does not own is preserved")
			for _, def := range Definitions() {
				assert.Zero(t, w.Reconciles(t, def.Name, controller.ResultError), "%s had no failed reconcile", def.Name)
			}
		})
	}
}

// Every write of the flow loses a race once, to a writer that also changes a field
// hcpsched does not know. The controllers take the 412 (and the SPC's 409) as "the
// change feed brings you back", never as an error, and re-decide on the fresh document,
// so the foreign field survives.
func TestEveryWriteConflictsOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	contended := w.contend()
	f := setupFlow(t, w)
	w.run(t, creationFlow())

	cluster, spc := driveHappyPath(t, w, f)

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
		assert.Zero(t, w.Reconciles(t, def.Name, controller.ResultError), "%s treated a conflict as an error", def.Name)
	}
}

// A cluster CS already has under the pending ID another writer assigned (an earlier
// process, or ARO-HCP's own create controller, crashed before recording it) is adopted
// by the search, without a POST and without waiting for placement; placement sync then
// records where it really is. This process did not mint that ID, so it searches.
func TestAdoptsExistingClusterServiceCluster(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	f := setupFlow(t, w)
	existingID := clusterservice.NewClusterID()
	postCluster(t, w, f.stored, existingID, f.shardB)
	wantHREF, err := clusterservice.ClusterHREF(existingID)
	require.NoError(t, err)
	w.ReplaceStored(t, api.ResourcesContainer, f.cluster, controllertest.Set("properties.serviceProviderProperties.pendingClusterServiceID", wantHREF))
	w.CS.ResetRequests()
	w.run(t, creationFlow())
	// The adoption search comes after the desired-version precondition, as in ARO-HCP.
	controllertest.ChooseVersion(t, w.Resources, f.cluster, waitFor)

	cluster := controllertest.WaitForCluster(t, w.Resources, f.cluster, waitFor, "Cluster Service ID recorded",
		func(p api.ClusterServiceProviderProperties) bool { return p.ClusterServiceID != "" })
	assert.Equal(t, wantHREF, cluster.Properties.ServiceProvider().ClusterServiceID)
	assert.Empty(t, cluster.Properties.ServiceProvider().PendingClusterServiceID)
	assert.Empty(t, controllertest.ClusterPosts(t, w.CS), "an adopted cluster is not created again")

	spc := controllertest.WaitForSPC(t, w.Resources, f.cluster, waitFor, "observed placement recorded",
		func(s *api.ServiceProviderCluster) bool { return s.Properties.ObservedManagementCluster() != "" })
	assert.Equal(t, f.mcB.String(), spc.Properties.ObservedManagementCluster())
	assert.Empty(t, spc.Properties.IntendedManagementCluster(), "placement sync never writes spec")
}

// A cluster CS has under another ID while its document has no pending ID was created
// outside the flow (no ARO-HCP create POSTs without a pending ID). This process mints the
// ID and POSTs without a search; Cluster Service refuses the taken Azure name (409), and
// the retry searches and adopts the cluster it has: never created twice. Spec stays
// placement's, status records where CS has it (docs/placement.md, step 3).
func TestAdoptsAClusterCreatedOutsideTheFlowOnceCSRefusesTheName(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	f := setupFlow(t, w)
	existingID := clusterservice.NewClusterID()
	postCluster(t, w, f.stored, existingID, f.shardB)
	w.CS.ResetRequests()
	w.run(t, creationFlow())
	controllertest.ChooseVersion(t, w.Resources, f.cluster, waitFor)
	controllertest.Place(t, w.Resources, f.cluster, f.mcA, waitFor)

	cluster := controllertest.WaitForCluster(t, w.Resources, f.cluster, waitFor, "Cluster Service ID recorded",
		func(p api.ClusterServiceProviderProperties) bool { return p.ClusterServiceID != "" })
	wantHREF, err := clusterservice.ClusterHREF(existingID)
	require.NoError(t, err)
	assert.Equal(t, wantHREF, cluster.Properties.ServiceProvider().ClusterServiceID)
	posts := controllertest.ClusterPosts(t, w.CS)
	require.Len(t, posts, 1)
	assert.Equal(t, http.StatusConflict, posts[0].Status, "CS refused the taken Azure name")
	assert.Empty(t, controllertest.CreatedClusters(t, w.CS), "nothing created twice")

	spc := controllertest.WaitForSPC(t, w.Resources, f.cluster, waitFor, "observed placement recorded",
		func(s *api.ServiceProviderCluster) bool { return s.Properties.ObservedManagementCluster() != "" })
	assert.Equal(t, f.mcB.String(), spc.Properties.ObservedManagementCluster())
	assert.Equal(t, f.mcA.String(), spc.Properties.IntendedManagementCluster(), "spec stays placement's")
}

// CS's 5xx answers fail the reconcile, which the workqueue retries with back-off until
// the call goes through; the flow then completes as usual.
func TestClusterServiceServerErrorsAreRetried(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		faults     []fakeclusterservice.Fault
		controller string
	}{
		{
			// The SDK does not retry a failed POST (CS may have done the work): the
			// controller's retry searches first and, finding nothing, POSTs again.
			name:       "create",
			faults:     []fakeclusterservice.Fault{{Method: http.MethodPost, PathPrefix: clusterservice.ClustersPath, Status: http.StatusInternalServerError, Count: 1}},
			controller: ClusterServiceCreateName,
		},
		{
			// A failed POST makes the retry search first; the SDK retries GETs twice, and the
			// search's third failure reaches the controller.
			name: "search",
			faults: []fakeclusterservice.Fault{
				{Method: http.MethodPost, PathPrefix: clusterservice.ClustersPath, Status: http.StatusInternalServerError, Count: 1},
				{Method: http.MethodGet, PathPrefix: clusterservice.ClustersPath, Status: http.StatusServiceUnavailable, Count: 3},
			},
			controller: ClusterServiceCreateName,
		},
		{
			name:       "provision shard",
			faults:     []fakeclusterservice.Fault{{Method: http.MethodGet, PathPrefix: clusterservice.ClustersPath + "/", Status: http.StatusBadGateway, Count: 3}},
			controller: ManagementClusterPlacementSyncName,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			f := setupFlow(t, w)
			for _, fault := range tt.faults {
				_, err := w.CS.InjectFault(fault)
				require.NoError(t, err)
			}
			w.run(t, creationFlow())

			driveHappyPath(t, w, f)

			assert.Empty(t, w.CS.Faults(), "every injected failure was hit")
			assert.GreaterOrEqual(t, w.Reconciles(t, tt.controller, controller.ResultError), 1.0,
				"the failure reached %s as an error", tt.controller)
			if tt.name == "create" {
				posts := controllertest.ClusterPosts(t, w.CS)
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
	w := newWorld(t)
	f := setupFlow(t, w)
	// Until the test moves the cluster, CS answers as if it had not placed it yet.
	unplaced := `{"kind":"ProvisionShard"}`
	faultID, err := w.CS.InjectFault(fakeclusterservice.Fault{Method: http.MethodGet, PathPrefix: clusterservice.ClustersPath + "/", Status: http.StatusOK, Body: &unplaced})
	require.NoError(t, err)
	w.run(t, creationFlow())

	controllertest.ChooseVersion(t, w.Resources, f.cluster, waitFor)
	controllertest.Place(t, w.Resources, f.cluster, f.mcA, waitFor)
	specBefore, err := json.Marshal(controllertest.GetSPC(t, w.Resources, f.cluster).Properties.Spec)
	require.NoError(t, err)
	cluster := controllertest.WaitForCluster(t, w.Resources, f.cluster, waitFor, "Cluster Service ID recorded",
		func(p api.ClusterServiceProviderProperties) bool { return p.ClusterServiceID != "" })
	require.Eventually(t, func() bool {
		return w.Reconciles(t, ManagementClusterPlacementSyncName, controller.ResultRequeue) >= 1
	}, waitFor, tick, "an unplaced cluster is an expected wait, requeued")
	assert.Empty(t, controllertest.GetSPC(t, w.Resources, f.cluster).Properties.ObservedManagementCluster())

	csID, err := clusterservice.ParseClusterHREF(cluster.Properties.ServiceProvider().ClusterServiceID)
	require.NoError(t, err)
	_, err = w.CS.MoveCluster(csID, f.shardB)
	require.NoError(t, err)
	require.True(t, w.CS.RemoveFault(faultID))

	spc := controllertest.WaitForSPC(t, w.Resources, f.cluster, waitFor, "observed placement recorded",
		func(s *api.ServiceProviderCluster) bool { return s.Properties.ObservedManagementCluster() != "" })
	assert.Equal(t, f.mcB.String(), spc.Properties.ObservedManagementCluster(), "status says where CS really put it")
	specAfter, err := json.Marshal(spc.Properties.Spec)
	require.NoError(t, err)
	assert.JSONEq(t, string(specBefore), string(specAfter), "spec is untouched")
	assert.Equal(t, f.mcA.String(), spc.Properties.IntendedManagementCluster())
	assert.Zero(t, w.Reconciles(t, ManagementClusterPlacementSyncName, controller.ResultError))
	assert.Eventually(t, func() bool {
		return strings.Contains(w.Logs.String(), "Cluster Service placed the cluster on another management cluster than placement chose")
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

// The whole flow with real placement: the reservation, the recorded intent, and a CS
// create pinned to the shard of the MC placement chose.
func TestPlacementHappyPath(t *testing.T) {
	w := newWorld(t)
	full := controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
	roomy := controllertest.CreateManagementCluster(t, w.Fleet, "2", controllertest.RegisterShard(t, w.CSClient, 2))
	controllertest.StoreScheduling(t, w.Fleet, full, 30, 28)
	controllertest.StoreScheduling(t, w.Fleet, roomy, 30, 3)
	require.NoError(t, w.Registry.Register(metrics.NewCollector(w.Caches, w.env.Snapshot, nil)))
	w.storeSubscription(t, controllertest.Tenant)
	w.run(t, Definitions())

	cluster := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("Placed")))
	controllertest.ChooseVersion(t, w.Resources, cluster, waitFor)
	spc := controllertest.WaitForSPC(t, w.Resources, cluster, waitFor, "placed", func(s *api.ServiceProviderCluster) bool {
		return s.Properties.IntendedManagementCluster() != ""
	})
	assert.Equal(t, roomy.String(), spc.Properties.Spec.ManagementClusterResourceID)
	assert.False(t, spc.Properties.Spec.ManagementClusterPlacementTime.IsZero())
	cond := capacityCondition(spc)
	require.NotNil(t, cond)
	assert.Equal(t, api.ConditionTrue, cond.Status)
	assert.Equal(t, placement.ConditionReasonAvailable, cond.Reason)
	assert.Equal(t, []string{cluster.Key()}, getScheduling(t, w.Fleet, roomy).Properties.Status.PendingAssignedClusters, "reserved on the chosen MC")
	assert.Empty(t, getScheduling(t, w.Fleet, full).Properties.Status.PendingAssignedClusters)

	require.Eventually(t, func() bool { return len(controllertest.CreatedClusters(t, w.CS)) == 1 }, waitFor, tick)
	onShard, err := w.CS.ClustersOnShard(mustShardOf(t, w, roomy))
	require.NoError(t, err)
	require.Len(t, onShard, 1)
	assert.Equal(t, controllertest.CreatedClusters(t, w.CS)[0].ID, onShard[0].ID(), "CS put it on the chosen MC's shard")
	assert.Equal(t, 1.0, w.attempts(placement.OutcomePlaced))

	// The capacity gauges read the caches.
	assert.Equal(t, 24.0, gaugeByMC(t, w, "backend_management_cluster_available_capacity", roomy.Key()), "30 − 3 used − 3 reserved")
	assert.Equal(t, 1.0, gaugeByMC(t, w, "backend_management_cluster_pending_reservations", roomy.Key()))
}

// gaugeByMC reads one series of a gathered gauge by its MC label; -1 when absent.
func gaugeByMC(t *testing.T, w *world, name, mc string) float64 {
	t.Helper()
	families, err := w.Registry.Gather()
	require.NoError(t, err)
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "management_cluster_resource_id" && l.GetValue() == mc {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

// Waiting for capacity: the reason is recorded once, the wait is not an error, and the
// cluster is placed soon after capacity appears.
func TestPlacementWaitsForCapacity(t *testing.T) {
	w := newWorld(t)
	mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
	controllertest.StoreScheduling(t, w.Fleet, mc, 30, 29)
	w.run(t, Definitions())
	cluster := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("Waiting")))

	spc := controllertest.WaitForSPC(t, w.Resources, cluster, waitFor, "waiting condition", func(s *api.ServiceProviderCluster) bool {
		c := capacityCondition(s)
		return c != nil && c.Status == api.ConditionFalse
	})
	cond := capacityCondition(spc)
	assert.Equal(t, placement.ConditionReasonInsufficientCapacity, cond.Reason)
	assert.Contains(t, cond.Message, "stamp 1: InsufficientCapacity (aro.openshift.io/swift-nic 1 available, 3 needed)")
	require.Eventually(t, func() bool { return w.attempts(placement.OutcomeCapacityExhausted) >= 3 }, waitFor, tick, "evaluated again after each wait")
	assert.Equal(t, spc.ETag, controllertest.GetSPC(t, w.Resources, cluster).ETag, "an unchanged condition is not rewritten")
	assert.Zero(t, w.Reconciles(t, PlacementName, "error"), "waiting is not an error")

	// Capacity appears: the fleet lowers usage.
	sched := getScheduling(t, w.Fleet, mc)
	sched.Properties.Status.ObservedResources.Usage[api.SwiftNIC] = "20"
	_, err := database.Replace(t.Context(), w.Fleet, sched)
	require.NoError(t, err)
	controllertest.WaitForSPC(t, w.Resources, cluster, waitFor, "placed after capacity appeared", func(s *api.ServiceProviderCluster) bool {
		return s.Properties.IntendedManagementCluster() == mc.String()
	})
}

// A Cluster Service outage (every request answers 503) does not stop placement: a new
// cluster is placed and holds its reservation, and only the CS create waits for CS.
func TestClusterServiceOutageDoesNotStopPlacement(t *testing.T) {
	w := newWorld(t)
	mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
	controllertest.StoreScheduling(t, w.Fleet, mc, 30, 0)
	outage, err := w.CS.InjectFault(fakeclusterservice.Fault{Status: http.StatusServiceUnavailable})
	require.NoError(t, err)
	w.storeSubscription(t, controllertest.Tenant)
	w.run(t, Definitions())
	cluster := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("DuringOutage")))
	controllertest.ChooseVersion(t, w.Resources, cluster, waitFor)

	controllertest.WaitForCluster(t, w.Resources, cluster, waitFor, "pending Cluster Service ID assigned",
		func(p api.ClusterServiceProviderProperties) bool { return p.PendingClusterServiceID != "" })
	controllertest.WaitForSPC(t, w.Resources, cluster, waitFor, "placed during the outage", func(s *api.ServiceProviderCluster) bool {
		return s.Properties.IntendedManagementCluster() == mc.String()
	})
	assert.Equal(t, []string{cluster.Key()}, getScheduling(t, w.Fleet, mc).Properties.Status.PendingAssignedClusters)
	require.Eventually(t, func() bool { return w.Reconciles(t, ClusterServiceCreateName, controller.ResultError) >= 1 }, waitFor, tick,
		"the create waits for Cluster Service")
	assert.Empty(t, controllertest.GetCluster(t, w.Resources, cluster).Properties.ServiceProvider().ClusterServiceID)
	assert.Zero(t, w.Reconciles(t, PlacementName, controller.ResultError), "placement did not fail")

	require.True(t, w.CS.RemoveFault(outage))
	controllertest.WaitForCluster(t, w.Resources, cluster, waitFor, "created once CS is back",
		func(p api.ClusterServiceProviderProperties) bool { return p.ClusterServiceID != "" })
	created := controllertest.CreatedClusters(t, w.CS)
	require.Len(t, created, 1)
	assert.Equal(t, mustShardOf(t, w, mc), created[0].Shard)
}

// Old records are never freshly placed: their intent is the MC owning the CS cluster's
// shard. A cluster with a clusterServiceID is ClusterServiceAdoption's; one CS has under
// its pending ID is found by ClusterServiceCreate's search, which records its
// clusterServiceID, and then adopted. A pending ID CS has never seen means a new cluster.
// Each reconcile is called in turn, as the events would order them.
func TestPlacementOfClustersClusterServiceKnows(t *testing.T) {
	tests := []struct {
		name        string
		csKnows     bool
		asPending   bool
		wantOnShard bool
	}{
		{"clusterServiceID", true, false, true},
		{"pending ID CS knows", true, true, true},
		{"pending ID CS does not know", false, true, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			owner := controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
			other := controllertest.CreateManagementCluster(t, w.Fleet, "2", controllertest.RegisterShard(t, w.CSClient, 2))
			controllertest.StoreScheduling(t, w.Fleet, owner, 30, 27)
			controllertest.StoreScheduling(t, w.Fleet, other, 300, 0)
			w.storeSubscription(t, controllertest.Tenant)
			csID := clusterservice.NewClusterID()
			href, err := clusterservice.ClusterHREF(csID)
			require.NoError(t, err)
			rid := clusterID(fmt.Sprintf("Old%d", i))
			c := newCluster(t, rid, func(c *api.Cluster) {
				if tt.asPending {
					c.Properties.ServiceProviderProperties.PendingClusterServiceID = href
				} else {
					c.Properties.ServiceProviderProperties.ClusterServiceID = href
					c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateSucceeded
				}
			})
			if tt.csKnows {
				postCluster(t, w, c, csID, mustShardOf(t, w, owner))
			}
			controllertest.StoreCluster(t, w.Resources, c)
			// The old record already has its SPC.
			controllertest.StoreSPC(t, w.Resources, rid)
			create := w.reconciler(t, clusterServiceCreateDefinition(nil))
			adoption := w.reconciler(t, clusterServiceAdoptionDefinition())
			placer := w.reconciler(t, placementDefinition())
			w.Start(t)
			w.CS.ResetRequests()

			if tt.asPending && tt.csKnows {
				_, err := create.Reconcile(rid.Key())
				require.NoError(t, err)
				assert.Equal(t, href, controllertest.GetCluster(t, w.Resources, rid).Properties.ServiceProvider().ClusterServiceID, "found by the search")
				assert.Zero(t, w.csRequests(http.MethodPost, clusterservice.ClustersPath), "not created again")
			}
			w.CS.ResetRequests()
			_, err = placer.Reconcile(rid.Key())
			require.NoError(t, err)
			assert.Empty(t, w.CS.Requests(), "placement does not ask Cluster Service")
			_, err = adoption.Reconcile(rid.Key())
			require.NoError(t, err)

			spc := controllertest.GetSPC(t, w.Resources, rid)
			if tt.wantOnShard {
				assert.Equal(t, owner.String(), spc.Properties.Spec.ManagementClusterResourceID, "the MC of the CS cluster's shard")
				assert.True(t, spc.Properties.Spec.ManagementClusterPlacementTime.IsZero(), "adoption is not a placement")
				assert.Empty(t, getScheduling(t, w.Fleet, owner).Properties.Status.PendingAssignedClusters, "no reservation for an adopted cluster")
			} else {
				assert.Equal(t, other.String(), spc.Properties.Spec.ManagementClusterResourceID, "a new cluster is placed on capacity")
			}
		})
	}
}

// The other order: placement places a cluster before ClusterServiceCreate's search finds
// that CS already has it under its pending ID (a leftover of ARO-HCP's own create, or of
// a backend before placement). Nothing is created twice, status records where CS put it,
// the mismatch with spec is surfaced (not healed), and the reservation placement made is
// released because the cluster is observed elsewhere.
func TestClusterServiceClusterFoundAfterPlacement(t *testing.T) {
	w := newWorld(t)
	owner := controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
	other := controllertest.CreateManagementCluster(t, w.Fleet, "2", controllertest.RegisterShard(t, w.CSClient, 2))
	controllertest.StoreScheduling(t, w.Fleet, owner, 30, 27)
	controllertest.StoreScheduling(t, w.Fleet, other, 300, 0)
	w.storeSubscription(t, controllertest.Tenant)
	rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("Leftover"), withPending(fixedHREF)))
	createInClusterService(t, w, rid, mustShardOf(t, w, owner))
	controllertest.StoreSPC(t, w.Resources, rid)
	placer := w.reconciler(t, placementDefinition())
	create := w.reconciler(t, clusterServiceCreateDefinition(nil))
	adoption := w.reconciler(t, clusterServiceAdoptionDefinition())
	observe := w.reconciler(t, managementClusterPlacementSyncDefinition())
	cleanup := w.reconciler(t, pendingCleanupDefinition())
	w.Start(t)
	w.CS.ResetRequests()

	_, err := placer.Reconcile(rid.Key())
	require.NoError(t, err)
	require.Equal(t, other.String(), controllertest.GetSPC(t, w.Resources, rid).Properties.IntendedManagementCluster(), "placed on capacity")
	for _, r := range []*controllertest.Reconciler{create, adoption, observe} {
		_, err := r.Reconcile(rid.Key())
		require.NoError(t, err)
	}
	assert.Zero(t, w.csRequests(http.MethodPost, clusterservice.ClustersPath), "not created a second time")
	assert.Equal(t, fixedHREF, controllertest.GetCluster(t, w.Resources, rid).Properties.ServiceProvider().ClusterServiceID)
	spc := controllertest.GetSPC(t, w.Resources, rid)
	assert.Equal(t, owner.String(), spc.Properties.ObservedManagementCluster(), "status says where CS put it")
	assert.Equal(t, other.String(), spc.Properties.IntendedManagementCluster(), "spec is not healed")

	_, err = cleanup.Reconcile(other.Key())
	require.NoError(t, err)
	assert.Empty(t, getScheduling(t, w.Fleet, other).Properties.Status.PendingAssignedClusters, "the reservation is released")
}

// Finding 8: an intended MC that is deleted, or loses its provision shard, before CS has
// the cluster sends the cluster back to placement: its reservation is released, the
// intent withdrawn and counted, and the cluster placed on another MC.
func TestIntentIsWithdrawnWhenTheMCVanishesBeforeCreate(t *testing.T) {
	tests := []struct {
		name   string
		vanish func(t *testing.T, w *world, mc *api.ResourceID)
		reason string
	}{
		{"deleted", func(t *testing.T, w *world, mc *api.ResourceID) {
			pk, err := api.FleetPartitionKey(mc)
			require.NoError(t, err)
			item, err := w.Fleet.Get(t.Context(), pk, api.CosmosID(mc.String()))
			require.NoError(t, err)
			_, err = database.SoftDelete(t.Context(), w.Fleet, item, time.Now())
			require.NoError(t, err)
		}, ReplacementManagementClusterDeleted},
		{"provision shard lost", func(t *testing.T, w *world, mc *api.ResourceID) {
			pk, err := api.FleetPartitionKey(mc)
			require.NoError(t, err)
			doc, err := database.Get[api.ManagementClusterProperties](t.Context(), w.Fleet, pk, mc.String())
			require.NoError(t, err)
			doc.Properties.Status.ClusterServiceProvisionShardID = ""
			_, err = database.Replace(t.Context(), w.Fleet, doc)
			require.NoError(t, err)
		}, ReplacementProvisionShardLost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			gone := controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
			other := controllertest.CreateManagementCluster(t, w.Fleet, "2", controllertest.RegisterShard(t, w.CSClient, 2))
			rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("Moved"), withPending(fixedHREF)))
			controllertest.StoreScheduling(t, w.Fleet, gone, 30, 0, rid.Key())
			controllertest.StoreScheduling(t, w.Fleet, other, 30, 0)
			controllertest.StoreSPC(t, w.Resources, rid, withSpec(gone))
			// Only placement runs (and no resync): the MC's own event must wake the cluster.
			w.run(t, only(PlacementName))
			tt.vanish(t, w, gone)

			spc := controllertest.WaitForSPC(t, w.Resources, rid, waitFor, "placed again", func(s *api.ServiceProviderCluster) bool {
				return api.ResourceIDsEqual(s.Properties.IntendedManagementCluster(), other.String())
			})
			assert.Equal(t, placement.ConditionReasonAvailable, capacityCondition(spc).Reason)
			assert.Empty(t, getScheduling(t, w.Fleet, gone).Properties.Status.PendingAssignedClusters, "released on the vanished MC")
			assert.Equal(t, []string{rid.Key()}, getScheduling(t, w.Fleet, other).Properties.Status.PendingAssignedClusters)
			assert.Equal(t, 1.0, testutil.ToFloat64(w.env.PlacementMetrics.replacements.WithLabelValues(tt.reason)))
		})
	}
}

// Finding 1: a replica that sees a reservation before the SPC it was made for must not
// drop it, or the next placement overbooks the MC. One MC with room for one HA cluster:
// A holds the reservation, its SPC is in the store but not yet in this replica's cache.
// PendingCleanup keeps it, then placement does not place B on A's capacity.
func TestReservationIsKeptWhileItsSPCIsNotCachedYet(t *testing.T) {
	w, blind := newBlindWorld(t)
	mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
	a := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("A")))
	controllertest.StoreSPC(t, w.Resources, a)
	blind.hide(spcItemID(a))
	controllertest.StoreScheduling(t, w.Fleet, mc, 3, 0, a.Key())
	b := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("B")))
	controllertest.StoreSPC(t, w.Resources, b)
	cleanup := w.reconciler(t, pendingCleanupDefinition())
	placer := w.reconciler(t, placementDefinition())
	w.Start(t)
	require.Len(t, w.Caches.ServiceProviderClusters().Lister().List(), 1)
	require.Len(t, w.Caches.ManagementClusterSchedulings().Lister().List(), 1)
	require.Len(t, w.Caches.Clusters().Lister().List(), 2)

	_, err := cleanup.Reconcile(mc.Key())
	require.NoError(t, err)
	assert.Equal(t, []string{a.Key()}, getScheduling(t, w.Fleet, mc).Properties.Status.PendingAssignedClusters,
		"the SPC is only missing from the cache: the reservation stands")

	res, err := placer.Reconcile(b.Key())
	require.NoError(t, err)
	assert.Equal(t, testRequeueAfter, res.RequeueAfter, "B waits for capacity")
	assert.Empty(t, controllertest.GetSPC(t, w.Resources, b).Properties.IntendedManagementCluster(), "B is not placed on A's capacity")
	assert.Equal(t, []string{a.Key()}, getScheduling(t, w.Fleet, mc).Properties.Status.PendingAssignedClusters, "6 NICs on a ceiling of 3 would follow")
	assert.Equal(t, 1.0, w.attempts(placement.OutcomeCapacityExhausted))
}

// errCrash stands for a process that died after its write reached Cosmos was decided on
// but before the next one: the write is not made and the reconcile fails.
var errCrash = errors.New("injected crash between the reservation and the spec write")

// faultStore wraps every container a replica's controllers and caches use.
type faultStore struct {
	database.Store
	wrap func(database.Container) database.Container
}

func (s faultStore) Container(name string) database.Container { return s.wrap(s.Store.Container(name)) }

// faults wraps a container: some scheduling-document replaces fail with 412 before they
// reach the store, and some SPC replaces that record a placement "crash".
type faults struct {
	database.Container
	rng         *rand.Rand
	mu          *sync.Mutex
	conflict    float64
	crash       float64
	specWritten func(cluster, mc string)
}

func (f *faults) roll(p float64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.Float64() < p
}

func (f *faults) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	_, _, resourceType := api.Identify(body)
	switch {
	case strings.EqualFold(resourceType, api.ManagementClusterSchedulingResourceType) && f.roll(f.conflict):
		return database.Item{}, &database.OpError{Op: "replace", Container: f.Name(), ID: id, StatusCode: 412, Kind: database.ErrPreconditionFailed}
	case strings.EqualFold(resourceType, api.ServiceProviderClusterResourceType):
		spc, err := api.Decode[api.ServiceProviderClusterProperties](body)
		if err == nil && spc.Properties.IntendedManagementCluster() != "" && f.roll(f.crash) {
			return database.Item{}, errCrash
		}
		item, err := f.Container.Replace(ctx, pk, id, body, ifMatch)
		if err == nil && spc != nil && spc.Properties.IntendedManagementCluster() != "" {
			rid, _ := spc.ParsedResourceID()
			f.specWritten(rid.Parent().Key(), spc.Properties.IntendedManagementCluster())
		}
		return item, err
	}
	return f.Container.Replace(ctx, pk, id, body, ifMatch)
}

// Patch injects the faults of Replace into docwrite's patches: 412s on scheduling
// documents, and crashes before a patch that writes an SPC's intent.
func (f *faults) Patch(ctx context.Context, pk, id string, ops []database.PatchOperation, opts database.PatchOptions) (database.Item, error) {
	stored, err := f.Container.Get(ctx, pk, id)
	if err != nil {
		return f.Container.Patch(ctx, pk, id, ops, opts)
	}
	_, _, resourceType := api.Identify(stored.Body)
	switch {
	case strings.EqualFold(resourceType, api.ManagementClusterSchedulingResourceType) && f.roll(f.conflict):
		return database.Item{}, &database.OpError{Op: "patch", Container: f.Name(), ID: id, StatusCode: 412, Kind: database.ErrPreconditionFailed}
	case strings.EqualFold(resourceType, api.ServiceProviderClusterResourceType):
		writesIntent := false
		for _, op := range ops {
			if strings.HasPrefix(op.Path, "/properties/spec") && strings.Contains(string(op.Value), "managementclusters") {
				writesIntent = true
			}
		}
		if writesIntent && f.roll(f.crash) {
			return database.Item{}, errCrash
		}
		stored, answer, err := storetap.Patch(ctx, f.Container, pk, id, ops, opts)
		if err == nil {
			if spc, decErr := api.Decode[api.ServiceProviderClusterProperties](stored.Body); decErr == nil && spc.Properties.IntendedManagementCluster() != "" && writesIntent {
				rid, _ := spc.ParsedResourceID()
				f.specWritten(rid.Parent().Key(), spc.Properties.IntendedManagementCluster())
			}
		}
		return answer, err
	}
	return f.Container.Patch(ctx, pk, id, ops, opts)
}

// TestConcurrentPlacement runs two backend replicas, each with 20 placement workers,
// against one store with tight capacity, injected 412s and crashes between the
// reservation and the spec write. Afterwards no MC is committed past its ceiling, every
// cluster has exactly one intent that never changed, and every stale reservation is
// swept.
func TestConcurrentPlacement(t *testing.T) {
	stores := map[string]func(t *testing.T) (database.Store, time.Duration){
		"memory": func(t *testing.T) (database.Store, time.Duration) { return memory.New(), 10 * time.Millisecond },
		"emulator": func(t *testing.T) (database.Store, time.Duration) {
			emu := emulator.StartForTest(t)
			s, err := cosmos.Open(cosmos.Config{Endpoint: emu.Endpoint, Key: emu.Key, Database: "placement"}, prometheus.NewRegistry())
			require.NoError(t, err)
			require.NoError(t, s.EnsureLayout(t.Context(), api.ResourcesContainer, api.FleetContainer))
			return s, 50 * time.Millisecond
		},
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			store, poll := newStore(t)
			runConcurrentPlacement(t, store, poll)
		})
	}
}

func runConcurrentPlacement(t *testing.T, store database.Store, poll time.Duration) {
	resources, fleet := store.Container(api.ResourcesContainer), store.Container(api.FleetContainer)
	// 12 HA clusters (3 swift NICs each) and 6 single-replica ones (1 each) need 42 NICs.
	// The MCs have 50: an MC can strand at most 2 NICs that no HA cluster fits in, so this
	// is the least capacity that places every cluster whatever order they arrive in.
	ceilings := map[string]int{"1": 14, "2": 14, "3": 11, "4": 11}
	mcs := map[string]*api.ResourceID{}
	for stamp, ceiling := range ceilings {
		mc := api.ManagementClusterResourceID(stamp)
		mcs[mc.Key()] = mc
		_, err := database.Create(t.Context(), fleet, api.NewDocument(mc, stamp, api.ManagementClusterProperties{
			Spec:   &api.ManagementClusterSpec{SchedulingPolicy: api.Schedulable},
			Status: &api.ManagementClusterStatus{Conditions: []api.Condition{{Type: "Ready", Status: api.ConditionTrue}}, ClusterServiceProvisionShardID: clusterservice.ProvisionShardsPath + "/shard-" + stamp},
		}))
		require.NoError(t, err)
		controllertest.StoreScheduling(t, fleet, mc, ceiling, 0)
	}
	cost := map[string]int{}
	for i := range 18 {
		rid := clusterID(fmt.Sprintf("Burst-%02d", i))
		single := i%3 == 2
		cost[rid.Key()] = 3
		c := newCluster(t, rid, func(c *api.Cluster) {
			if single {
				c.Properties.ServiceProviderProperties.ExperimentalFeatures = &api.ExperimentalFeatures{SingleReplica: api.SingleReplica}
			}
		})
		if single {
			cost[rid.Key()] = 1
		}
		_, err := database.Create(t.Context(), resources, c)
		require.NoError(t, err)
		controllertest.StoreSPC(t, resources, rid)
	}

	var mu sync.Mutex
	intents := map[string]map[string]bool{} // cluster -> every MC a spec write named
	record := func(cluster, mc string) {
		mu.Lock()
		defer mu.Unlock()
		if intents[cluster] == nil {
			intents[cluster] = map[string]bool{}
		}
		intents[cluster][strings.ToLower(mc)] = true
	}
	var replicaMetrics []*PlacementMetrics
	for replica := range 2 {
		rng := rand.New(rand.NewPCG(uint64(replica), 42))
		lock := &sync.Mutex{}
		w := newWorld(t, controllertest.OnStore(store), controllertest.WithPollInterval(poll), controllertest.WithStore(func(s database.Store) database.Store {
			return faultStore{Store: s, wrap: func(c database.Container) database.Container {
				return &faults{Container: c, rng: rng, mu: lock, conflict: 0.2, crash: 0.15, specWritten: record}
			}}
		}))
		w.Runtime.RateLimiter = func() workqueue.TypedRateLimiter[string] {
			return workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 100*time.Millisecond)
		}
		replicaMetrics = append(replicaMetrics, w.env.PlacementMetrics)
		controllertest.Run(t, w.Kit, w.env, only(PlacementName, PendingCleanupName), map[string]controller.Settings{
			PlacementName:      {Workers: DefaultPlacementWorkers, RequeueAfter: 50 * time.Millisecond},
			PendingCleanupName: {Workers: DefaultPendingCleanupWorkers, ResyncPeriod: 200 * time.Millisecond},
		})
	}

	intent := func(cluster string) string {
		rid := api.MustParseResourceID(cluster)
		pk, _ := api.ResourcesPartitionKey(rid)
		spc, err := database.Get[api.ServiceProviderClusterProperties](t.Context(), resources, pk, api.ServiceProviderClusterID(rid))
		require.NoError(t, err)
		return strings.ToLower(spc.Properties.IntendedManagementCluster())
	}
	require.Eventually(t, func() bool {
		for cluster := range cost {
			if intent(cluster) == "" {
				return false
			}
		}
		return true
	}, 60*time.Second, 20*time.Millisecond, "every cluster is placed")

	committed := map[string]int{}
	for cluster, c := range cost {
		mc := intent(cluster)
		committed[mc] += c
		mu.Lock()
		assert.Equal(t, map[string]bool{mc: true}, intents[cluster], "cluster %s: exactly one intent, never changed", cluster)
		mu.Unlock()
	}
	for key, mc := range mcs {
		assert.LessOrEqual(t, committed[key], ceilings[mc.Names[0]], "MC %s committed past its ceiling", key)
	}

	// Stale reservations (from races between the replicas) are swept; reservations of
	// clusters placed on the MC stay until the fleet observes them.
	require.Eventually(t, func() bool {
		for key, mc := range mcs {
			for _, p := range getScheduling(t, fleet, mc).Properties.Status.PendingAssignedClusters {
				if intent(p) != key {
					return false
				}
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond, "no stale reservation remains")

	var placed, conflicts float64
	for _, m := range replicaMetrics {
		placed += counterValue(m.attempts.WithLabelValues(string(placement.OutcomePlaced)))
		conflicts += counterValue(m.attempts.WithLabelValues(string(placement.OutcomeConflict)))
	}
	assert.GreaterOrEqual(t, placed, float64(len(cost)))
	t.Logf("%d clusters: %.0f placements recorded, %.0f conflicts (%.2f per placement)", len(cost), placed, conflicts, conflicts/placed)
}
