package api_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
)

func TestSetCondition(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	var conds []api.Condition
	require.True(t, api.SetCondition(&conds, api.Condition{Type: "Ready", Status: api.ConditionFalse, Reason: "Waiting"}, t0))
	assert.Equal(t, t0, conds[0].LastTransitionTime)

	tests := []struct {
		name        string
		set         api.Condition
		wantChanged bool
		wantTime    time.Time
	}{
		{"same status, reason and message", api.Condition{Type: "Ready", Status: api.ConditionFalse, Reason: "Waiting"}, false, t0},
		{"new message keeps the transition time", api.Condition{Type: "Ready", Status: api.ConditionFalse, Reason: "Waiting", Message: "still"}, true, t0},
		{"new status moves it", api.Condition{Type: "Ready", Status: api.ConditionTrue, Reason: "Done"}, true, t1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.wantChanged, api.SetCondition(&conds, tt.set, t1))
			assert.Equal(t, tt.wantTime, api.FindCondition(conds, "Ready").LastTransitionTime)
		})
	}
	assert.True(t, api.IsConditionTrue(conds, "Ready"))
	assert.False(t, api.IsConditionTrue(conds, "Other"))
	assert.Len(t, conds, 1)
}

func TestFleetIDs(t *testing.T) {
	mc := api.ManagementClusterResourceID("Stamp-1")
	assert.Equal(t, "/providers/microsoft.redhatopenshift/stamps/stamp-1/managementclusters/default", mc.String())
	assert.Equal(t, api.ManagementClusterResourceType, mc.ResourceType())
	assert.Equal(t, mc.String()+"/scheduling/default", api.SchedulingResourceID(mc).String())
	assert.Equal(t, api.ManagementClusterSchedulingResourceType, api.SchedulingResourceID(mc).ResourceType())
	assert.Equal(t, api.ReadDesireResourceType, api.CapacityReadDesireResourceID(mc).ResourceType())
	pk, err := api.FleetPartitionKey(api.SchedulingResourceID(mc))
	require.NoError(t, err)
	assert.Equal(t, "stamp-1", pk)
	_, err = api.FleetPartitionKey(api.MustParseResourceID("/subscriptions/s/resourceGroups/r/providers/p/t/n"))
	assert.Error(t, err)
	cluster := api.MustParseResourceID("/subscriptions/SUB/resourceGroups/r/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/C")
	pk, err = api.ResourcesPartitionKey(cluster)
	require.NoError(t, err)
	assert.Equal(t, "sub", pk)
	assert.Equal(t, api.ServiceProviderClusterResourceType, api.ServiceProviderClusterResourceID(cluster).ResourceType())
	assert.Equal(t, api.ServiceProviderClusterResourceID(cluster).String(), api.ServiceProviderClusterID(cluster), "the string form is the ResourceID's")
	assert.Equal(t, "/subscriptions/SUB/resourceGroups/r/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/C/serviceProviderClusters/default", api.ServiceProviderClusterID(cluster))
	// The fixtures' ids confirm the builders match ARO-HCP's.
	assert.Equal(t, "a426e643-d4f4-5585-b911-5546d03248aa", api.CosmosID(api.SchedulingResourceID(api.ManagementClusterResourceID("1")).String()))
}
