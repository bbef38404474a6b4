package controllertest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
)

const (
	fixtureCluster    = "hcpcluster-succeeded-minimal.json"
	fixtureMC1        = "constructed/fleet-managementcluster-1-ready-schedulable.json"
	fixtureReadDesire = "constructed/readdesire-capacity-stamp-1.json"
)

var mc1 = api.ManagementClusterResourceID("1")

// Each container's documents are found in their partition: the subscription, the stamp,
// the management cluster.
func TestPutAndStored(t *testing.T) {
	t.Parallel()
	k := New(t)
	cluster, err := api.ParseResourceID("/subscriptions/0465bc32-c654-41b8-8d87-9815d7abe8f6/resourceGroups/some-resource-group/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/some-hcp-cluster")
	require.NoError(t, err)
	readDesire := api.CapacityReadDesireResourceID(mc1)
	k.Put(t,
		Seed{Container: api.ResourcesContainer, Fixture: fixtureCluster},
		Seed{Container: api.FleetContainer, Fixture: fixtureMC1, Edits: []Edit{Set("properties.spec.schedulingPolicy", api.Unschedulable)}},
		Seed{Container: "Manifests-MC-1", Fixture: fixtureReadDesire},
	)
	assert.Equal(t, "0465bc32-c654-41b8-8d87-9815d7abe8f6", k.Stored(t, api.ResourcesContainer, cluster).PartitionKey)
	mc := k.Stored(t, api.FleetContainer, mc1)
	assert.Equal(t, "1", mc.PartitionKey)
	d, err := database.DecodeItem[api.ManagementClusterProperties](mc)
	require.NoError(t, err)
	assert.Equal(t, api.Unschedulable, d.Properties.Spec.SchedulingPolicy, "stored with its edits")
	assert.Equal(t, mc1.Key(), k.Stored(t, "Manifests-MC-1", readDesire).PartitionKey)
	assert.True(t, k.Exists(t, "Manifests-MC-1", readDesire))
	assert.False(t, k.Exists(t, api.FleetContainer, api.SchedulingResourceID(mc1)))
}

// Another writer's replace is guarded and counted like any writer's, keeps every other
// field, and reaches neither the hooks nor the data-flow record.
func TestReplaceStored(t *testing.T) {
	t.Parallel()
	hooks := &Hooks{}
	k := New(t, WithStore(hooks.Wrap))
	k.Put(t, Seed{Container: api.FleetContainer, Fixture: fixtureMC1})
	before := k.Stored(t, api.FleetContainer, mc1)
	after := k.ReplaceStored(t, api.FleetContainer, mc1, Set("properties.status.futureField", "x"))
	assert.NotEqual(t, before.ETag, after.ETag)
	assert.Equal(t, ExpectReplaced(t, before, Set("properties.status.futureField", "x")), StoredTree(t, k.Stored(t, api.FleetContainer, mc1)))
	replaces, creates := hooks.Writes()
	assert.Empty(t, replaces)
	assert.Empty(t, creates)
}
