package api_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

var objectType = reflect.TypeFor[api.Object]()

// walkObjects calls f with every Object embedded anywhere in v (a pointer), following
// pointers, slices, maps and struct fields.
func walkObjects(v reflect.Value, f func(reflect.Value)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkObjects(v.Elem(), f)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkObjects(v.Index(i), f)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			walkObjects(it.Value(), f)
		}
	case reflect.Struct:
		if v.Type() == objectType {
			f(v)
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walkObjects(v.Field(i), f)
			}
		}
	}
}

// typedOnly returns a copy of a full-decoded document with every Object emptied: what a
// lean decode of the same bytes must equal.
func typedOnly[P any](t testing.TB, d *api.Document[P]) *api.Document[P] {
	t.Helper()
	c := d.DeepCopy()
	walkObjects(reflect.ValueOf(c), func(o reflect.Value) {
		require.True(t, o.CanSet())
		o.Set(reflect.Zero(objectType))
	})
	return c
}

func requireLean[P any](t testing.TB, d *api.Document[P]) {
	t.Helper()
	walkObjects(reflect.ValueOf(d), func(o reflect.Value) {
		require.True(t, o.IsZero(), "a lean document keeps no Object (%s)", o.Addr().Type())
	})
}

// checkLeanAgrees holds DecodeLean to Decode on one input: the same accepted set, the
// same error, and equal typed fields with every Object empty.
func checkLeanAgrees[P any](t *testing.T, data []byte) {
	t.Helper()
	full, fullErr := api.Decode[P](data)
	lean, leanErr := api.DecodeLean[P](data)
	if fullErr != nil {
		require.Error(t, leanErr, "DecodeLean accepted what Decode refused (%v)", fullErr)
		assert.Equal(t, fullErr.Error(), leanErr.Error())
		var de *api.DecodeError
		assert.ErrorAs(t, leanErr, &de)
		assert.Equal(t, errorsIsInvalid(fullErr), errorsIsInvalid(leanErr))
		return
	}
	require.NoError(t, leanErr, "DecodeLean refused what Decode accepted")
	requireLean(t, lean)
	require.Equal(t, typedOnly(t, full), lean)
}

func errorsIsInvalid(err error) bool { return errors.Is(err, api.ErrInvalidResourceID) }

func checkLeanAgreesAllTypes(t *testing.T, data []byte) {
	t.Helper()
	checkLeanAgrees[api.ClusterProperties](t, data)
	checkLeanAgrees[api.ServiceProviderClusterProperties](t, data)
	checkLeanAgrees[api.ManagementClusterProperties](t, data)
	checkLeanAgrees[api.ManagementClusterSchedulingProperties](t, data)
	checkLeanAgrees[api.ReadDesireProperties](t, data)
	checkLeanAgrees[api.StampProperties](t, data)
	checkLeanAgrees[api.SubscriptionProperties](t, data)
	checkLeanAgrees[api.HCPResourceRequirementsProperties](t, data)
	checkLeanAgrees[api.RawProperties](t, data)
}

func TestDecodeLeanAgreesWithDecodeOnFixtures(t *testing.T) {
	for _, f := range arohcp.All() {
		t.Run(f.Name, func(t *testing.T) { checkLeanAgreesAllTypes(t, f.Data) })
	}
}

