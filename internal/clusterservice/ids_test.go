package clusterservice

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewClusterID(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		id := NewClusterID()
		require.NoError(t, ValidateClusterID(id))
		require.Len(t, id, 32)
		require.False(t, seen[id], "ids are unique")
		seen[id] = true
	}
}

func TestClusterHREF(t *testing.T) {
	t.Parallel()
	id := NewClusterID()
	href, err := ClusterHREF(id)
	require.NoError(t, err)
	assert.Equal(t, "/api/aro_hcp/v1alpha1/clusters/"+id, href)

	tests := []struct {
		name string
		href string
		want string
		ok   bool
	}{
		{"valid", href, id, true},
		{"provision shard href", "/api/aro_hcp/v1alpha1/provision_shards/" + id, "", false},
		{"clusters_mgmt href", "/api/clusters_mgmt/v1/clusters/" + id, "", false},
		{"bare id", id, "", false},
		{"trailing slash", href + "/", "", false},
		{"subresource", href + "/provision_shard", "", false},
		{"uppercase", strings.ToUpper(href), "", false},
		{"short id", "/api/aro_hcp/v1alpha1/clusters/abc", "", false},
		{"full URL", "https://cs.example.com" + href, "", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseClusterHREF(tt.href)
			if !tt.ok {
				require.ErrorIs(t, err, ErrInvalidID)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	_, err = ClusterHREF("NOPE")
	require.ErrorIs(t, err, ErrInvalidID)
}

func TestParseAnyClusterHREF(t *testing.T) {
	t.Parallel()
	id := NewClusterID()
	tests := []struct {
		name       string
		href       string
		wantLegacy bool
		ok         bool
	}{
		{"aro_hcp", "/api/aro_hcp/v1alpha1/clusters/" + id, false, true},
		{"clusters_mgmt maps to the same id", "/api/clusters_mgmt/v1/clusters/" + id, true, true},
		{"clusters_mgmt node pool", "/api/clusters_mgmt/v1/clusters/" + id + "/node_pools/np", true, false},
		{"clusters_mgmt path with a space", "/api/clusters_mgmt/v1/clusters/a b", true, false},
		{"clusters_mgmt v2alpha1", "/api/clusters_mgmt/v2alpha1/clusters/" + id, false, false},
		{"empty", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, legacy, err := ParseAnyClusterHREF(tt.href)
			assert.Equal(t, tt.wantLegacy, legacy)
			if !tt.ok {
				require.ErrorIs(t, err, ErrInvalidID)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, id, got)
		})
	}
	// ARO-HCP's own documents carry clusters_mgmt ids of other shapes.
	for _, legacyID := range []string{"1243e9e9-d150-4ef1-9735-2bbc3cabc7d0", "9p2sk955gj", "cs-create-current"} {
		got, legacy, err := ParseAnyClusterHREF(LegacyClustersPath + "/" + legacyID)
		require.NoError(t, err, legacyID)
		assert.True(t, legacy)
		assert.Equal(t, legacyID, got)
	}
}

func TestShardHREF(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		href string
		want string
		ok   bool
	}{
		{"CS-generated id", "/api/aro_hcp/v1alpha1/provision_shards/2a4sf0rthp7ej6q1nj3pc79v4m8ps58s", "2a4sf0rthp7ej6q1nj3pc79v4m8ps58s", true},
		{"UUID id", "/api/aro_hcp/v1alpha1/provision_shards/916a44d3-6d0d-5bcb-8816-2945c804166e", "916a44d3-6d0d-5bcb-8816-2945c804166e", true},
		{"cluster href", "/api/aro_hcp/v1alpha1/clusters/2a4sf0rthp7ej6q1nj3pc79v4m8ps58s", "", false},
		{"empty id", "/api/aro_hcp/v1alpha1/provision_shards/", "", false},
		{"nested path", "/api/aro_hcp/v1alpha1/provision_shards/a/b", "", false},
		{"dot segment", "/api/aro_hcp/v1alpha1/provision_shards/..", "", false},
		{"query", "/api/aro_hcp/v1alpha1/provision_shards/a?x=1", "", false},
		{"leading dash", "/api/aro_hcp/v1alpha1/provision_shards/-a", "", false},
		{"too long", "/api/aro_hcp/v1alpha1/provision_shards/" + strings.Repeat("a", 65), "", false},
		{"bare id", "2a4sf0rthp7ej6q1nj3pc79v4m8ps58s", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseShardHREF(tt.href)
			if !tt.ok {
				require.ErrorIs(t, err, ErrInvalidID)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			back, err := ShardHREF(got)
			require.NoError(t, err)
			assert.Equal(t, tt.href, back)
		})
	}
}

func TestSearchExpressions(t *testing.T) {
	t.Parallel()
	expr, err := ShardIdentity{AKSResourceID: "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/mc", ConsumerName: "c"}.SearchExpression()
	require.NoError(t, err)
	assert.Equal(t, "azure_shard.aks_management_cluster_resource_id='/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/mc' and maestro_config.consumer_name='c'", expr)

	_, err = ShardIdentity{AKSResourceID: "x"}.SearchExpression()
	require.Error(t, err, "every field is required")
}
