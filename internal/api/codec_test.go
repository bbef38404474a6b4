package api_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

func tree(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

func setPath(t testing.TB, root any, path []string, value any) {
	t.Helper()
	m := root.(map[string]any)
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = value
}

func TestFixturesRoundTripUnchanged(t *testing.T) {
	for _, f := range arohcp.All() {
		t.Run(f.Name, func(t *testing.T) {
			_, _, resourceType := api.Identify(f.Data)
			require.NotEmpty(t, resourceType)
			d, err := api.Decode[api.RawProperties](f.Data)
			require.NoError(t, err)
			out, err := api.Encode(d)
			require.NoError(t, err)
			assert.Equal(t, tree(t, f.Data), tree(t, out))
		})
	}
}

func TestFixturesOwnedFieldChangeTouchesNothingElse(t *testing.T) {
	changed := 0
	for _, f := range arohcp.All() {
		t.Run(f.Name, func(t *testing.T) {
			out, change, err := arohcp.ChangeOwnedField(f.Data)
			require.NoError(t, err)
			want := tree(t, f.Data)
			if change != nil {
				changed++
				setPath(t, want, change.Path, change.Value)
			}
			assert.Equal(t, want, tree(t, out))
		})
	}
	assert.GreaterOrEqual(t, changed, 15, "most fixtures are types hcpsched writes")
}

// Unchanged foreign values keep their exact bytes, not just their meaning: ARO-HCP writes
// seven fractional digits that Go would re-encode differently.
func TestUnchangedForeignTimestampsKeepTheirBytes(t *testing.T) {
	data := arohcp.Get("realcosmos-hcpcluster-deleting-with-legacy-fields.json")
	d, err := api.Decode[api.ClusterProperties](data)
	require.NoError(t, err)
	require.NotNil(t, d.Properties.ServiceProviderProperties.DeletionTimestamp, "a typed foreign timestamp")
	out, err := api.Encode(d)
	require.NoError(t, err)
	for _, stamp := range []string{"2026-06-11T00:01:37.0000000Z", "2026-06-10T22:53:04.3799969Z"} {
		require.Contains(t, string(data), stamp)
		assert.Contains(t, string(out), stamp)
	}
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, data))
	assert.Equal(t, compact.String(), string(out), "an unchanged document re-encodes to its compact original")
}

func TestUnknownFieldsSurviveAtEveryLevel(t *testing.T) {
	const doc = `{
	  "id": "x", "partitionKey": "1",
	  "resourceID": "/providers/microsoft.redhatopenshift/stamps/1/managementclusters/default/scheduling/default",
	  "resourceType": "microsoft.redhatopenshift/stamps/managementclusters/scheduling",
	  "u0": {"a": [1, 2.50, {"b": null}]},
	  "properties": {
	    "u1": true,
	    "cosmosMetadata": {"resourceID": "/providers/microsoft.redhatopenshift/stamps/1/managementclusters/default/scheduling/default", "instanceVersion": 3, "u2": "m"},
	    "status": {
	      "u3": 12345678901234567890,
	      "conditions": [{"type": "CapacityDataCurrent", "status": "True", "lastTransitionTime": "2026-06-10T22:53:04.3799969Z", "reason": "DataCollected", "message": "", "u4": {}}],
	      "observedResources": {"u5": "o", "capacity": {"cpu": "1"}},
	      "scaleCeiling": {"u6": [], "capacity": {"aro.openshift.io/swift-nic": "30"}},
	      "readyResourceIDs": []
	    }
	  }
	}`
	d, err := api.Decode[api.ManagementClusterSchedulingProperties]([]byte(doc))
	require.NoError(t, err)
	d.Properties.Status.PendingAssignedClusters = []string{"/subscriptions/s/resourceGroups/r/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c"}
	d.Properties.Status.Conditions[0].Reason = "Changed"
	d.PrepareReplace()
	out, err := api.Encode(d)
	require.NoError(t, err)

	want := tree(t, []byte(doc))
	setPath(t, want, []string{"properties", "status", "pendingAssignedClusters"}, []any{"/subscriptions/s/resourceGroups/r/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c"})
	setPath(t, want, []string{"properties", "cosmosMetadata", "instanceVersion"}, json.Number("4"))
	setPath(t, want, []string{"properties", "cosmosMetadata", "partitionKey"}, "1")
	cond := want.(map[string]any)["properties"].(map[string]any)["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)
	cond["reason"] = "Changed"
	assert.Equal(t, want, tree(t, out))
	assert.Contains(t, string(out), `"u3":12345678901234567890`, "large numbers are not rounded")
	assert.Contains(t, string(out), `2.50`, "number spelling is kept")
}

func TestPrepareWrites(t *testing.T) {
	tests := []struct {
		name        string
		metadata    string
		wantVersion int64
	}{
		{"absent metadata reads as 1", ``, 2},
		{"zero reads as 1", `,"cosmosMetadata":{"instanceVersion":0}`, 2},
		{"counts up", `,"cosmosMetadata":{"instanceVersion":41,"etag":"old"}`, 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := `{"id":"i","resourceID":"/providers/microsoft.redhatopenshift/stamps/1","partitionKey":"1","_etag":"\"e7\"","properties":{"spec":{}` + tt.metadata + `}}`
			d, err := api.Decode[api.StampProperties]([]byte(doc))
			require.NoError(t, err)
			d.PrepareReplace()
			m := d.Metadata()
			require.NotNil(t, m)
			assert.Equal(t, tt.wantVersion, m.InstanceVersion)
			assert.Equal(t, `"e7"`, m.ETag, "cosmosMetadata.etag is the _etag that was read")
			assert.Equal(t, "/providers/microsoft.redhatopenshift/stamps/1", m.ResourceID)
			assert.Equal(t, "1", m.PartitionKey)
		})
	}
}