func TestDecodeLeanAgreesWithDecodeOnEdgeCases(t *testing.T) {
	const rid = `"resourceID":"/subscriptions/s/resourceGroups/r/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c"`
	tests := []struct{ name, doc string }{
		{"repeated key keeps its last value", `{"id":"a",` + rid + `,"ttl":"soon","ttl":3}`},
		{"repeated level is replaced, not merged", `{"id":"a",` + rid + `,"properties":{"name":"x","location":"l"},"properties":{"name":"y"}}`},
		{"escaped key", `{"i\u0064":"a",` + rid + `,"properties":{"n\u0061me":"x"}}`},
		{"escaped and unicode strings", `{"id":"a\n\u00e9",` + rid + `,"properties":{"name":"\u2603 snow","location":"caf\u00e9"}}`},
		{"invalid UTF-8 in a string", "{\"id\":\"a\"," + rid + ",\"properties\":{\"name\":\"\xff\"}}"},
		{"null levels and leaves", `{"id":"a",` + rid + `,"ttl":null,"deletionTimestamp":null,"properties":{"cosmosMetadata":null,"customerProperties":{"api":{"authorizedCidrs":null},"imageDigestMirrors":null,"nodeDrainTimeoutMinutes":null}}}`},
		{"null inside a slice of levels", `{"id":"a",` + rid + `,"properties":{"customerProperties":{"imageDigestMirrors":[null,{"source":"s","mirrors":[]}]}}}`},
		{"empty lists stay empty, not nil", `{"id":"a",` + rid + `,"properties":{"customerProperties":{"imageDigestMirrors":[],"api":{"authorizedCidrs":[]}}}}`},
		{"whitespace everywhere", " \n{ \"id\" : \"a\" , " + rid + " ,\t\"properties\" : { \"customerProperties\" : { \"network\" : { \"hostPrefix\" : 23 } } } } \n"},
		{"a number where a string belongs", `{"id":"a",` + rid + `,"properties":{"name":1}}`},
		{"a fraction where an integer belongs", `{"id":"a",` + rid + `,"ttl":1.5}`},
		{"an integer too large", `{"id":"a",` + rid + `,"ttl":123456789012345678901234567890}`},
		{"an int32 out of range", `{"id":"a",` + rid + `,"properties":{"customerProperties":{"nodeDrainTimeoutMinutes":3000000000}}}`},
		{"a string where a level belongs", `{"id":"a",` + rid + `,"properties":{"customerProperties":"x"}}`},
		{"an object where a list of levels belongs", `{"id":"a",` + rid + `,"properties":{"customerProperties":{"imageDigestMirrors":{}}}}`},
		{"a number inside a list of levels", `{"id":"a",` + rid + `,"properties":{"customerProperties":{"imageDigestMirrors":[1]}}}`},
		{"a bad boolean", `{"id":"a",` + rid + `,"properties":{"customerProperties":{"imageDigestMirrors":[]}},"x":tru}`},
		{"a bad time", `{"id":"a",` + rid + `,"properties":{"systemData":{"createdAt":"yesterday"}}}`},
		{"properties null", `{"id":"a",` + rid + `,"properties":null}`},
		{"properties a list", `{"id":"a",` + rid + `,"properties":[]}`},
		{"top-level null", `null`},
		{"top-level list", `[1]`},
		{"truncated", `{"id":"a",`},
		{"trailing data", `{"id":"a",` + rid + `} {}`},
		{"empty", ``},
		{"no id", `{` + rid + `}`},
		{"bad resource ID", `{"id":"a","resourceID":"x"}`},
		{"lsn", `{"id":"a",` + rid + `,"_lsn":42}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkLeanAgreesAllTypes(t, []byte(tt.doc)) })
	}
}

func TestDecodeLeanKeepsRawMessagesCompact(t *testing.T) {
	doc := []byte(`{"id":"a","resourceID":"/providers/microsoft.redhatopenshift/stamps/1/managementclusters/default/readdesires/capacity",
	  "properties":{"status":{"kubeContent": { "kind" : "CapacityReport", "a" : [ 1, "b c" ] }}}}`)
	d, err := api.DecodeLean[api.ReadDesireProperties](doc)
	require.NoError(t, err)
	assert.Equal(t, `{"kind":"CapacityReport","a":[1,"b c"]}`, string(d.Properties.Status.KubeContent))
	checkLeanAgrees[api.ReadDesireProperties](t, doc)
}

// A lean document encodes what it declares and nothing else.
func TestLeanDocumentsEncodeDeclaredFieldsOnly(t *testing.T) {
	data := arohcp.Get("hcpcluster-accepted-with-tags.json")
	d, err := api.DecodeLean[api.ClusterProperties](data)
	require.NoError(t, err)
	out, err := api.Encode(d)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(out, &doc))
	for _, undeclared := range []string{"_rid", "_self", "_attachments"} {
		assert.NotContains(t, doc, undeclared)
	}
	props := doc["properties"].(map[string]any)
	for _, undeclared := range []string{"identity", "tags", "type", "id", "status"} {
		assert.NotContains(t, props, undeclared)
	}
	assert.NotContains(t, props["serviceProviderProperties"], "activeOperationId")
	assert.Equal(t, "Accepted", props["serviceProviderProperties"].(map[string]any)["provisioningState"])
	assert.Equal(t, "fake-location", props["location"])

	full, err := api.Decode[api.ClusterProperties](data)
	require.NoError(t, err)
	want, err := api.Encode(typedOnly(t, full))
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(out))
}

// The envelope's resource ID and partition key are held once when cosmosMetadata repeats
// them.
func TestDecodeLeanSharesRepeatedMetadataStrings(t *testing.T) {
	d, err := api.DecodeLean[api.ClusterProperties](arohcp.Get("hcpcluster-accepted-with-tags.json"))
	require.NoError(t, err)
	m := d.Metadata()
	require.NotNil(t, m)
	require.Equal(t, d.ResourceID, m.ResourceID)
	assert.Same(t, unsafe.StringData(d.ResourceID), unsafe.StringData(m.ResourceID))
	assert.Same(t, unsafe.StringData(d.PartitionKey), unsafe.StringData(m.PartitionKey))
}

// FuzzDecodeLean: for any input, DecodeLean accepts exactly what Decode accepts, fails
// with the same error, and fills the same typed fields.
func FuzzDecodeLean(f *testing.F) {
	for _, fx := range arohcp.All() {
		f.Add(fx.Data)
	}
	f.Add([]byte(`{"id":"a","resourceID":"/providers/x/y/z","properties":{"status":{"pendingAssignedClusters":[]}}}`))
	f.Add([]byte(`{"id":"a","resourceID":"/providers/x/y/z","properties":{"status":{"conditions":[{"type":"A"},null]}},"ttl":"x","ttl":1}`))
	f.Add([]byte(`{"i\u0064":"a","resourceID":"/providers/x/y/z","properties":null}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkLeanAgrees[api.ManagementClusterSchedulingProperties](t, data)
		checkLeanAgrees[api.ServiceProviderClusterProperties](t, data)
		checkLeanAgrees[api.ClusterProperties](t, data)
		checkLeanAgrees[api.ReadDesireProperties](t, data)
	})
}

