package fakeclusterservice

import (
	"bytes"
	"testing"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/require"
)

// FuzzDecodeCluster: the strict decoder never panics, and whatever it accepts is something
// the SDK encodes back without losing a field.
func FuzzDecodeCluster(f *testing.F) {
	f.Add([]byte(clusterJSON(newID(), "shard")))
	f.Add([]byte(`{"provison_shard_id":"x"}`))
	f.Add([]byte(`{"node_pools":{"kind":"NodePoolListLink","href":"/x","items":[{"id":"a"}]}}`))
	f.Add([]byte(`{"azure":null}`))
	f.Add([]byte(`{"properties":{"a":"b"}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"name":"a"}x`))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, raw, err := decodeCluster(body)
		if err != nil {
			return
		}
		require.NotNil(t, raw)
		var buf bytes.Buffer
		require.NoError(t, arohcp.MarshalCluster(c, &buf))
		again, err := arohcp.UnmarshalCluster(buf.Bytes())
		require.NoError(t, err)
		var buf2 bytes.Buffer
		require.NoError(t, arohcp.MarshalCluster(again, &buf2))
		require.Equal(t, buf.String(), buf2.String(), "SDK encoding is stable")
	})
}

// FuzzParseSearch: the search parser never panics, and accepted terms have non-empty
// field names made only of the characters fields use.
func FuzzParseSearch(f *testing.F) {
	f.Add("azure_shard.aks_management_cluster_resource_id='/x' and maestro_config.consumer_name='c'")
	f.Add("a='")
	f.Add("a='x' AND b = 'y'")
	f.Add("a='x' or b='y'")
	f.Add("'")
	f.Fuzz(func(t *testing.T, expr string) {
		terms, err := parseSearch(expr)
		if err != nil {
			return
		}
		require.NotEmpty(t, terms)
		for _, term := range terms {
			require.NotEmpty(t, term.field)
			require.NotContains(t, term.value, "'")
		}
	})
}
