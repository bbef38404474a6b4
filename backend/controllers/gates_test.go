package controllers

import (
	"net/http"
	"strings"
	"testing"
	"time"

	arohcpsdk "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/backend/controllers/flowtest"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// These tests call one reconcile at a time on synced caches, so that what a reconcile
// does (and does not do) is observed exactly, without other controllers running.

const (
	fixedCSID = "0123456789abcdefghijklmnopqrstuv"
	fixedHREF = clusterservice.ClustersPath + "/" + fixedCSID
)

// resourcesSnapshot maps every cluster and SPC document in the store to its etag.
func resourcesSnapshot(t *testing.T, resources database.Container) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, typ := range []string{api.ClusterResourceType, api.ServiceProviderClusterResourceType} {
		for item, err := range resources.List(t.Context(), database.ListOptions{ResourceType: typ}) {
			require.NoError(t, err)
			out[item.ID] = item.ETag
		}
	}
	return out
}

// storeSPC stores an SPC for a cluster; mutate shapes it first.
func storeSPC(t *testing.T, resources database.Container, cluster *api.ResourceID, mutate ...func(*api.ServiceProviderCluster)) {
	t.Helper()
	pk, err := api.ResourcesPartitionKey(cluster)
	require.NoError(t, err)
	spc := api.NewDocument(api.ServiceProviderClusterResourceID(cluster), pk, api.ServiceProviderClusterProperties{
		Spec:   &api.ServiceProviderClusterSpec{},
		Status: &api.ServiceProviderClusterStatus{},
	})
	spc.ResourceType = api.ServiceProviderClusterResourceType
	for _, m := range mutate {
		m(spc)
	}
	_, err = database.Create(t.Context(), resources, spc)
	require.NoError(t, err)
}

func withPending(href string) func(*api.Cluster) {
	return func(c *api.Cluster) { c.Properties.ServiceProviderProperties.PendingClusterServiceID = href }
}

func withClusterServiceID(href string) func(*api.Cluster) {
	return func(c *api.Cluster) { c.Properties.ServiceProviderProperties.ClusterServiceID = href }
}

func withSpec(mc *api.ResourceID) func(*api.ServiceProviderCluster) {
	return func(s *api.ServiceProviderCluster) { s.Properties.Spec.ManagementClusterResourceID = mc.String() }
}

// allReconcilers are the backend's reconciles by controller name.
func (e *testEnv) allReconcilers() map[string]controller.ReconcileFunc {
	return map[string]controller.ReconcileFunc{
		CreateServiceProviderClusterName:   newCreateServiceProviderCluster(e.deps).reconcile,
		PendingClusterServiceIDAssignName:  newPendingClusterServiceIDAssign(e.deps).reconcile,
		ClusterServiceCreateName:           newClusterServiceCreate(e.deps).reconcile,
		ManagementClusterPlacementSyncName: newManagementClusterPlacementSync(e.deps, Settings{RequeueAfter: testRequeueAfter}).reconcile,
	}
}

// A cluster that is being deleted gets nothing from the backend: no SPC, no IDs, no
// Cluster Service call, no observed placement.
func TestDeletingClusterIsLeftAlone(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	shard := flowtest.RegisterShard(t, e.csClient, 1)
	mc := flowtest.CreateManagementCluster(t, e.fleet, "1", shard)
	e.cs.ResetRequests()

	// Captured from a real database: Deleting, deletionTimestamp, a clusterServiceID.
	captured, err := api.Decode[api.ClusterProperties](arohcp.Get("realcosmos-hcpcluster-deleting-with-legacy-fields.json"))
	require.NoError(t, err)
	capturedID := flowtest.StoreCluster(t, e.resources, captured)
	storeSPC(t, e.resources, capturedID, withSpec(mc))
	// Deleting before it had anything.
	fresh := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("fresh"), func(c *api.Cluster) {
		c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateDeleting
	}))
	// Placed and pending creation when the DELETE arrived.
	deletedAt := time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC)
	pending := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("pending"), withPending(fixedHREF), func(c *api.Cluster) {
		c.Properties.ServiceProviderProperties.DeletionTimestamp = &deletedAt
	}))
	storeSPC(t, e.resources, pending, withSpec(mc))
	e.startCaches(t)
	before := resourcesSnapshot(t, e.resources)

	for name, reconcile := range e.allReconcilers() {
		for _, rid := range []*api.ResourceID{capturedID, fresh, pending} {
			res, err := reconcile(e.reconcileCtx(t, name), rid.Key())
			require.NoError(t, err, "%s on %s", name, rid)
			assert.Equal(t, controller.Result{}, res, "%s on %s", name, rid)
		}
	}

	assert.Equal(t, before, resourcesSnapshot(t, e.resources), "no document was written or created")
	assert.Empty(t, e.cs.Requests(), "Cluster Service was not called")
}

