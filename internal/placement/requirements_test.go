package placement_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/placement"
)

const requirementsFixture = "constructed/fleet-hcpresourcerequirements-default.json"

func requirementsDoc(t testing.TB) *api.HCPResourceRequirements {
	t.Helper()
	d, err := api.Decode[api.HCPResourceRequirementsProperties](arohcp.Get(requirementsFixture))
	require.NoError(t, err)
	return d
}

func TestCostsFromRequirements(t *testing.T) {
	const (
		Ki = 1024
		Mi = 1024 * Ki
	)
	allResources := []string{"cpu", "memory", api.SwiftNIC}
	tests := []struct {
		name      string
		mutate    func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements
		resources []string
		want      []int64
		reason    placement.FallbackReason
	}{
		{
			// cpu max(1808m, 3630m); memory max(10891766Ki, 14208Mi); NICs 4 on both sides.
			name:      "the fixture: the larger of usage and requests, per resource",
			resources: allResources,
			want:      []int64{3630, 14208 * Mi * 1000, 4000},
		},
		{
			name:      "in the order asked for",
			resources: []string{api.SwiftNIC, "cpu"},
			want:      []int64{4000, 3630},
		},
		{
			name: "usage above requests wins",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status.AverageUsage["memory"] = "15Gi"
				return d
			},
			resources: []string{"memory"},
			want:      []int64{15 * 1024 * Mi * 1000},
		},
		{
			name: "a resource in requests only counts its requests",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				delete(d.Properties.Status.AverageUsage, "cpu")
				return d
			},
			resources: []string{"cpu"},
			want:      []int64{3630},
		},
		{
			name: "a resource in usage only counts its usage",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status.AverageRequests = nil
				return d
			},
			resources: []string{"memory"},
			want:      []int64{10891766 * Ki * 1000},
		},
		{
			name:      "nothing asked, nothing to fall back from",
			resources: nil,
			want:      []int64{},
		},
		{
			name:      "no document",
			mutate:    func(*api.HCPResourceRequirements) *api.HCPResourceRequirements { return nil },
			resources: allResources,
			reason:    placement.FallbackNoDocument,
		},
		{
			name: "a soft-deleted document is no document",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.MarkDeleted(d.Properties.Status.LastReportedAt)
				return d
			},
			resources: allResources,
			reason:    placement.FallbackNoDocument,
		},
		{
			name: "DataCurrent False (NoData)",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status.Conditions[0].Status = api.ConditionFalse
				d.Properties.Status.Conditions[0].Reason = api.HCPResourceRequirementsReasonNoData
				return d
			},
			resources: allResources,
			reason:    placement.FallbackNotCurrent,
		},
		{
			name: "DataCurrent Unknown",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status.Conditions[0].Status = api.ConditionUnknown
				return d
			},
			resources: allResources,
			reason:    placement.FallbackNotCurrent,
		},
		{
			name: "DataCurrent missing",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status.Conditions = nil
				return d
			},
			resources: allResources,
			reason:    placement.FallbackNotCurrent,
		},
		{
			name: "no status at all",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status = nil
				return d
			},
			resources: allResources,
			reason:    placement.FallbackNotCurrent,
		},
		{
			name: "sampleSize 0",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status.SampleSize = 0
				return d
			},
			resources: allResources,
			reason:    placement.FallbackNoSamples,
		},
		{
			name: "sampleSize negative",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status.SampleSize = -1
				return d
			},
			resources: allResources,
			reason:    placement.FallbackNoSamples,
		},
		{
			name:      "a counted resource in neither average",
			resources: []string{"cpu", "example.com/gpu"},
			reason:    placement.FallbackMissingResource,
		},
		{
			name: "both averages absent",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status.AverageUsage, d.Properties.Status.AverageRequests = nil, nil
				return d
			},
			resources: allResources,
			reason:    placement.FallbackMissingResource,
		},
		{
			name: "unparsable usage, even beside valid requests",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status.AverageUsage["cpu"] = "lots"
				return d
			},
			resources: allResources,
			reason:    placement.FallbackInvalidQuantity,
		},
		{
			name: "empty requests value",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status.AverageRequests["memory"] = ""
				return d
			},
			resources: allResources,
			reason:    placement.FallbackInvalidQuantity,
		},
		{
			name: "negative quantity",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status.AverageRequests[api.SwiftNIC] = "-3"
				return d
			},
			resources: allResources,
			reason:    placement.FallbackInvalidQuantity,
		},
		{
			name: "beyond int64 milli-units",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status.AverageUsage["memory"] = "9Ei"
				return d
			},
			resources: allResources,
			reason:    placement.FallbackInvalidQuantity,
		},
		{
			name: "zero on both sides: an HCP never costs nothing",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status.AverageUsage[api.SwiftNIC] = "0"
				d.Properties.Status.AverageRequests[api.SwiftNIC] = "0"
				return d
			},
			resources: allResources,
			reason:    placement.FallbackZeroCost,
		},
		{
			name: "zero on the only side present",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				delete(d.Properties.Status.AverageRequests, "cpu")
				d.Properties.Status.AverageUsage["cpu"] = "0m"
				return d
			},
			resources: []string{"cpu"},
			reason:    placement.FallbackZeroCost,
		},
		{
			name: "a zero average beside a non-zero one is not zero",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status.AverageUsage["cpu"] = "0"
				return d
			},
			resources: []string{"cpu"},
			want:      []int64{3630},
		},
		{
			name: "a sub-milli average counts as one milli-unit, not zero",
			mutate: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
				d.Properties.Status.AverageUsage["cpu"] = "1n"
				d.Properties.Status.AverageRequests["cpu"] = "0"
				return d
			},
			resources: []string{"cpu"},
			want:      []int64{1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := requirementsDoc(t)
			if tt.mutate != nil {
				doc = tt.mutate(doc)
			}
			got, reason := placement.CostsFromRequirements(doc, tt.resources)
			assert.Equal(t, tt.reason, reason)
			if tt.reason != "" {
				assert.Nil(t, got, "an unusable document gives no costs")
				assert.Contains(t, placement.FallbackReasons, tt.reason)
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFallbackReasonsAreDistinctLabels(t *testing.T) {
	seen := map[placement.FallbackReason]bool{}
	for _, r := range placement.FallbackReasons {
		assert.NotEmpty(t, r, "empty is success, never a reason")
		assert.Regexp(t, `^[a-z]+(_[a-z]+)*$`, string(r), "a reason is a metric label value")
		assert.False(t, seen[r], "%s listed twice", r)
		seen[r] = true
	}
	assert.Len(t, seen, 6)
}

// The fixture's caller keeps its document: reading costs changes nothing in it.
func TestCostsFromRequirementsLeavesTheDocumentAlone(t *testing.T) {
	doc := requirementsDoc(t)
	before, err := api.Encode(doc)
	require.NoError(t, err)
	_, reason := placement.CostsFromRequirements(doc, []string{"cpu", "memory", api.SwiftNIC})
	require.Empty(t, reason)
	after, err := api.Encode(doc)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
}

// FuzzCostsFromRequirements decodes arbitrary bytes as a requirements document and reads
// costs from whatever decodes: it never panics, and it gives either one positive cost per
// resource and no reason, or no costs and a listed reason.
func FuzzCostsFromRequirements(f *testing.F) {
	f.Add(arohcp.Get(requirementsFixture), "cpu")
	for _, doc := range []string{
		`{"id":"a","resourceID":"/providers/microsoft.redhatopenshift/hcpresourcerequirements/default","properties":{"status":{"conditions":[{"type":"DataCurrent","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"Computed","message":""}],"averageUsage":{"cpu":"1e99"},"averageRequests":{"cpu":"-0"},"sampleSize":1}}}`,
		`{"id":"a","resourceID":"/providers/microsoft.redhatopenshift/hcpresourcerequirements/default","properties":{"status":{"conditions":[{"type":"DataCurrent","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"","message":""}],"averageUsage":{"memory":"0.0001"},"sampleSize":9223372036854775807}}}`,
		`{"id":"a","resourceID":"/providers/microsoft.redhatopenshift/hcpresourcerequirements/default","properties":{"status":null}}`,
		`{"id":"a","resourceID":"/providers/microsoft.redhatopenshift/hcpresourcerequirements/default","properties":{"status":{"sampleSize":0}}}`,
		`{"id":"a","resourceID":"/providers/x/y/z","deletionTimestamp":"2026-01-01T00:00:00Z","properties":{}}`,
	} {
		f.Add([]byte(doc), "memory")
	}
	f.Fuzz(func(t *testing.T, data []byte, extra string) {
		doc, err := api.Decode[api.HCPResourceRequirementsProperties](data)
		if err != nil {
			doc = nil // a document the informer cannot decode never reaches placement
		}
		resources := []string{"cpu", "memory", api.SwiftNIC, extra}
		costs, reason := placement.CostsFromRequirements(doc, resources)
		if reason != "" {
			assert.Nil(t, costs)
			assert.Contains(t, placement.FallbackReasons, reason)
			return
		}
		require.Len(t, costs, len(resources))
		for i, c := range costs {
			assert.Positive(t, c, "%s", resources[i])
		}
	})
}