func TestNewDocumentAndSoftDelete(t *testing.T) {
	id := api.MustParseResourceID("/providers/microsoft.redhatopenshift/stamps/7/managementclusters/default")
	d := api.NewDocument(id, "7", api.ManagementClusterProperties{Spec: &api.ManagementClusterSpec{SchedulingPolicy: api.Schedulable}})
	d.PrepareCreate()
	assert.Equal(t, api.CosmosID(id.String()), d.ID)
	assert.Equal(t, api.ManagementClusterResourceType, d.ResourceType)
	assert.Equal(t, int64(1), d.Metadata().InstanceVersion)
	assert.False(t, d.IsDeleted())

	now := time.Date(2026, 11, 30, 8, 0, 0, 500, time.UTC)
	d.MarkDeleted(now)
	assert.True(t, d.IsDeleted())
	assert.Equal(t, api.SoftDeleteTTL, d.TTL)
	out, err := api.Encode(d)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"deletionTimestamp":"2026-11-30T08:00:00Z"`)
	assert.Contains(t, string(out), `"ttl":30`)
}

func TestCosmosIDMatchesStoredDocuments(t *testing.T) {
	for _, f := range arohcp.All() {
		id, rid, _ := api.Identify(f.Data)
		assert.Equal(t, id, api.CosmosID(rid), f.Name)
		assert.Equal(t, id, api.CosmosID(strings.ToUpper(rid)), "%s: ids derive from the lowercased resource ID", f.Name)
	}
}

func TestDecodeErrorsNameTheDocument(t *testing.T) {
	const rid = "/subscriptions/s/resourceGroups/r/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c"
	tests := []struct {
		name    string
		doc     string
		wantIn  []string
		invalid bool
	}{
		{"not JSON", `{"id":"doc-1",`, []string{"document doc-1"}, false},
		{"not an object", `[1,2]`, []string{"decoding document", "expected a JSON object"}, false},
		{"wrong type in envelope", `{"id":"doc-2","resourceID":"` + rid + `","ttl":"soon"}`, []string{"doc-2", rid, `"ttl"`}, false},
		{"wrong type deep inside", `{"id":"doc-3","resourceID":"` + rid + `","properties":{"cosmosMetadata":{"instanceVersion":"x"}}}`, []string{"doc-3", `"properties"`, `"cosmosMetadata"`, `"instanceVersion"`}, false},
		{"bad time", `{"id":"doc-4","resourceID":"` + rid + `","properties":{"systemData":{"createdAt":"yesterday"}}}`, []string{"doc-4", `"createdAt"`}, false},
		{"unparsable resource ID", `{"id":"doc-5","resourceID":"subscriptions/x"}`, []string{"doc-5", "must start with '/'"}, true},
		{"no resource ID", `{"id":"doc-6","properties":{}}`, []string{"doc-6", "no resource ID"}, true},
		{"missing id", `{"resourceID":"` + rid + `"}`, []string{rid, "missing id"}, false},
		{"trailing data", `{"id":"doc-7","resourceID":"` + rid + `"} {}`, []string{"doc-7", "after top-level value"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := api.Decode[api.ClusterProperties]([]byte(tt.doc))
			require.Error(t, err)
			var de *api.DecodeError
			require.ErrorAs(t, err, &de)
			for _, s := range tt.wantIn {
				assert.Contains(t, err.Error(), s)
			}
			assert.Equal(t, tt.invalid, errors.Is(err, api.ErrInvalidResourceID))
		})
	}
}

func TestParseResourceID(t *testing.T) {
	tests := []struct {
		id       string
		wantType string
		wantName string
		wantSub  string
		wantErr  string
	}{
		{id: "/subscriptions/S/resourceGroups/RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1", wantType: api.ClusterResourceType, wantName: "c1", wantSub: "S"},
		{id: "/subscriptions/S/resourcegroups/RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1/serviceProviderClusters/default", wantType: api.ServiceProviderClusterResourceType, wantName: "default", wantSub: "S"},
		{id: "/providers/microsoft.redhatopenshift/stamps/1/managementclusters/default/scheduling/default", wantType: api.ManagementClusterSchedulingResourceType, wantName: "default"},
		{id: "", wantErr: "must start with '/'"},
		{id: "/", wantErr: "empty path segment"},
		{id: "/subscriptions", wantErr: "missing subscription ID"},
		{id: "/subscriptions/S", wantType: api.SubscriptionResourceType, wantName: "S", wantSub: "S"},
		{id: "/subscriptions/s/resourceGroups/r", wantErr: "no provider resource"},
		{id: "/subscriptions/s/resourceGroups", wantErr: "missing resource group name"},
		{id: "/subscriptions/s/resourceGroups/r/things/x", wantErr: "expected 'providers'"},
		{id: "/providers", wantErr: "missing provider namespace"},
		{id: "/providers/ns", wantErr: "missing resource type and name"},
		{id: "/providers/ns/type", wantErr: "resource type without a name"},
		{id: "/providers/ns/a/b/providers/x", wantErr: "extension resources"},
		{id: "/providers/ns/a//b", wantErr: "empty path segment"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			r, err := api.ParseResourceID(tt.id)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.Contains(t, err.Error(), tt.id)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.id, r.String())
			assert.Equal(t, tt.wantName, r.Name())
			assert.Equal(t, tt.wantSub, r.SubscriptionID)
			assert.True(t, strings.EqualFold(tt.wantType, r.ResourceType()), r.ResourceType())
		})
	}
}

func TestResourceIDWalking(t *testing.T) {
	spc := api.MustParseResourceID("/subscriptions/S/resourceGroups/RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/C1/serviceProviderClusters/default")
	cluster, ok := spc.Ancestor("microsoft.redhatopenshift/HCPOPENSHIFTCLUSTERS")
	require.True(t, ok)
	assert.Equal(t, "/subscriptions/S/resourceGroups/RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/C1", cluster.String(), "casing is kept")
	assert.Equal(t, strings.ToLower(cluster.String()), cluster.Key())
	self, ok := spc.Ancestor(api.ServiceProviderClusterResourceType)
	require.True(t, ok)
	assert.Same(t, spc, self)
	_, ok = spc.Ancestor(api.StampResourceType)
	assert.False(t, ok)
	assert.Nil(t, cluster.Parent())
	assert.True(t, cluster.Child("serviceProviderClusters", "default").Equal(api.MustParseResourceID(strings.ToUpper(spc.String()))))
}

func TestEmptyValuesKeepTheirSpelling(t *testing.T) {
	docs := []string{
		`{"id":"x","resourceID":"/providers/a/b/c","properties":{"status":{"conditions":[]},"spec":{}}}`,
		`{"id":"x","resourceID":"/providers/a/b/c","properties":{"status":null,"resourceId":""}}`,
		`{"id":"x","resourceID":"/providers/a/b/c","properties":{"status":{"conditions":[{"type":"A","status":"True","lastTransitionTime":"2026-01-02T03:04:05.0000000Z","reason":"","message":""}]}}}`,
	}
	for _, doc := range docs {
		d, err := api.Decode[api.StampProperties]([]byte(doc))
		require.NoError(t, err)
		out, err := api.Encode(d)
		require.NoError(t, err)
		assert.Equal(t, doc, string(out))
	}
}