func TestCreateServiceProviderCluster(t *testing.T) {
	t.Parallel()
	t.Run("a live cluster without one gets an empty SPC", func(t *testing.T) {
		t.Parallel()
		e := newTestEnv(t)
		rid := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("c1")))
		e.startCaches(t)

		_, err := newCreateServiceProviderCluster(e.deps).reconcile(e.reconcileCtx(t, CreateServiceProviderClusterName), rid.Key())
		require.NoError(t, err)

		spc := flowtest.GetSPC(t, e.resources, rid)
		require.NotNil(t, spc)
		assert.Equal(t, api.ServiceProviderClusterResourceID(rid).String(), spc.ResourceID)
		assert.Equal(t, api.ServiceProviderClusterResourceType, spc.ResourceType)
		assert.Equal(t, strings.ToLower(rid.SubscriptionID), spc.PartitionKey)
		assert.Equal(t, api.CosmosID(spc.ResourceID), spc.ID)
		assert.Equal(t, int64(1), spc.InstanceVersion())
		assert.Empty(t, spc.Properties.IntendedManagementCluster())
		assert.Empty(t, spc.Properties.ObservedManagementCluster())
	})
	t.Run("an existing SPC is left as it is", func(t *testing.T) {
		t.Parallel()
		e := newTestEnv(t)
		rid := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("c1")))
		storeSPC(t, e.resources, rid)
		e.startCaches(t)
		before := resourcesSnapshot(t, e.resources)

		_, err := newCreateServiceProviderCluster(e.deps).reconcile(e.reconcileCtx(t, CreateServiceProviderClusterName), rid.Key())
		require.NoError(t, err)
		assert.Equal(t, before, resourcesSnapshot(t, e.resources))
	})
	t.Run("a 409 from a create the cache has not seen is success", func(t *testing.T) {
		t.Parallel()
		e := newTestEnv(t)
		contended := newContendedContainer(e.resources)
		e.deps.Resources = contended
		rid := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("c1")))
		e.startCaches(t)

		res, err := newCreateServiceProviderCluster(e.deps).reconcile(e.reconcileCtx(t, CreateServiceProviderClusterName), rid.Key())
		require.NoError(t, err)
		assert.Equal(t, controller.Result{}, res)
		spc := flowtest.GetSPC(t, e.resources, rid)
		require.NotNil(t, spc)
		_, foreign := spc.Properties.Unknown(foreignWritesKey)
		assert.True(t, foreign, "the other writer's SPC was not overwritten")
	})
}

