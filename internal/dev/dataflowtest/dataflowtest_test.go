package dataflowtest

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after string
		want          []string
	}{
		{
			name:  "create lists every leaf, empty objects included, system properties dropped",
			after: `{"id":"x","_etag":"e","_ts":1,"properties":{"spec":{},"status":{"a":{"b":1}}}}`,
			want:  []string{"id", "spec", "status.a.b"},
		},
		{
			name:   "changed, added and removed leaves",
			before: `{"id":"x","properties":{"a":1,"b":{"c":"old"},"gone":{"d":true}}}`,
			after:  `{"id":"x","properties":{"a":1,"b":{"c":"new"},"added":"v"}}`,
			want:   []string{"added", "b.c", "gone.d"},
		},
		{
			name:   "an object the write empties changed the leaves it lost",
			before: `{"id":"x","properties":{"spec":{"mc":"a","at":"t"}}}`,
			after:  `{"id":"x","properties":{"spec":{}}}`,
			want:   []string{"spec.at", "spec.mc"},
		},
		{
			name:   "conditions are keyed by type",
			before: `{"properties":{"status":{"conditions":[{"type":"A","status":"True"},{"type":"B","status":"False"}]}}}`,
			after:  `{"properties":{"status":{"conditions":[{"type":"B","status":"True"},{"type":"A","status":"True"}]}}}`,
			want:   []string{"status.conditions[B].status"},
		},
		{
			name:   "other arrays by index",
			before: `{"properties":{"ids":["a","b"]}}`,
			after:  `{"properties":{"ids":["a"]}}`,
			want:   []string{"ids[]"},
		},
		{
			name:   "unchanged document",
			before: `{"_etag":"1","properties":{"a":[1,2]}}`,
			after:  `{"_etag":"2","properties":{"a":[1,2]}}`,
			want:   []string{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before []byte
			if tc.before != "" {
				before = []byte(tc.before)
			}
			got, err := Diff(before, []byte(tc.after))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// The check passes on the real document for what the placement controller writes, and
// fails once a row it relies on is removed from a copy.
func TestCheckFailsWhenAWriteRowIsMissing(t *testing.T) {
	b, err := os.ReadFile("../../../docs/cosmos-data-flow.md")
	require.NoError(t, err)
	doc := string(b)
	writes := []Write{
		{Controller: "Placement", Type: "ServiceProviderCluster", Path: "spec.managementClusterResourceID"},
		{Controller: "Placement", Type: "ServiceProviderCluster", Path: "status.placement.conditions[CapacityAvailable].reason"},
		{Controller: "Placement", Type: "ManagementClusterScheduling", Path: "status.pendingAssignedClusters[]"},
	}
	sections := ParseDoc(doc)
	require.NotEmpty(t, sections)
	assert.Empty(t, Check(sections, writes))

	row := "**`spec.managementClusterResourceID`**"
	require.Contains(t, doc, row)
	broken := strings.ReplaceAll(doc, row, "`spec.managementClusterResourceID`")
	problems := Check(ParseDoc(broken), writes)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], "Placement (placement_controller.go): writes ServiceProviderCluster `spec.managementClusterResourceID`")

	// A path recorded under the wrong document type is not covered either.
	problems = Check(sections, []Write{{Controller: "Placement", Type: "HCPOpenShiftCluster", Path: "spec.managementClusterResourceID"}})
	assert.Len(t, problems, 1)
	// Nor is a write by a controller no section is titled for.
	problems = Check(sections, []Write{{Controller: "Unknown", Type: "Stamp", Path: "spec"}})
	assert.Len(t, problems, 1)
}

func TestCovers(t *testing.T) {
	assert.True(t, covers("status.observedResources", "status.observedResources.capacity.cpu"))
	assert.True(t, covers("status.conditions[Ready]", "status.conditions[Ready].status"))
	assert.True(t, covers("status.pendingAssignedClusters", "status.pendingAssignedClusters[]"))
	assert.False(t, covers("status.observed", "status.observedResources"))
	assert.False(t, covers("status.conditions[Ready]", "status.conditions[Registered].status"))
}
