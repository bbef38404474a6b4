package scenario

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// storedSPC is a placed SPC with a CapacityAvailable condition, seeded as the chaos run
// seeds every SPC, in a memory store.
func storedSPC(t *testing.T) (database.Store, *api.ServiceProviderCluster, []seededField) {
	t.Helper()
	store := memory.New()
	resources := store.Container(api.ResourcesContainer)
	cluster := api.MustParseResourceID(testCluster("a"))
	spcID := api.ServiceProviderClusterResourceID(cluster)
	pk, err := api.ResourcesPartitionKey(spcID)
	require.NoError(t, err)
	doc := api.NewDocument(spcID, pk, api.ServiceProviderClusterProperties{
		Spec: &api.ServiceProviderClusterSpec{ManagementClusterResourceID: testMC1},
		Status: &api.ServiceProviderClusterStatus{Placement: &api.PlacementStatus{Conditions: []api.Condition{{
			Type: placement.ConditionCapacityAvailable, Status: api.ConditionFalse, Reason: placement.ConditionReasonInsufficientCapacity,
		}}}},
	})
	_, err = database.Create(t.Context(), resources, doc)
	require.NoError(t, err)
	seeded, err := seedOne[api.ServiceProviderClusterProperties](t.Context(), resources, pk, spcID.String(), spcSeeds)
	require.NoError(t, err)
	stored, err := database.Get[api.ServiceProviderClusterProperties](t.Context(), resources, pk, spcID.String())
	require.NoError(t, err)
	return store, stored, seeded
}

func TestSeedsReachArraysAndSurviveHcpschedsWrites(t *testing.T) {
	store, spc, seeded := storedSPC(t)
	kinds := seededKinds(seeded)
	assert.Equal(t, map[string]int{"service provider cluster": 5, "service provider cluster ARO-HCP field": 3, "condition element": 1, "foreign condition": 1}, kinds)

	// Placement rewrites its condition and spec the way it does, through the codec.
	update := spc.DeepCopy()
	update.Properties.Spec.ManagementClusterPlacementTime = time.Now()
	api.SetCondition(&update.Properties.Status.Placement.Conditions, api.Condition{
		Type: placement.ConditionCapacityAvailable, Status: api.ConditionTrue, Reason: placement.ConditionReasonAvailable,
	}, time.Now())
	_, err := database.Replace(t.Context(), store.Container(api.ResourcesContainer), update)
	require.NoError(t, err)
	lost, err := lostFields(t.Context(), store, seeded)
	require.NoError(t, err)
	assert.Empty(t, lost)
}

// A writer that drops a field inside an array element, a foreign element of an array, or
// a foreign ARO-HCP array is caught, field by field.
func TestLostFieldsCatchWhatAWriterDropped(t *testing.T) {
	tests := map[string]struct {
		edit func(status map[string]any)
		want string
	}{
		"a field inside hcpsched's own condition": {
			edit: func(status map[string]any) {
				delete(status["placement"].(map[string]any)["conditions"].([]any)[0].(map[string]any), extraField)
			},
			want: "properties.status.placement.conditions[type=CapacityAvailable]." + extraField,
		},
		"another component's condition": {
			edit: func(status map[string]any) {
				p := status["placement"].(map[string]any)
				p["conditions"] = p["conditions"].([]any)[:1]
			},
			want: "properties.status.placement.conditions[type=" + foreignConditionType + "]." + extraField,
		},
		"an element of an ARO-HCP array": {
			edit: func(status map[string]any) {
				status["desiredVersionChannels"] = []any{"candidate-4.21"}
			},
			want: "properties.status.desiredVersionChannels",
		},
		"a field inside an element of an ARO-HCP array": {
			edit: func(status map[string]any) {
				delete(status["control_plane_version"].(map[string]any)["active_versions"].([]any)[0].(map[string]any), extraField)
			},
			want: "properties.status.control_plane_version",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			store, spc, seeded := storedSPC(t)
			resources := store.Container(api.ResourcesContainer)
			item, err := resources.Get(t.Context(), spc.PartitionKey, spc.ID)
			require.NoError(t, err)
			var tree map[string]any
			require.NoError(t, json.Unmarshal(item.Body, &tree))
			tt.edit(tree["properties"].(map[string]any)["status"].(map[string]any))
			body, err := json.Marshal(tree)
			require.NoError(t, err)
			_, err = resources.Replace(t.Context(), item.PartitionKey, item.ID, body, item.ETag)
			require.NoError(t, err)

			lost, err := lostFields(t.Context(), store, seeded)
			require.NoError(t, err)
			assert.Equal(t, []string{spc.ResourceID + " " + tt.want}, lost)
		})
	}
}
