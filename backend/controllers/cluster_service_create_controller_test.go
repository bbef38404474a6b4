package controllers

import (
	"net/http"
	"testing"

	arohcpsdk "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
)

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
			w := newWorld(t)
			rid := controllertest.StoreCluster(t, w.Resources, tt.cluster)
			if tt.spc {
				storeSPC(t, w.Resources, rid)
			}
			r := w.reconciler(t, clusterServiceCreateDefinition())
			w.Start(t)
			before := resourcesSnapshot(t, w.Resources)

			res, err := r.Reconcile(rid.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{}, res, "the wait ends with an event, not a timer")
			assert.Equal(t, before, resourcesSnapshot(t, w.Resources))
			assert.Zero(t, w.csRequests(http.MethodPost, clusterservice.ClustersPath), "nothing was created")
			if tt.searched {
				assert.Equal(t, 1, w.csRequests(http.MethodGet, clusterservice.ClustersPath))
			} else {
				assert.Empty(t, w.CS.Requests())
			}
			if tt.log != "" {
				assert.Contains(t, w.Logs.String(), tt.log)
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
			w := newWorld(t)
			mc := api.ManagementClusterResourceID("1")
			switch tt.mcShard {
			case "-":
			case "registered":
				controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
			default:
				controllertest.CreateManagementCluster(t, w.Fleet, "1", tt.mcShard)
			}
			w.CS.ResetRequests()
			rid := controllertest.StoreCluster(t, w.Resources, newCluster(clusterID("c1"), withPending(clusterservice.ClustersPath+"/"+tt.pending)))
			storeSPC(t, w.Resources, rid, withSpec(mc))
			r := w.reconciler(t, clusterServiceCreateDefinition())
			w.Start(t)
			before := resourcesSnapshot(t, w.Resources)

			_, err := r.Reconcile(rid.Key())
			require.Error(t, err, "retried with back-off")
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Equal(t, before, resourcesSnapshot(t, w.Resources))
		})
	}
}

// A placed cluster that Cluster Service already has under its pending ID (ARO-HCP's own
// create, or one before placement, crashed before recording it) is adopted by the search,
// not created a second time, whatever MC placement chose: ManagementClusterPlacementSync
// then records where it really is. Placement relies on this for a pending ID
// (docs/placement.md).
func TestClusterServiceCreateAdoptsAPlacedClusterClusterServiceHas(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	owner := controllertest.RegisterShard(t, w.CSClient, 1)
	controllertest.CreateManagementCluster(t, w.Fleet, "1", owner)
	chosen := controllertest.CreateManagementCluster(t, w.Fleet, "2", controllertest.RegisterShard(t, w.CSClient, 2))
	rid := controllertest.StoreCluster(t, w.Resources, newCluster(clusterID("c1"), withPending(fixedHREF)))
	createInClusterService(t, w, rid, owner)
	storeSPC(t, w.Resources, rid, withSpec(chosen))
	w.CS.ResetRequests()
	r := w.reconciler(t, clusterServiceCreateDefinition())
	w.Start(t)

	res, err := r.Reconcile(rid.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{}, res)
	sp := controllertest.GetCluster(t, w.Resources, rid).Properties.ServiceProvider()
	assert.Equal(t, fixedHREF, sp.ClusterServiceID, "the cluster CS has is recorded")
	assert.Empty(t, sp.PendingClusterServiceID)
	assert.Zero(t, w.csRequests(http.MethodPost, clusterservice.ClustersPath), "not created a second time")
	onShard, err := w.CS.ClustersOnShard(owner)
	require.NoError(t, err)
	assert.Len(t, onShard, 1, "it stays where CS put it")
}

func TestClusterServiceCreateLeavesDeletingClustersAlone(t *testing.T) {
	t.Parallel()
	leavesDeletingClustersAlone(t, clusterServiceCreateDefinition())
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
