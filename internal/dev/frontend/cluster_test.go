package frontend

import (
	"encoding/json"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
)

func TestCluster(t *testing.T) {
	now := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	ha, err := Cluster(1, false, now)
	require.NoError(t, err)
	single, err := Cluster(2, true, now)
	require.NoError(t, err)

	rid, err := ha.ParsedResourceID()
	require.NoError(t, err)
	assert.Equal(t, "hcp-local-1", rid.Name())
	assert.Equal(t, api.CosmosID(ha.ResourceID), ha.ID)
	pk, err := api.ResourcesPartitionKey(rid)
	require.NoError(t, err)
	assert.Equal(t, pk, ha.PartitionKey)
	assert.Equal(t, "mrg-hcp-local-1", ha.Properties.CustomerProperties.Platform.ManagedResourceGroup)
	assert.Equal(t, now, ha.Properties.SystemData.CreatedAt)
	assert.Nil(t, ha.Properties.ServiceProvider().ExperimentalFeatures)
	assert.Equal(t, "Accepted", ha.Properties.ServiceProvider().ProvisioningState)
	assert.Equal(t, api.SingleReplica, single.Properties.ServiceProvider().ExperimentalFeatures.SingleReplica)
	assert.NotEqual(t, ha.PartitionKey, single.PartitionKey, "each cluster has its own subscription")

	body, err := api.Encode(ha)
	require.NoError(t, err)
	for _, gone := range []string{nonSwift.subscription, nonSwift.group, nonSwift.name, nonSwift.managedResourceGroup, `"_rid"`, `"_etag"`} {
		assert.NotContains(t, string(body), gone)
	}
	assert.Contains(t, string(body), `"networkType":"OVNKubernetes"`, "the frontend's fields are kept")
	assert.Empty(t, ha.Properties.CustomerProperties.Platform.VnetIntegrationSubnetID, "Cluster writes a non-SWIFT cluster, as it always did")
}

// A SWIFT cluster is the non-SWIFT one plus the vnet-integration subnet the frontend
// stores, which passes ARO-HCP's own rules for it; nothing else differs but the
// fixture's operation ID.
func TestClusterOfKind(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		kind Kind
	}{
		{"SWIFT HA", Kind{Swift: true}},
		{"SWIFT single replica", Kind{Swift: true, SingleReplica: true}},
		{"non-SWIFT HA", Kind{}},
		{"non-SWIFT single replica", Kind{SingleReplica: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := ClusterOfKind(7, tt.kind, now)
			require.NoError(t, err)
			plain, err := Cluster(7, tt.kind.SingleReplica, now)
			require.NoError(t, err)
			assert.Equal(t, plain.ResourceID, doc.ResourceID)
			assert.Equal(t, plain.ID, doc.ID)
			assert.Equal(t, plain.PartitionKey, doc.PartitionKey)
			assert.Equal(t, tt.kind.SingleReplica, doc.Properties.ServiceProvider().ExperimentalFeatures != nil &&
				doc.Properties.ServiceProvider().ExperimentalFeatures.SingleReplica == api.SingleReplica)

			pl := doc.Properties.CustomerProperties.Platform
			if !tt.kind.Swift {
				assert.Equal(t, tree(t, plain), tree(t, doc))
				assert.Empty(t, pl.VnetIntegrationSubnetID)
				return
			}
			rid, err := doc.ParsedResourceID()
			require.NoError(t, err)
			subnet, err := api.ParseResourceID(pl.VnetIntegrationSubnetID)
			require.NoError(t, err)
			cluster, err := api.ParseResourceID(pl.SubnetID)
			require.NoError(t, err)
			assert.True(t, strings.EqualFold("Microsoft.Network/virtualNetworks/subnets", subnet.ResourceType()), subnet.ResourceType())
			assert.Equal(t, rid.SubscriptionID, subnet.SubscriptionID, "in the cluster's subscription")
			assert.Equal(t, path.Dir(path.Dir(cluster.String())), path.Dir(path.Dir(subnet.String())), "in the cluster subnet's VNet")
			assert.NotEqual(t, cluster.Name(), subnet.Name(), "a subnet of its own")
			assert.NotEqual(t, strings.ToLower(pl.ManagedResourceGroup), strings.ToLower(subnet.ResourceGroup), "not in the managed resource group")

			got, want := tree(t, doc), tree(t, plain)
			platform := func(m map[string]any) map[string]any {
				return m["properties"].(map[string]any)["customerProperties"].(map[string]any)["platform"].(map[string]any)
			}
			assert.Equal(t, pl.VnetIntegrationSubnetID, platform(got)["vnetIntegrationSubnetId"], "the stored key's spelling")
			delete(platform(got), "vnetIntegrationSubnetId")
			for _, m := range []map[string]any{got, want} {
				delete(m["properties"].(map[string]any)["serviceProviderProperties"].(map[string]any), "activeOperationId")
			}
			assert.Equal(t, want, got, "the subnet is the only field the SWIFT cluster adds")
		})
	}
}

func TestMix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mix  Mix
		want map[int]Kind
	}{
		{"defaults of a local run", Mix{SingleReplicaEvery: 8, NonSwiftEvery: 5}, map[int]Kind{
			1: {Swift: true}, 5: {}, 8: {Swift: true, SingleReplica: true}, 10: {}, 16: {Swift: true, SingleReplica: true}, 40: {SingleReplica: true},
		}},
		{"zero turns a choice off", Mix{}, map[int]Kind{1: {Swift: true}, 5: {Swift: true}, 8: {Swift: true}}},
		{"every cluster", Mix{SingleReplicaEvery: 1, NonSwiftEvery: 1}, map[int]Kind{1: {SingleReplica: true}, 2: {SingleReplica: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for n, want := range tt.want {
				assert.Equal(t, want, tt.mix.Kind(n), "cluster %d", n)
			}
		})
	}
	counts := map[Kind]int{}
	for n := 1; n <= 40; n++ {
		counts[Mix{SingleReplicaEvery: 8, NonSwiftEvery: 5}.Kind(n)]++
	}
	assert.Equal(t, map[Kind]int{{Swift: true}: 28, {Swift: true, SingleReplica: true}: 4, {}: 7, {SingleReplica: true}: 1}, counts,
		"40 clusters: most SWIFT, so swift NICs stay scarce")
}

func tree(t *testing.T, doc *api.Cluster) map[string]any {
	t.Helper()
	b, err := api.Encode(doc)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func TestSubscription(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tenant string
		wantNull     bool
	}{
		{name: "with tenant", tenant: Tenant},
		{name: "not yet told by ARM", tenant: "", wantNull: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sub, err := Subscription(SubscriptionID(3), tt.tenant)
			require.NoError(t, err)
			assert.Equal(t, "/subscriptions/"+SubscriptionID(3), sub.ResourceID)
			assert.Equal(t, api.CosmosID(sub.ResourceID), sub.ID)
			assert.Equal(t, SubscriptionID(3), sub.PartitionKey)
			assert.Equal(t, tt.tenant, sub.Properties.TenantID())
			body, err := api.Encode(sub)
			require.NoError(t, err)
			assert.Contains(t, string(body), `"state":"Registered"`)
			assert.NotContains(t, string(body), "6b690bec", "the fixture's subscription is replaced everywhere")
			if tt.wantNull {
				assert.Contains(t, string(body), `"properties":null`)
			}
		})
	}
}