func TestPendingClusterServiceIDAssign(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cluster *api.Cluster
		// wantAssigned: a pending ID is written, else the cluster is left as it is.
		wantAssigned bool
	}{
		{name: "fresh cluster", cluster: newCluster(clusterID("c1")), wantAssigned: true},
		{name: "fresh cluster without serviceProviderProperties", cluster: newCluster(clusterID("c1"), func(c *api.Cluster) {
			c.Properties.ServiceProviderProperties = nil
		}), wantAssigned: true},
		{name: "already pending", cluster: newCluster(clusterID("c1"), withPending("/api/aro_hcp/v1alpha1/clusters/abcdefghijklmnopqrstuvwxyz012345"))},
		{name: "already created", cluster: newCluster(clusterID("c1"), withClusterServiceID("/api/clusters_mgmt/v1/clusters/1243e9e9-d150-4ef1-9735-2bbc3cabc7d0"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			rid := flowtest.StoreCluster(t, e.resources, tt.cluster)
			e.startCaches(t)
			before := flowtest.GetCluster(t, e.resources, rid)
			r := newPendingClusterServiceIDAssign(e.deps)
			r.newID = func() string { return fixedCSID }

			res, err := r.reconcile(e.reconcileCtx(t, PendingClusterServiceIDAssignName), rid.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{}, res)

			after := flowtest.GetCluster(t, e.resources, rid)
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
		e := newTestEnv(t)
		rid := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("c1")))
		storeSPC(t, e.resources, rid) // spec.managementClusterResourceID is nil
		e.startCaches(t)
		_, err := newPendingClusterServiceIDAssign(e.deps).reconcile(e.reconcileCtx(t, PendingClusterServiceIDAssignName), rid.Key())
		require.NoError(t, err)
		assert.NotEmpty(t, flowtest.GetCluster(t, e.resources, rid).Properties.ServiceProvider().PendingClusterServiceID)
	})
	t.Run("a 412 writes nothing and looks again soon", func(t *testing.T) {
		t.Parallel()
		e := newTestEnv(t)
		e.deps.Resources = newContendedContainer(e.resources)
		rid := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("c1")))
		e.startCaches(t)

		res, err := newPendingClusterServiceIDAssign(e.deps).reconcile(e.reconcileCtx(t, PendingClusterServiceIDAssignName), rid.Key())
		require.NoError(t, err)
		assert.Equal(t, controller.Result{RequeueAfter: DefaultConflictRequeue}, res, "a lost race is a requeue, not an error")
		assert.Empty(t, flowtest.GetCluster(t, e.resources, rid).Properties.ServiceProvider().PendingClusterServiceID,
			"the write lost the race")
	})
}

func TestClusterServiceCreateWaits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cluster *api.Cluster
		spc     bool
		// log is a message the reconcile must log.
		log string
		// searched says whether CS was asked about the cluster.
		searched bool
	}{
		{
			name:    "no tenant yet",
			cluster: newCluster(clusterID("c1"), withPending(fixedHREF), func(c *api.Cluster) { c.Properties.Identity = nil }),
			spc:     true,
			log:     "waiting for the cluster's Azure identity",
		},
		{
			name: "no managed resource group yet",
			cluster: newCluster(clusterID("c1"), withPending(fixedHREF), func(c *api.Cluster) {
				c.Properties.CustomerProperties.Platform.ManagedResourceGroup = ""
			}),
			spc: true,
			log: "waiting for the cluster's Azure identity",
		},
		{name: "placement not resolved", cluster: newCluster(clusterID("c1"), withPending(fixedHREF)), spc: true, log: deferralMessage, searched: true},
		{name: "no SPC yet", cluster: newCluster(clusterID("c1"), withPending(fixedHREF)), log: deferralMessage, searched: true},
		{name: "already created", cluster: newCluster(clusterID("c1"), withClusterServiceID("/api/aro_hcp/v1alpha1/clusters/abcdefghijklmnopqrstuvwxyz012345"))},
		{name: "no pending ID yet", cluster: newCluster(clusterID("c1"))},
		// A cluster that failed is not created, placed or not: make chaos saw 55-73 POSTs
		// for one such cluster.
		{name: "failed", cluster: newCluster(clusterID("c1"), withPending(fixedHREF), func(c *api.Cluster) {
			c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateFailed
		}), spc: true},
		{name: "canceled", cluster: newCluster(clusterID("c1"), withPending(fixedHREF), func(c *api.Cluster) {
			c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateCanceled
		}), spc: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			rid := flowtest.StoreCluster(t, e.resources, tt.cluster)
			if tt.spc {
				storeSPC(t, e.resources, rid)
			}
			e.startCaches(t)
			before := resourcesSnapshot(t, e.resources)

			res, err := newClusterServiceCreate(e.deps).reconcile(e.reconcileCtx(t, ClusterServiceCreateName), rid.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{}, res, "the wait ends with an event, not a timer")
			assert.Equal(t, before, resourcesSnapshot(t, e.resources))
			assert.Zero(t, e.csRequests(http.MethodPost, clusterservice.ClustersPath), "nothing was created")
			if tt.searched {
				assert.Equal(t, 1, e.csRequests(http.MethodGet, clusterservice.ClustersPath))
			} else {
				assert.Empty(t, e.cs.Requests())
			}
			if tt.log != "" {
				assert.Contains(t, e.logs.String(), tt.log)
			}
		})
	}
}

func TestClusterServiceCreateFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pending string
		// mcShard is the MC's registered shard: "" registers none, "-" stores no MC.
		mcShard string
		wantErr string
	}{
		{name: "placed on an MC the cache does not hold", pending: fixedCSID, mcShard: "-", wantErr: "not in the cache"},
		{name: "placed on an MC without a provision shard", pending: fixedCSID, mcShard: "", wantErr: "no status.clusterServiceProvisionShardID"},
		{name: "placed on an MC whose shard CS does not know", pending: fixedCSID, mcShard: "unknown-shard", wantErr: "400"},
		{name: "a pending ID that is not an aro_hcp cluster", pending: "cs-create-current", mcShard: "registered", wantErr: "pendingClusterServiceID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			mc := api.ManagementClusterResourceID("1")
			switch tt.mcShard {
			case "-":
			case "registered":
				flowtest.CreateManagementCluster(t, e.fleet, "1", flowtest.RegisterShard(t, e.csClient, 1))
			default:
				flowtest.CreateManagementCluster(t, e.fleet, "1", tt.mcShard)
			}
			e.cs.ResetRequests()
			rid := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("c1"), withPending(clusterservice.ClustersPath+"/"+tt.pending)))
			storeSPC(t, e.resources, rid, withSpec(mc))
			e.startCaches(t)
			before := resourcesSnapshot(t, e.resources)

			_, err := newClusterServiceCreate(e.deps).reconcile(e.reconcileCtx(t, ClusterServiceCreateName), rid.Key())
			require.Error(t, err, "retried with back-off")
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Equal(t, before, resourcesSnapshot(t, e.resources))
		})
	}
}

func TestAdoptable(t *testing.T) {
	t.Parallel()
	cluster := func(id string) *arohcpsdk.Cluster {
		c, err := arohcpsdk.NewCluster().ID(id).Build()
		require.NoError(t, err)
		return c
	}
	pending := fixedHREF
	other1, other2 := "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	tests := []struct {
		name    string
		matches []*arohcpsdk.Cluster
		want    string
		wantErr bool
	}{
		{name: "the one created under the pending ID", matches: []*arohcpsdk.Cluster{cluster(fixedCSID)}, want: fixedCSID},
		{name: "the pending ID among others", matches: []*arohcpsdk.Cluster{cluster(other1), cluster(fixedCSID), cluster(other2)}, want: fixedCSID},
		{name: "the only match", matches: []*arohcpsdk.Cluster{cluster(other1)}, want: other1},
		{name: "several foreign matches", matches: []*arohcpsdk.Cluster{cluster(other1), cluster(other2)}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := adoptable(tt.matches, pending)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.ID())
		})
	}
}

