package fakeclusterservice

import (
	"bytes"
	"strings"
	"testing"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/require"
)

// FuzzDecodeCluster: the strict decoder and the create rules never panic, whatever the
// decoder accepts is something the SDK encodes back without losing a field, and whatever
// the rules accept has every required field.
func FuzzDecodeCluster(f *testing.F) {
	f.Add([]byte(clusterJSON(f, newID(), "shard")))
	f.Add([]byte(`{"azure":{"subnet_resource_id":"/subscriptions/s/resourceGroups/g/providers/Microsoft.Network/virtualNetworks/v/subnets/x"}}`))
	f.Add([]byte(`{"azure":{"operators_authentication":{"managed_identities":{"control_plane_operators_managed_identities":{"a":{}}}}}}`))
	f.Add([]byte(`{"ingresses":{"items":[{"listening":"external"},{}]}}`))
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

		if validateCreate(c) != nil {
			return
		}
		az := c.Azure()
		for path, v := range map[string]string{
			"name": c.Name(), "region.id": c.Region().ID(), "azure.subscription_id": az.SubscriptionID(),
			"azure.tenant_id": az.TenantID(), "azure.managed_resource_group_name": az.ManagedResourceGroupName(),
		} {
			require.NotEmpty(t, v, path)
		}
		require.Regexp(t, versionIDPattern, c.Version().ID())
		_, err = parseARMID(az.SubnetResourceID())
		require.NoError(t, err)
	})
}

// FuzzParseARMID: the parser never panics, and what it accepts is a resource in a
// resource group, with a namespace and a type.
func FuzzParseARMID(f *testing.F) {
	f.Add("/subscriptions/s/resourceGroups/g/providers/Microsoft.Network/virtualNetworks/v/subnets/x")
	f.Add("/subscriptions/s/resourceGroups/g/providers/Microsoft.Network/networkSecurityGroups/n")
	f.Add("/SUBSCRIPTIONS/s/resourcegroups/g/PROVIDERS/a/b/c")
	f.Add("/subscriptions/s/resourceGroups/g")
	f.Add("/subscriptions//resourceGroups/g/providers/a/b/c")
	f.Add("subscriptions/s/resourceGroups/g/providers/a/b/c/")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := parseARMID(s)
		if err != nil {
			return
		}
		require.NotEmpty(t, id.subscription)
		require.NotEmpty(t, id.resourceGroup)
		require.Contains(t, id.resourceType, "/")
		require.NotContains(t, id.subscription, "/")
		require.True(t, strings.HasPrefix(strings.ToLower(s), "/subscriptions/"))
		require.True(t, id.isType(strings.ToUpper(id.resourceType)), "types compare case-insensitively")
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
