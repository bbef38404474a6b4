package docwritetest

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
)

// Differences is what the field-preservation test rests on: it must see every change
// outside the owned fields, and accept exactly the stamps of a write.
func TestDifferences(t *testing.T) {
	t.Parallel()
	const before = `{"id":"x","_etag":"\"e1\"","_ts":1,"properties":{"cosmosMetadata":{"resourceID":"/r","etag":"\"e0\"","instanceVersion":3},` +
		`"spec":{"policy":"A","foreign":{"n":1.0}},"status":{"conditions":[{"type":"Other","status":"True"},{"type":"Ready","status":"True"}]}}}`
	owned := []string{"properties.spec.policy", "properties.status.conditions[Ready]"}
	tests := []struct {
		name, after string
		want        []string
	}{
		{
			// Ready2 is not owned: adding it is the one difference.
			name: "owned fields and the write's stamps changed beside a condition that is not owned",
			after: `{"id":"x","_etag":"\"e2\"","_ts":2,"properties":{"cosmosMetadata":{"resourceID":"/r","etag":"\"e1\"","instanceVersion":4,"partitionKey":"p"},` +
				`"spec":{"policy":"B","foreign":{"n":1.0}},"status":{"conditions":[{"type":"Other","status":"True"},{"type":"Ready","status":"False"},{"type":"Ready2"}]}}}`,
			want: []string{"properties.status.conditions: conditions other than [Ready] changed:\n    before [{\"type\":\"Other\",\"status\":\"True\"}]\n    after  [{\"type\":\"Other\",\"status\":\"True\"} {\"type\":\"Ready2\"}]"},
		},
		{
			name: "a foreign value respelled is a difference",
			after: `{"id":"x","_etag":"\"e2\"","properties":{"cosmosMetadata":{"resourceID":"/r","etag":"\"e1\"","instanceVersion":4},` +
				`"spec":{"policy":"A","foreign":{"n":1}},"status":{"conditions":[{"type":"Other","status":"True"},{"type":"Ready","status":"True"}]}}}`,
			want: []string{`properties.spec.foreign: was {"n":1.0}, is {"n":1}`},
		},
		{
			name: "a dropped field and stamps that are not the write's",
			after: `{"id":"x","_etag":"\"e2\"","properties":{"cosmosMetadata":{"etag":"\"e0\"","instanceVersion":3},` +
				`"spec":{"policy":"A"},"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"Other","status":"True"}]}}}`,
			want: []string{
				`properties.cosmosMetadata.etag: is "\"e0\"", want the etag written over, "\"e1\""`,
				`properties.cosmosMetadata.instanceVersion: is 3, want 4`,
				`properties.cosmosMetadata.resourceID: was "/r", is absent`,
				`properties.spec.foreign: was {"n":1.0}, is absent`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Differences([]byte(before), []byte(tc.after), owned)
			require.NoError(t, err)
			assert.ElementsMatch(t, tc.want, got)
		})
	}
}

func TestOwnedDifferences(t *testing.T) {
	t.Parallel()
	owned := []string{"properties.spec.policy", "properties.status.conditions[Ready]"}
	want := `{"properties":{"spec":{"policy":"B"},"status":{"conditions":[{"type":"Ready","status":"False","message":null}]}}}`
	got, err := OwnedDifferences([]byte(want), []byte(`{"properties":{"spec":{"policy":"B"},"status":{"conditions":[{"type":"X"},{"type":"Ready","status":"False"}]}}}`), owned)
	require.NoError(t, err)
	assert.Empty(t, got, "the owned condition is found by type; null is absent")
	got, err = OwnedDifferences([]byte(want), []byte(`{"properties":{"spec":{},"status":{"conditions":[{"type":"Ready","status":"True"}]}}}`), owned)
	require.NoError(t, err)
	assert.Equal(t, []string{
		`properties.spec.policy: is null, want "B"`,
		`properties.status.conditions[Ready]: is {"status":"True","type":"Ready"}, want {"message":null,"status":"False","type":"Ready"}`,
	}, got)
}

// Lean keeps only what the Go types declare, at every depth; WithForeignFields adds a
// key to every struct-typed object and none to maps.
func TestLeanAndForeignFields(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"x","resourceID":"/providers/microsoft.redhatopenshift/stamps/1/managementclusters/default/scheduling/default","partitionKey":"1","properties":{"cosmosMetadata":{"etag":"e","x":1},"status":{"observedResources":{"usage":{"cpu":"1"},"y":2},"z":3},"w":4},"v":5}`)
	typ := reflect.TypeFor[api.Document[api.ManagementClusterSchedulingProperties]]()
	stripped, err := StripUndeclared(body, typ)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"x","resourceID":"/providers/microsoft.redhatopenshift/stamps/1/managementclusters/default/scheduling/default","partitionKey":"1","properties":{"cosmosMetadata":{"etag":"e"},"status":{"observedResources":{"usage":{"cpu":"1"}}}}}`, string(stripped))
	doc := Lean[api.ManagementClusterSchedulingProperties](t, body)
	_, kept := doc.Properties.Unknown("w")
	assert.False(t, kept)

	foreign, err := WithForeignFields(stripped, typ, "f")
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"x","resourceID":"/providers/microsoft.redhatopenshift/stamps/1/managementclusters/default/scheduling/default","partitionKey":"1","f":{"kept":true},"properties":{"f":{"kept":true},"cosmosMetadata":{"etag":"e","f":{"kept":true}},`+
		`"status":{"f":{"kept":true},"observedResources":{"f":{"kept":true},"usage":{"cpu":"1"}}}}}`, string(foreign))
}
