package api_test

import (
	"encoding/json"
	"errors"
	"fmt"
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
		{"two-character escapes", `{"id":"a\"b\\c\/d\b\f\n\r\t",` + rid + `,"_etag":"\"0000-7121\""}`},
		{"escapes mixed with \\u", `{"id":"a\"\u00e9\ud83d\ude00\ud800",` + rid + `}`},
		{"escaped invalid UTF-8", "{\"id\":\"a\\n\xff\"," + rid + "}"},
		{"optional integers", `{"id":"a",` + rid + `,"properties":{"customerProperties":{"network":{"hostPrefix":-0},"nodeDrainTimeoutMinutes":0,"autoscaling":{"maxNodesTotal":-2147483648,"podPriorityThreshold":null}}}}`},
		{"an optional integer in exponent form", `{"id":"a",` + rid + `,"properties":{"customerProperties":{"network":{"hostPrefix":1e2}}}}`},
		{"an optional integer out of range", `{"id":"a",` + rid + `,"properties":{"customerProperties":{"network":{"hostPrefix":2147483648}}}}`},
		{"an optional integer as a string", `{"id":"a",` + rid + `,"properties":{"customerProperties":{"network":{"hostPrefix":"23"}}}}`},
		{"levels declaring nothing", `{"id":"a",` + rid + `,"properties":{"systemData":{"createdBy":"x"},"customerProperties":{"dns":{},"version":{"x":1}}}}`},
		{"levels whose declared keys are null or empty", `{"id":"a",` + rid + `,"properties":{"systemData":{"createdAt":null},"customerProperties":{"version":{"id":null,"channelGroup":""},"dns":{"baseDomainPrefix":""}}}}`},
		{"an empty list keeps a shared level's place", `{"id":"a",` + rid + `,"properties":{"customerProperties":{"api":{"authorizedCidrs":[]}}}}`},
		{"a shared level with a repeated key", `{"id":"a",` + rid + `,"properties":{"customerProperties":{"version":{"id":"4.19","id":"4.20"}}}}`},
		{"a shared level that fails", `{"id":"a",` + rid + `,"properties":{"customerProperties":{"version":{"id":4}}}}`},
		{"a shared level that is not an object", `{"id":"a",` + rid + `,"properties":{"customerProperties":{"version":[]}}}`},
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
	f.Add([]byte(`{"id":"a\"\/\u00e9","resourceID":"/providers/x/y/z","_etag":"\"e\"","properties":{"customerProperties":{"network":{"hostPrefix":23},"dns":{},"version":{"id":"4.20","id":null}},"systemData":{"createdBy":"x"}}}`))
	f.Add([]byte(`{"id":"a","resourceID":"/providers/x/y/z","properties":{"spec":{"control_plane_version":{"desired_version":"4.20.1"}},"status":{}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkLeanAgrees[api.ManagementClusterSchedulingProperties](t, data)
		checkLeanAgrees[api.ServiceProviderClusterProperties](t, data)
		checkLeanAgrees[api.ClusterProperties](t, data)
		checkLeanAgrees[api.ReadDesireProperties](t, data)
	})
}

// clusterDecoders are the two ways a cache decodes a cluster document, for benchmarks that
// compare them.
var clusterDecoders = []struct {
	name   string
	decode func([]byte) (*api.Cluster, error)
}{{"full", api.Decode[api.ClusterProperties]}, {"lean", api.DecodeLean[api.ClusterProperties]}}

// BenchmarkDecode compares Decode and DecodeLean on a cluster document: time per decode,
// and the heap a decoded document holds (over 1,000 kept alive).
func BenchmarkDecode(b *testing.B) {
	data := arohcp.Get("hcpcluster-accepted-with-tags.json")
	for _, dec := range clusterDecoders {
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

// BenchmarkEncode is the encoding docwrite makes twice per write (the cached copy and the
// changed one), of a document as a full and as a lean cache holds it.
func BenchmarkEncode(b *testing.B) {
	data := arohcp.Get("hcpcluster-accepted-with-tags.json")
	for _, dec := range clusterDecoders {
		b.Run(dec.name, func(b *testing.B) {
			doc, err := dec.decode(data)
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := api.Encode(doc); err != nil {
					b.Fatal(err)
				}
			}
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

// Levels whose values repeat across documents (those tagged intern) are held once by
// every lean document decoded from the same bytes, and a level that declares nothing is
// the one zero value of its type; levels of a document's own are not shared. A deep copy
// shares none of them, so changing it changes no other document.
func TestDecodeLeanSharesRepeatedLevels(t *testing.T) {
	data := arohcp.Get("hcpcluster-accepted-with-tags.json")
	a, err := api.DecodeLean[api.ClusterProperties](data)
	require.NoError(t, err)
	b, err := api.DecodeLean[api.ClusterProperties](data)
	require.NoError(t, err)
	ca, cb := a.Properties.CustomerProperties, b.Properties.CustomerProperties
	assert.Same(t, ca.Version, cb.Version)
	assert.Same(t, ca.Network, cb.Network)
	assert.Same(t, ca.API, cb.API)
	assert.Same(t, ca.Ingress, cb.Ingress)
	assert.Same(t, ca.Autoscaling, cb.Autoscaling)
	assert.Same(t, ca.ClusterImageRegistry, cb.ClusterImageRegistry)
	assert.Same(t, ca.DNS, cb.DNS, "dns is {}")
	assert.Same(t, a.Properties.SystemData, b.Properties.SystemData, "systemData declares nothing")
	assert.Same(t, ca.Platform.OperatorsAuthentication.UserAssignedIdentities, cb.Platform.OperatorsAuthentication.UserAssignedIdentities)
	assert.Equal(t, &api.ClusterDNS{}, ca.DNS)
	assert.Equal(t, "4.20", ca.Version.ID)
	assert.Equal(t, int32(23), *ca.Network.HostPrefix)

	assert.NotSame(t, a.Properties.CosmosMetadata, b.Properties.CosmosMetadata)
	assert.NotSame(t, ca, cb)
	assert.NotSame(t, ca.Platform, cb.Platform)
	assert.NotSame(t, ca.Etcd, cb.Etcd)
	assert.NotSame(t, a.Properties.ServiceProviderProperties, b.Properties.ServiceProviderProperties)

	c := a.DeepCopy()
	assert.NotSame(t, ca.Version, c.Properties.CustomerProperties.Version)
	assert.NotSame(t, ca.DNS, c.Properties.CustomerProperties.DNS)
	c.Properties.CustomerProperties.Version.ID = "4.21"
	c.Properties.CustomerProperties.DNS.BaseDomainPrefix = "changed"
	*c.Properties.CustomerProperties.Network.HostPrefix = 24
	assert.Equal(t, "4.20", cb.Version.ID)
	assert.Empty(t, cb.DNS.BaseDomainPrefix)
	assert.Equal(t, int32(23), *cb.Network.HostPrefix)
	again, err := api.DecodeLean[api.ClusterProperties](data)
	require.NoError(t, err)
	assert.Equal(t, b, again, "later documents decode as before")
}

// Levels decoded from other bytes are not shared, even when they mean the same: only
// identical bytes are known to decode to identical values without decoding them.
func TestDecodeLeanSharesLevelsByTheirBytes(t *testing.T) {
	decode := func(version string) *api.Cluster {
		t.Helper()
		d, err := api.DecodeLean[api.ClusterProperties]([]byte(`{"id":"a","resourceID":"/subscriptions/s/resourceGroups/r/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c","properties":{"customerProperties":{"version":` + version + `}}}`))
		require.NoError(t, err)
		return d
	}
	x, y := decode(`{"id":"4.19"}`), decode(`{"id":"4.19"}`)
	assert.Same(t, x.Properties.CustomerProperties.Version, y.Properties.CustomerProperties.Version)
	z := decode(`{ "id":"4.19"}`)
	assert.NotSame(t, x.Properties.CustomerProperties.Version, z.Properties.CustomerProperties.Version)
	assert.Equal(t, x.Properties.CustomerProperties.Version, z.Properties.CustomerProperties.Version)
	other := decode(`{"id":"4.18"}`)
	assert.Equal(t, "4.18", other.Properties.CustomerProperties.Version.ID)
	assert.Equal(t, "4.19", x.Properties.CustomerProperties.Version.ID)
}

// A field whose values turn out not to repeat costs a bounded table, and every document
// still decodes to its own values.
func TestDecodeLeanSharedLevelsAreBounded(t *testing.T) {
	n := 3 * api.MaxSharedLevels
	docs := make([]*api.Cluster, n)
	for i := range docs {
		var err error
		docs[i], err = api.DecodeLean[api.ClusterProperties]([]byte(fmt.Sprintf(`{"id":"a","resourceID":"/subscriptions/s/resourceGroups/r/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c","properties":{"customerProperties":{"api":{"visibility":"Public","authorizedCidrs":["10.0.%d.0/24"]}}}}`, i)))
		require.NoError(t, err)
		assert.LessOrEqual(t, api.SharedLevels[api.ClusterCustomerProperties]("api"), api.MaxSharedLevels)
	}
	for i, d := range docs {
		assert.Equal(t, []string{fmt.Sprintf("10.0.%d.0/24", i)}, d.Properties.CustomerProperties.API.AuthorizedCIDRs)
	}
}

// An intern tag on a field DecodeLean cannot intern is a mistake in the types, refused
// when the type is first decoded rather than ignored.
func TestInternTagOnAnUnsupportedFieldPanics(t *testing.T) {
	assert.PanicsWithValue(t, "api: api.BadInternLevel.N is tagged intern but is neither a string nor a pointer to a level", api.PlanBadInternLevel)
}

// A document read from the middle of a larger buffer (a page of a feed, say) decodes as
// it does on its own: the walk's offsets are the document's, not the buffer's.
func TestDecodeLeanReadsADocumentInsideABuffer(t *testing.T) {
	data := arohcp.Get("hcpcluster-accepted-with-tags.json")
	want, err := api.DecodeLean[api.ClusterProperties](data)
	require.NoError(t, err)
	prefix, suffix := []byte(`[{"a":[1,{"b":2}]},`), []byte(`,{"c":{"d":[]}}]`)
	buf := append(append(append([]byte{}, prefix...), data...), suffix...)
	got, err := api.DecodeLean[api.ClusterProperties](buf[len(prefix) : len(prefix)+len(data)])
	require.NoError(t, err)
	assert.Equal(t, want, got)
}
