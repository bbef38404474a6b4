package clusterservice

import (
	"net/http"
	"testing"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The client offers no general update, but the fake must hold CS's update rules for
// whoever adds one, so these tests drive the SDK's generated update calls directly.

func TestClusterUpdateRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		patch      *arohcp.ClusterBuilder
		wantStatus int
	}{
		{"provision_shard_id is immutable, so a pin is final", arohcp.NewCluster().ProvisionShardID("other"), http.StatusBadRequest},
		{"azure.subscription_id is immutable", arohcp.NewCluster().Azure(arohcp.NewAzure().SubscriptionID("x")), http.StatusBadRequest},
		{"azure.managed_resource_group_name is immutable", arohcp.NewCluster().Azure(arohcp.NewAzure().ManagedResourceGroupName("x")), http.StatusBadRequest},
		{"name is immutable", arohcp.NewCluster().Name("renamed"), http.StatusBadRequest},
		{"region is immutable", arohcp.NewCluster().Region(arohcp.NewCloudRegion().ID("westus")), http.StatusBadRequest},
		{"id is read-only", arohcp.NewCluster().ID(NewClusterID()), http.StatusBadRequest},
		{"state is read-only", arohcp.NewCluster().State(arohcp.ClusterStateReady), http.StatusBadRequest},
		{"a mutable field merges", arohcp.NewCluster().Properties(map[string]string{"b": "2"}), http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			shard := e.createShard(t, 1, true)
			id := NewClusterID()
			_, err := e.client.CreatePinnedCluster(t.Context(),
				buildCluster(t, clusterBuilder(id, 1).Properties(map[string]string{"a": "1"})), shard)
			require.NoError(t, err)

			resp, err := e.client.api.Clusters().Cluster(id).Update().Body(buildCluster(t, tt.patch)).SendContext(t.Context())
			if tt.wantStatus != http.StatusOK {
				require.Error(t, err)
				assert.Equal(t, tt.wantStatus, resp.Status())
				after, err := e.client.GetCluster(t.Context(), id)
				require.NoError(t, err)
				assert.Equal(t, shard, after.ProvisionShardID())
				assert.Equal(t, identity(1).SubscriptionID, after.Azure().SubscriptionID())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, map[string]string{"a": "1", "b": "2"}, resp.Body().Properties())
			assert.Equal(t, identity(1).ResourceName, resp.Body().Azure().ResourceName(), "untouched fields survive")
			assert.Equal(t, shard, resp.Body().ProvisionShardID())
		})
	}
}

func TestShardUpdateRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		patch      *arohcp.ProvisionShardBuilder
		wantStatus int
	}{
		{"AKS cluster is immutable", arohcp.NewProvisionShard().AzureShard(arohcp.NewAzureShard().AksManagementClusterResourceId(aksID(9))), http.StatusBadRequest},
		{"consumer name is immutable", arohcp.NewProvisionShard().MaestroConfig(arohcp.NewProvisionShardMaestroConfig().ConsumerName("x")), http.StatusBadRequest},
		{"region is immutable", arohcp.NewProvisionShard().Region(arohcp.NewCloudRegion().ID("westus")), http.StatusBadRequest},
		{"unknown status", arohcp.NewProvisionShard().Status("retired"), http.StatusBadRequest},
		{"offline", arohcp.NewProvisionShard().Status(ShardStatusOffline), http.StatusOK},
		{"topology stays shared", arohcp.NewProvisionShard().Topology("shared"), http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			id := e.createShard(t, 1, false)
			resp, err := e.client.api.ProvisionShards().ProvisionShard(id).Update().
				Body(buildShard(t, tt.patch)).SendContext(t.Context())
			after, getErr := e.client.GetProvisionShard(t.Context(), id)
			require.NoError(t, getErr)
			assert.Equal(t, aksID(1), after.AzureShard().AksManagementClusterResourceId())
			assert.Equal(t, consumer(1), after.MaestroConfig().ConsumerName())
			if tt.wantStatus != http.StatusOK {
				require.Error(t, err)
				assert.Equal(t, tt.wantStatus, resp.Status())
				assert.Equal(t, ShardStatusMaintenance, after.Status())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.Status())
		})
	}
}
