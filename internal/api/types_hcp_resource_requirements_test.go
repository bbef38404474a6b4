package api_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

const requirementsFixture = "constructed/fleet-hcpresourcerequirements-default.json"

func TestHCPResourceRequirementsIdentity(t *testing.T) {
	rid, err := api.ParseResourceID(api.HCPResourceRequirementsDefaultID)
	require.NoError(t, err, "a provider-level ID with no subscription parses")
	assert.Equal(t, api.HCPResourceRequirementsResourceType, rid.ResourceType())
	assert.Equal(t, api.HCPResourceRequirementsDefaultName, rid.Name())
	assert.Empty(t, rid.SubscriptionID)
	assert.Nil(t, rid.Parent(), "a top-level fleet resource has no parent")
	self, ok := rid.Ancestor(strings.ToUpper(api.HCPResourceRequirementsResourceType))
	require.True(t, ok)
	assert.Same(t, rid, self)

	built := api.HCPResourceRequirementsResourceID("Default")
	assert.Equal(t, api.HCPResourceRequirementsDefaultID, built.String(), "fleet IDs are built lowercased")

	// The fixture, as ARO-HCP stores it, fixes the id, the envelope type and the partition key.
	id, fixtureRID, fixtureType := api.Identify(arohcp.Get(requirementsFixture))
	assert.Equal(t, api.HCPResourceRequirementsDefaultID, fixtureRID)
	assert.Equal(t, api.HCPResourceRequirementsResourceType, fixtureType)
	assert.Equal(t, id, api.CosmosID(api.HCPResourceRequirementsDefaultID))

	d := api.NewHCPResourceRequirements("Default", nil)
	assert.Equal(t, id, d.ID)
	assert.Equal(t, api.HCPResourceRequirementsDefaultName, d.PartitionKey, "a top-level fleet resource is partitioned by its own name")
	assert.Equal(t, api.HCPResourceRequirementsResourceType, d.ResourceType)
	assert.Equal(t, api.HCPResourceRequirementsDefaultID, d.Metadata().ResourceID)
	assert.Equal(t, api.HCPResourceRequirementsDefaultName, d.Metadata().PartitionKey)
}

func TestHCPResourceRequirementsFixtureDecodes(t *testing.T) {
	d, err := api.Decode[api.HCPResourceRequirementsProperties](arohcp.Get(requirementsFixture))
	require.NoError(t, err)
	assert.Equal(t, "default", d.PartitionKey)
	assert.Equal(t, int64(299), d.InstanceVersion())
	s := d.Properties.Status
	require.NotNil(t, s)
	c := api.FindCondition(s.Conditions, api.HCPResourceRequirementsConditionDataCurrent)
	require.NotNil(t, c)
	assert.Equal(t, api.ConditionTrue, c.Status)
	assert.Equal(t, api.HCPResourceRequirementsReasonComputed, c.Reason)
	assert.Equal(t, time.Date(2026, 8, 21, 9, 30, 9, 0, time.UTC), s.LastReportedAt)
	assert.Equal(t, 2, s.SampleSize)
	assert.Equal(t, api.ResourceList{api.SwiftNIC: "4", "cpu": "1808m", "memory": "10891766Ki"}, s.AverageUsage)
	assert.Equal(t, api.ResourceList{api.SwiftNIC: "4", "cpu": "3630m", "memory": "14208Mi"}, s.AverageRequests)
}

// Decoding the fixture as its own type and encoding it again loses and changes nothing,
// even with fields the type does not know added at every level it decodes.
func TestHCPResourceRequirementsRoundTripKeepsEveryField(t *testing.T) {
	data := arohcp.Get(requirementsFixture)
	want := tree(t, data)
	root := want.(map[string]any)
	setPath(t, root, []string{"u0"}, "envelope")
	setPath(t, root, []string{"properties", "u1"}, []any{"properties"})
	setPath(t, root, []string{"properties", "cosmosMetadata", "u2"}, true)
	setPath(t, root, []string{"properties", "status", "u3"}, map[string]any{"status": "x"})
	setPath(t, root, []string{"properties", "status", "averageUsage", "example.com/gpu"}, "1")
	cond := root["properties"].(map[string]any)["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)
	cond["observedGeneration"] = json.Number("7")
	cond["u4"] = nil
	in, err := json.Marshal(want)
	require.NoError(t, err)

	d, err := api.Decode[api.HCPResourceRequirementsProperties](in)
	require.NoError(t, err)
	out, err := api.Encode(d)
	require.NoError(t, err)
	assert.Equal(t, want, tree(t, out))

	copied, err := api.Encode(d.DeepCopy())
	require.NoError(t, err)
	assert.Equal(t, want, tree(t, copied), "a lister's DeepCopy keeps every field too")
}

func TestHCPResourceRequirementsEncodesAsARO(t *testing.T) {
	tests := []struct {
		name   string
		status *api.HCPResourceRequirementsStatus
		want   string
	}{
		{
			name:   "no data: sampleSize is written even when 0, as ARO-HCP always writes it",
			status: &api.HCPResourceRequirementsStatus{},
			want:   `"status":{"sampleSize":0}`,
		},
		{
			name: "computed",
			status: &api.HCPResourceRequirementsStatus{
				LastReportedAt:  time.Date(2026, 8, 21, 9, 30, 9, 0, time.UTC),
				AverageUsage:    api.ResourceList{"cpu": "1"},
				AverageRequests: api.ResourceList{"cpu": "2"},
				SampleSize:      3,
			},
			want: `"status":{"lastReportedAt":"2026-08-21T09:30:09Z","averageUsage":{"cpu":"1"},"averageRequests":{"cpu":"2"},"sampleSize":3}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := api.Encode(api.NewHCPResourceRequirements(api.HCPResourceRequirementsDefaultName, tt.status))
			require.NoError(t, err)
			assert.Contains(t, string(out), tt.want)
		})
	}
}
