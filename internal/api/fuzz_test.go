package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// FuzzDecode feeds arbitrary bytes to the decoder of the richest document types: it must
// never panic, and whatever it accepts must re-encode to a document that decodes to the
// same encoding (the codec is a fixed point after one pass).
func FuzzDecode(f *testing.F) {
	for _, fx := range arohcp.All() {
		f.Add(fx.Data)
	}
	f.Add([]byte(`{"id":"a","resourceID":"/providers/x/y/z","properties":{"status":{"pendingAssignedClusters":[]}}}`))
	f.Add([]byte(`{"id":"a","resourceID":"/providers/x/y/z","properties":null}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"id":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFixedPoint[api.ManagementClusterSchedulingProperties](t, data)
		checkFixedPoint[api.ServiceProviderClusterProperties](t, data)
		checkFixedPoint[api.ClusterProperties](t, data)
		checkFixedPoint[api.HCPResourceRequirementsProperties](t, data)
	})
}

func checkFixedPoint[P any](t *testing.T, data []byte) {
	d, err := api.Decode[P](data)
	if err != nil {
		return
	}
	once, err := api.Encode(d)
	require.NoError(t, err)
	again, err := api.Decode[P](once)
	require.NoError(t, err, "an encoded document must decode: %s", once)
	twice, err := api.Encode(again)
	require.NoError(t, err)
	assert.JSONEq(t, string(once), string(twice))
}

// FuzzParseResourceID: parsing never panics, and a parsed ID reports itself unchanged and
// walks up without panicking.
func FuzzParseResourceID(f *testing.F) {
	for _, s := range []string{
		"/subscriptions/s/resourceGroups/r/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c/serviceProviderClusters/default",
		"/providers/microsoft.redhatopenshift/stamps/1/managementclusters/default/readdesires/capacity",
		"/subscriptions/s", "", "/", "//", "/providers/a/b/c/providers/d",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := api.ParseResourceID(s)
		if err != nil {
			assert.Nil(t, r)
			return
		}
		assert.Equal(t, s, r.String())
		assert.NotEmpty(t, r.Name())
		for p := r; p != nil; p = p.Parent() {
			parsed, perr := api.ParseResourceID(p.String())
			if assert.NoError(t, perr, "parents of valid IDs are valid") {
				assert.Equal(t, parsed, p, "a parent is what parsing its ID gives")
			}
			a, ok := r.Ancestor(strings.ToUpper(p.ResourceType()))
			if assert.True(t, ok, "every level is an ancestor of its type") {
				assert.Equal(t, p, a, "the ancestor of a level's type is that level")
			}
		}
		_, ok := r.Ancestor(r.ResourceType() + "/more")
		assert.False(t, ok, "no level has a longer type")
		if r.Namespace != api.SubscriptionNamespace {
			// Child builds without parsing; it must agree with parsing.
			assert.Equal(t, api.MustParseResourceID(s+"/Children/c"), r.Child("Children", "c"))
		}
	})
}

// FuzzObjectLevel calls one level's UnmarshalJSON directly, without encoding/json's
// validation in front: malformed input must give an error, never a panic.
func FuzzObjectLevel(f *testing.F) {
	for _, s := range []string{`{"type":"Ready","status":"True","x":[1,{"y":"}"}]}`, `{"a`, `{"a":`, `{"a":1`, `{1:2}`, `{"a" "b"}`, `null`, `[`, ``, `{"a":"\"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c api.Condition
		if err := c.UnmarshalJSON(data); err == nil && json.Valid(data) {
			out, err := c.MarshalJSON()
			require.NoError(t, err)
			assert.True(t, json.Valid(out), "%s", out)
		}
	})
}