// BenchmarkDecode compares Decode and DecodeLean on a cluster document: time per decode,
// and the heap a decoded document holds (over 1,000 kept alive).
func BenchmarkDecode(b *testing.B) {
	data := arohcp.Get("hcpcluster-accepted-with-tags.json")
	for _, dec := range []struct {
		name   string
		decode func([]byte) (*api.Cluster, error)
	}{{"full", api.Decode[api.ClusterProperties]}, {"lean", api.DecodeLean[api.ClusterProperties]}} {
		b.Run(dec.name, func(b *testing.B) {
			const kept = 1000
			docs := make([]*api.Cluster, kept)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for i := range docs {
				docs[i], _ = dec.decode(data)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(docs)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := dec.decode(data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/kept, "heap-bytes/doc")
		})
	}
}

// Values that repeat across documents (resource types, locations, enumerations) are held
// once by every lean document; values of one document's own are not shared.
func TestDecodeLeanInternsRepeatedValues(t *testing.T) {
	data := arohcp.Get("hcpcluster-accepted-with-tags.json")
	a, err := api.DecodeLean[api.ClusterProperties](data)
	require.NoError(t, err)
	b, err := api.DecodeLean[api.ClusterProperties](data)
	require.NoError(t, err)
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	for name, pair := range map[string][2]string{
		"resourceType":      {a.ResourceType, b.ResourceType},
		"partitionKey":      {a.PartitionKey, b.PartitionKey},
		"location":          {a.Properties.Location, b.Properties.Location},
		"provisioningState": {a.Properties.ServiceProviderProperties.ProvisioningState, b.Properties.ServiceProviderProperties.ProvisioningState},
		"visibility":        {a.Properties.CustomerProperties.API.Visibility, b.Properties.CustomerProperties.API.Visibility},
		"podCidr":           {a.Properties.CustomerProperties.Network.PodCIDR, b.Properties.CustomerProperties.Network.PodCIDR},
	} {
		assert.True(t, same(pair[0], pair[1]), "%s is interned", name)
	}
	assert.False(t, same(a.ResourceID, b.ResourceID), "a document's own resource ID is its own")
	assert.False(t, same(a.Properties.Name, b.Properties.Name))
}