func TestManagementClusterPlacementSync(t *testing.T) {
	t.Parallel()
	t.Run("waits for the SPC and never overwrites an observed placement", func(t *testing.T) {
		t.Parallel()
		e := newTestEnv(t)
		mc := flowtest.CreateManagementCluster(t, e.fleet, "1", flowtest.RegisterShard(t, e.csClient, 1))
		e.cs.ResetRequests()
		noSPC := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("nospc"), withClusterServiceID(fixedHREF)))
		observed := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("observed"), withClusterServiceID(fixedHREF)))
		storeSPC(t, e.resources, observed, func(s *api.ServiceProviderCluster) {
			s.Properties.Status.ManagementClusterResourceID = mc.String()
		})
		notCreated := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("notcreated"), withPending(fixedHREF)))
		storeSPC(t, e.resources, notCreated)
		e.startCaches(t)
		before := resourcesSnapshot(t, e.resources)

		r := newManagementClusterPlacementSync(e.deps, Settings{RequeueAfter: testRequeueAfter})
		for _, rid := range []*api.ResourceID{noSPC, observed, notCreated} {
			res, err := r.reconcile(e.reconcileCtx(t, ManagementClusterPlacementSyncName), rid.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{}, res)
		}
		assert.Equal(t, before, resourcesSnapshot(t, e.resources))
		assert.Empty(t, e.cs.Requests())
	})
	t.Run("a legacy clusterServiceID Cluster Service does not know is left alone", func(t *testing.T) {
		t.Parallel()
		e := newTestEnv(t)
		legacy, err := api.Decode[api.ClusterProperties](arohcp.Get("hcpcluster-accepted-clusters-mgmt-v1-csid.json"))
		require.NoError(t, err)
		rid := flowtest.StoreCluster(t, e.resources, legacy)
		storeSPC(t, e.resources, rid)
		e.startCaches(t)
		before := resourcesSnapshot(t, e.resources)

		res, err := newManagementClusterPlacementSync(e.deps, Settings{}).reconcile(e.reconcileCtx(t, ManagementClusterPlacementSyncName), rid.Key())
		require.NoError(t, err, "retrying cannot help")
		assert.Equal(t, controller.Result{}, res)
		assert.Equal(t, 1, e.csRequests(http.MethodGet, clusterservice.ClustersPath+"/1243e9e9-d150-4ef1-9735-2bbc3cabc7d0"),
			"the clusters_mgmt reference is looked up under the same id through aro_hcp")
		assert.Equal(t, before, resourcesSnapshot(t, e.resources))
		assert.Contains(t, e.logs.String(), "Cluster Service does not know the cluster's clusterServiceID")
	})
	t.Run("a foreign clusterServiceID cannot be observed", func(t *testing.T) {
		t.Parallel()
		e := newTestEnv(t)
		rid := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("c1"), withClusterServiceID("/api/somewhere/else/1")))
		storeSPC(t, e.resources, rid)
		e.startCaches(t)

		res, err := newManagementClusterPlacementSync(e.deps, Settings{}).reconcile(e.reconcileCtx(t, ManagementClusterPlacementSyncName), rid.Key())
		require.NoError(t, err, "retrying cannot help")
		assert.Equal(t, controller.Result{}, res)
		assert.Empty(t, e.cs.Requests())
		assert.Contains(t, e.logs.String(), "not a Cluster Service cluster reference")
	})
	t.Run("a shard no MC is registered as is an error", func(t *testing.T) {
		t.Parallel()
		e := newTestEnv(t)
		unknownShard := flowtest.RegisterShard(t, e.csClient, 7)
		flowtest.CreateManagementCluster(t, e.fleet, "1", flowtest.RegisterShard(t, e.csClient, 1))
		rid := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("c1"), withPending(fixedHREF)))
		identity, _ := azureIdentity(flowtest.GetCluster(t, e.resources, rid), rid)
		body, err := clusterBody(fixedCSID, rid.Name(), identity, unknownShard)
		require.NoError(t, err)
		_, err = e.csClient.CreatePinnedCluster(t.Context(), body, unknownShard)
		require.NoError(t, err)
		c := flowtest.GetCluster(t, e.resources, rid)
		c.Properties.ServiceProviderProperties.ClusterServiceID = fixedHREF
		c.Properties.ServiceProviderProperties.PendingClusterServiceID = ""
		_, err = database.Replace(t.Context(), e.resources, c)
		require.NoError(t, err)
		storeSPC(t, e.resources, rid)
		e.startCaches(t)
		before := resourcesSnapshot(t, e.resources)

		_, err = newManagementClusterPlacementSync(e.deps, Settings{}).reconcile(e.reconcileCtx(t, ManagementClusterPlacementSyncName), rid.Key())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no management cluster is registered as provision shard")
		assert.Equal(t, before, resourcesSnapshot(t, e.resources))
	})
	t.Run("a cluster CS does not know is logged, not retried", func(t *testing.T) {
		t.Parallel()
		e := newTestEnv(t)
		rid := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("c1"), withClusterServiceID(fixedHREF)))
		storeSPC(t, e.resources, rid)
		e.startCaches(t)
		before := resourcesSnapshot(t, e.resources)

		res, err := newManagementClusterPlacementSync(e.deps, Settings{}).reconcile(e.reconcileCtx(t, ManagementClusterPlacementSyncName), rid.Key())
		require.NoError(t, err, "Cluster Service's 404 will not change on a back-off")
		assert.Equal(t, controller.Result{}, res)
		assert.Equal(t, before, resourcesSnapshot(t, e.resources))
		assert.Contains(t, e.logs.String(), "Cluster Service does not know the cluster's clusterServiceID")
	})
}
