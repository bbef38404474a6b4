package controllertest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
)

// A cluster re-identified to a resource ID in ARM casing carries that identity
// everywhere the frontend's does, and nothing of the template's.
func TestClusterFor(t *testing.T) {
	t.Parallel()
	rid := api.MustParseResourceID("/subscriptions/0465BC32-C654-41B8-8D87-9815D7ABE8F6/resourceGroups/Some-RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/Placed")
	c := ClusterFor(t, rid)

	assert.Equal(t, rid.String(), c.ResourceID)
	assert.Equal(t, api.CosmosID(rid.String()), c.ID)
	assert.Equal(t, "0465bc32-c654-41b8-8d87-9815d7abe8f6", c.PartitionKey)
	assert.Equal(t, c.PartitionKey, c.Metadata().PartitionKey)
	assert.Equal(t, rid.String(), c.Metadata().ResourceID)
	platform := c.Properties.CustomerProperties.Platform
	assert.Equal(t, "mrg-Placed", platform.ManagedResourceGroup)
	subnet, err := api.ParseResourceID(platform.SubnetID)
	require.NoError(t, err)
	assert.Equal(t, rid.SubscriptionID, subnet.SubscriptionID, "the subnet is in the cluster's subscription")
	assert.Equal(t, frontend.IdentityURL, c.Properties.ServiceProvider().ManagedIdentitiesDataPlaneIdentityURL)

	body, err := api.Encode(c)
	require.NoError(t, err)
	tmpl, err := frontend.Cluster(1, false, time.Now())
	require.NoError(t, err)
	from, err := tmpl.ParsedResourceID()
	require.NoError(t, err)
	for _, gone := range []string{from.SubscriptionID, from.ResourceGroup, from.Name(), "tenantId"} {
		assert.NotContains(t, string(body), gone)
	}
	assert.Contains(t, string(body), `"networkType":"OVNKubernetes"`, "the frontend's fields are kept")
}

// FixtureCluster is the fixture, field for field, with what the frontend adds to it on a
// PUT: the identity URL and the creation time. The store's system properties are the
// store's to assign.
func TestFixtureCluster(t *testing.T) {
	t.Parallel()
	got, err := api.Encode(FixtureCluster(t))
	require.NoError(t, err)
	tree := Tree(t, got)
	props := tree["properties"].(map[string]any)
	assert.Equal(t, frontend.IdentityURL, props["serviceProviderProperties"].(map[string]any)["managedIdentitiesDataPlaneIdentityURL"])
	delete(props["serviceProviderProperties"].(map[string]any), "managedIdentitiesDataPlaneIdentityURL")
	assert.NotEmpty(t, props["systemData"].(map[string]any)["createdAt"])
	delete(props["systemData"].(map[string]any), "createdAt")

	assert.Equal(t, WithoutSystem(Tree(t, arohcp.Get(fixtureClusterName))), tree)
	assert.NotContains(t, string(got), "tenantId", "the tenant is the subscription's")
}

func TestStoreSubscription(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tenant string
		wantRaw      string
	}{
		{name: "with tenant", tenant: Tenant, wantRaw: `{"tenantId":"` + Tenant + `"}`},
		{name: "properties null", wantRaw: `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := New(t)
			rid := StoreSubscription(t, k.Resources, "0465BC32-C654-41B8-8D87-9815D7ABE8F6", tt.tenant)
			assert.True(t, strings.EqualFold("/subscriptions/0465BC32-C654-41B8-8D87-9815D7ABE8F6", rid.String()))
			item := k.Stored(t, api.ResourcesContainer, rid)
			var stored struct {
				ResourceType string `json:"resourceType"`
				Properties   struct {
					Properties json.RawMessage `json:"properties"`
				} `json:"properties"`
			}
			require.NoError(t, json.Unmarshal(item.Body, &stored))
			assert.Equal(t, api.SubscriptionResourceType, stored.ResourceType)
			assert.JSONEq(t, tt.wantRaw, string(stored.Properties.Properties))
			sub, err := database.DecodeItem[api.SubscriptionProperties](item)
			require.NoError(t, err)
			assert.Equal(t, tt.tenant, sub.Properties.TenantID())
		})
	}
}

// ChooseVersion writes the desired version and nothing else, as a guarded replace that
// bumps instanceVersion; losing the race to another SPC writer, it writes again on what
// that writer stored.
func TestChooseVersion(t *testing.T) {
	t.Parallel()
	hooks := &Hooks{}
	k := New(t)
	c := FixtureCluster(t)
	cluster := StoreCluster(t, k.Resources, c)
	spcID := api.ServiceProviderClusterResourceID(cluster)
	spc := api.NewDocument(spcID, c.PartitionKey, api.ServiceProviderClusterProperties{})
	spc.Properties.SetUnknown("futureField", json.RawMessage(`"kept"`))
	_, err := database.Create(t.Context(), k.Resources, spc)
	require.NoError(t, err)
	var won database.Item
	hooks.BeforeNextReplace(func() {
		won = k.ReplaceStored(t, api.ResourcesContainer, spcID, Set("properties.status.managementClusterResourceID", "mc"))
	})

	ChooseVersion(t, hooks.Wrap(k.Memory).Container(api.ResourcesContainer), cluster, WaitFor)

	replaces, _ := hooks.Writes()
	require.Len(t, replaces, 2, "lost once, then written again")
	require.ErrorIs(t, replaces[0].Err, database.ErrPreconditionFailed)
	require.NoError(t, replaces[1].Err)
	after := k.Stored(t, api.ResourcesContainer, spcID)
	assert.Equal(t, ExpectReplaced(t, won, Set(desiredVersionPath, DesiredVersion)), StoredTree(t, after))
	got, err := database.DecodeItem[api.ServiceProviderClusterProperties](after)
	require.NoError(t, err)
	assert.Equal(t, DesiredVersion, got.Properties.DesiredControlPlaneVersion())
}
