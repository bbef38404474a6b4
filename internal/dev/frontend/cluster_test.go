package frontend

import (
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
	for _, gone := range []string{fixtureSubscription, fixtureGroup, fixtureName, fixtureMRG, `"_rid"`, `"_etag"`} {
		assert.NotContains(t, string(body), gone)
	}
	assert.Contains(t, string(body), `"networkType":"OVNKubernetes"`, "the frontend's fields are kept")
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
