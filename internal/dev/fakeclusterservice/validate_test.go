package fakeclusterservice

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	testName = "hcp-1"
	testRG   = "rg-" + testName
	mi       = "azure.operators_authentication.managed_identities"
	kmsKey   = "azure.etcd_encryption.data_encryption.customer_managed.kms.active_key"
	group    = "/subscriptions/" + DefaultSubscriptionID + "/resourceGroups/" + testRG + "/providers/"
	subnetID = group + "Microsoft.Network/virtualNetworks/vnet/subnets/subnet"
	nsgID    = group + "Microsoft.Network/networkSecurityGroups/nsg"
	uamiID   = group + "Microsoft.ManagedIdentity/userAssignedIdentities/mi"
	otherSub = "/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/" + testRG + "/providers/"
)

// validBody is ValidCluster's body as the SDK writes it, decoded for editing.
func validBody(t *testing.T, shard string) map[string]any {
	t.Helper()
	c, err := ValidCluster(newID(), testName, shard).Build()
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, arohcp.MarshalCluster(c, &buf))
	var body map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &body))
	return body
}

// edit changes a decoded body at a dotted path; a segment "items[0]" is element 0 of the
// array "items".
type edit func(t *testing.T, body map[string]any)

func without(path string) edit {
	return func(t *testing.T, body map[string]any) {
		parent, key := walk(t, body, path)
		_, ok := parent[key]
		require.True(t, ok, "the valid body has %s", path)
		delete(parent, key)
	}
}

func set(path string, value any) edit {
	return func(t *testing.T, body map[string]any) {
		parent, key := walk(t, body, path)
		parent[key] = value
	}
}

// walk returns the object holding the last segment of path, creating objects on the way.
func walk(t *testing.T, body map[string]any, path string) (map[string]any, string) {
	t.Helper()
	segments := strings.Split(path, ".")
	cur := body
	for _, seg := range segments[:len(segments)-1] {
		key, index := seg, -1
		if i := strings.IndexByte(seg, '['); i >= 0 {
			n, err := strconv.Atoi(strings.TrimSuffix(seg[i+1:], "]"))
			require.NoError(t, err, path)
			key, index = seg[:i], n
		}
		next, ok := cur[key]
		if !ok {
			next = map[string]any{}
			cur[key] = next
		}
		if index >= 0 {
			list, ok := next.([]any)
			require.True(t, ok, "%s: %s is not an array", path, key)
			require.Less(t, index, len(list), path)
			next = list[index]
		}
		m, ok := next.(map[string]any)
		require.True(t, ok, "%s: %s is not an object", path, seg)
		cur = m
	}
	return cur, segments[len(segments)-1]
}

// post sends body to the fake and returns the answer's status and reason.
func post(t *testing.T, h *harness, body map[string]any) (int, string) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	resp := h.do(t, http.MethodPost, clustersPath, string(b))
	require.Equal(t, "application/json", resp.contentType)
	if resp.status >= 400 {
		out := decode(t, resp.body)
		assert.Equal(t, "Error", out["kind"])
		reason, _ := out["reason"].(string)
		return resp.status, reason
	}
	return resp.status, ""
}

// requiredOnCreate is every field CS requires on a cluster create, as agreed in
// strictrules16.md (kept here, apart from the fake's own list, so that a field dropped
// from the fake's checks fails this test).
var requiredOnCreate = []string{
	"name", "region.id", "version.id",
	"azure.subscription_id", "azure.resource_group_name", "azure.resource_name", "azure.tenant_id",
	"azure.managed_resource_group_name", "azure.subnet_resource_id",
	mi + ".managed_identities_data_plane_identity_url",
	"azure.etcd_encryption.data_encryption.key_management_mode",
	"azure.nodes_outbound_connectivity.outbound_type",
	"network.type", "network.pod_cidr", "network.service_cidr", "network.machine_cidr", "network.host_prefix",
	"api.listening", "cloud_provider.id", "product.id", "hypershift.enabled", "ccs.enabled",
}

// nonStringFields are the required fields whose JSON value is not a string.
var nonStringFields = map[string]bool{"network.host_prefix": true, "hypershift.enabled": true, "ccs.enabled": true}

type createCase struct {
	name  string
	edits []edit
	// wantField is the dotted wire path the 400's reason must name; "" means the create
	// is accepted.
	wantField string
}

func createCases() []createCase {
	var cases []createCase
	for _, path := range requiredOnCreate {
		cases = append(cases, createCase{name: "without " + path, edits: []edit{without(path)}, wantField: path})
		if !nonStringFields[path] {
			cases = append(cases, createCase{name: path + " empty", edits: []edit{set(path, "")}, wantField: path})
		}
	}
	one := func(name, path string, value any) createCase {
		return createCase{name: name, edits: []edit{set(path, value)}, wantField: path}
	}
	ok := func(name string, edits ...edit) createCase { return createCase{name: name, edits: edits} }
	customerManaged := func(cm map[string]any) []edit {
		return []edit{
			set("azure.etcd_encryption.data_encryption.key_management_mode", "customer_managed"),
			set("azure.etcd_encryption.data_encryption.customer_managed", cm),
		}
	}
	fullKey := map[string]any{"key_vault_name": "kv", "key_name": "etcd", "key_version": "0ac571d3970149dfb69e433820082616"}
	cases = append(cases,
		// Fixed values.
		one("cloud provider other than azure", "cloud_provider.id", "aws"),
		one("product other than aro", "product.id", "rosa"),
		one("not hypershift", "hypershift.enabled", false),
		one("not ccs", "ccs.enabled", false),

		// version.id
		one("version as the SPC holds it", "version.id", "4.20.8"),
		one("version with only X.Y", "version.id", "openshift-v4.20"),
		one("version without the v", "version.id", "openshift-4.20.8"),
		one("version with an empty suffix", "version.id", "openshift-v4.20.8-"),
		one("version with a leading zero", "version.id", "openshift-v4.020.8"),
		ok("version with a channel group", set("version.id", "openshift-v4.20.8-candidate"), set("version.channel_group", "candidate")),
		ok("version with a prerelease and a channel group", set("version.id", "openshift-v4.21.0-rc.1-candidate"), set("version.channel_group", "candidate")),
		ok("version with a prerelease", set("version.id", "openshift-v4.21.0-ec.2")),

		// domain_prefix
		one("empty domain prefix", "domain_prefix", ""),
		ok("no domain prefix", without("domain_prefix")),

		// network
		one("unknown network type", "network.type", "Calico"),
		ok("network type Other", set("network.type", "Other")),
		one("pod CIDR without a mask", "network.pod_cidr", "10.128.0.0"),
		one("pod CIDR not an address", "network.pod_cidr", "pods"),
		one("pod CIDR with a mask above 32", "network.pod_cidr", "10.128.0.0/33"),
		one("IPv6 pod CIDR", "network.pod_cidr", "fd01::/48"),
		one("IPv4-mapped IPv6 service CIDR", "network.service_cidr", "::ffff:172.30.0.0/112"),
		one("bad service CIDR", "network.service_cidr", "172.30.0.0/16/1"),
		one("bad machine CIDR", "network.machine_cidr", "10.0.0.256/16"),
		one("host prefix 0", "network.host_prefix", 0),
		one("host prefix 33", "network.host_prefix", 33),
		one("negative host prefix", "network.host_prefix", -1),
		ok("host prefix 32", set("network.host_prefix", 32)),
		ok("host prefix 1", set("network.host_prefix", 1)),

		// api
		one("API listening as the document spells it", "api.listening", "Public"),
		ok("private API", set("api.listening", "internal")),
		one("unknown CIDR access mode", "api.cidr_block_access.allow.mode", "deny_all"),
		one("empty CIDR access mode", "api.cidr_block_access.allow.mode", ""),
		createCase{name: "allow_list with no values", edits: []edit{set("api.cidr_block_access.allow.mode", "allow_list")}, wantField: "api.cidr_block_access.allow.values"},
		createCase{name: "allow_list with an empty list", edits: []edit{set("api.cidr_block_access.allow.mode", "allow_list"), set("api.cidr_block_access.allow.values", []any{})}, wantField: "api.cidr_block_access.allow.values"},
		ok("allow_list with values", set("api.cidr_block_access.allow.mode", "allow_list"), set("api.cidr_block_access.allow.values", []any{"203.0.113.0/24"})),
		ok("no CIDR block access", without("api.cidr_block_access")),

		// ingresses
		one("ingress listening as the document spells it", "ingresses.items[0].listening", "Public"),
		ok("private ingress", set("ingresses.items[0].listening", "internal")),

		// image_registry
		one("image registry state as the document spells it", "image_registry.state", "Enabled"),
		ok("image registry disabled", set("image_registry.state", "disabled")),

		// azure identity
		one("managed resource group equal to the resource group", "azure.managed_resource_group_name", testRG),
		one("managed resource group equal to the resource group but for case", "azure.managed_resource_group_name", strings.ToUpper(testRG)),

		// subnet
		one("subnet not an ARM ID", "azure.subnet_resource_id", "subnet"),
		one("subnet ID of an NSG", "azure.subnet_resource_id", nsgID),
		one("subnet ID of the virtual network", "azure.subnet_resource_id", group+"Microsoft.Network/virtualNetworks/vnet"),
		one("subnet ID with a trailing slash", "azure.subnet_resource_id", subnetID+"/"),
		one("subnet in another subscription", "azure.subnet_resource_id", otherSub+"Microsoft.Network/virtualNetworks/vnet/subnets/subnet"),
		ok("subnet subscription and type in another case", set("azure.subnet_resource_id",
			"/subscriptions/"+strings.ToUpper(DefaultSubscriptionID)+"/resourcegroups/"+testRG+"/providers/microsoft.network/virtualnetworks/vnet/subnets/subnet")),

		// NSG
		one("empty NSG", "azure.network_security_group_resource_id", ""),
		one("NSG ID of a subnet", "azure.network_security_group_resource_id", subnetID),
		one("NSG in another subscription", "azure.network_security_group_resource_id", otherSub+"Microsoft.Network/networkSecurityGroups/nsg"),
		ok("no NSG, as ARO-HCP sends when the document has none", without("azure.network_security_group_resource_id")),

		// vnet integration subnet
		one("empty vnet integration subnet", "azure.vnet_integration_subnet_resource_id", ""),
		one("vnet integration subnet ID of an NSG", "azure.vnet_integration_subnet_resource_id", nsgID),
		ok("vnet integration subnet", set("azure.vnet_integration_subnet_resource_id", group+"Microsoft.Network/virtualNetworks/vnet/subnets/integration")),

		// outbound
		one("outbound type as the document spells it", "azure.nodes_outbound_connectivity.outbound_type", "LoadBalancer"),

		// etcd encryption
		one("key management mode as the document spells it", "azure.etcd_encryption.data_encryption.key_management_mode", "PlatformManaged"),
		ok("platform_managed etcd encryption, which ARO-HCP sends for default clusters",
			set("azure.etcd_encryption.data_encryption.key_management_mode", "platform_managed")),
		createCase{name: "customer_managed without customer_managed",
			edits:     []edit{set("azure.etcd_encryption.data_encryption.key_management_mode", "customer_managed")},
			wantField: "azure.etcd_encryption.data_encryption.customer_managed.encryption_type"},
		createCase{name: "customer_managed with another encryption type",
			edits:     customerManaged(map[string]any{"encryption_type": "KMS", "kms": map[string]any{"active_key": fullKey}}),
			wantField: "azure.etcd_encryption.data_encryption.customer_managed.encryption_type"},
		createCase{name: "customer_managed without a kms key",
			edits:     customerManaged(map[string]any{"encryption_type": "kms"}),
			wantField: kmsKey + ".key_vault_name"},
		createCase{name: "customer_managed without a key name",
			edits:     customerManaged(map[string]any{"encryption_type": "kms", "kms": map[string]any{"active_key": map[string]any{"key_vault_name": "kv", "key_version": "1"}}}),
			wantField: kmsKey + ".key_name"},
		createCase{name: "customer_managed without a key version",
			edits:     customerManaged(map[string]any{"encryption_type": "kms", "kms": map[string]any{"active_key": map[string]any{"key_vault_name": "kv", "key_name": "etcd"}}}),
			wantField: kmsKey + ".key_version"},
		ok("customer_managed with a kms key", customerManaged(map[string]any{"encryption_type": "kms", "kms": map[string]any{"active_key": fullKey, "visibility": "public"}})...),

		// managed identities
		one("identity URL over http", mi+".managed_identities_data_plane_identity_url", "http://dummyhost.identity.azure.net/x"),
		one("identity URL not a URL", mi+".managed_identities_data_plane_identity_url", "dummyhost.identity.azure.net"),
		one("identity URL without a host", mi+".managed_identities_data_plane_identity_url", "https:///x"),
		one("control plane identity of the wrong type", mi+".control_plane_operators_managed_identities.kms.resource_id", subnetID),
		one("control plane identity without a resource ID", mi+".control_plane_operators_managed_identities.kms.resource_id", ""),
		one("data plane identity of the wrong type", mi+".data_plane_operators_managed_identities.image-registry.resource_id", nsgID),
		one("service managed identity of the wrong type", mi+".service_managed_identity.resource_id", group+"Microsoft.ManagedIdentity/identities/mi"),
		one("service managed identity not an ARM ID", mi+".service_managed_identity.resource_id", "mi"),
		ok("no service managed identity, as ARO-HCP sends when the document has none", without(mi+".service_managed_identity")),
		ok("no operator identities", set(mi+".control_plane_operators_managed_identities", map[string]any{}), set(mi+".data_plane_operators_managed_identities", map[string]any{})),
		ok("identities of another subscription and case", set(mi+".service_managed_identity.resource_id",
			"/subscriptions/e8c5a115-842d-4d7e-98ad-cfb2c50b209e/resourcegroups/msi/providers/microsoft.managedidentity/userassignedidentities/service")),
		ok("identity URL as ARM sends it", set(mi+".managed_identities_data_plane_identity_url", "https://westus.identity.azure.net/subscriptions/x/resourcegroups/y/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/z/credentials?tid=t&oid=o&aid=a")),
	)
	return cases
}

// The fake refuses a create whose body CS would refuse, with a 400 whose reason names the
// field, and stores nothing; the choices ARO-HCP's practice makes are accepted.
func TestCreateRules(t *testing.T) {
	t.Parallel()
	for _, tt := range createCases() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			shard := h.createShard(t)
			body := validBody(t, shard)
			for _, e := range tt.edits {
				e(t, body)
			}
			status, reason := post(t, h, body)
			if tt.wantField == "" {
				assert.Equal(t, http.StatusCreated, status, reason)
				return
			}
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Contains(t, reason, "'"+tt.wantField+"'")
			on, err := h.fake.ClustersOnShard(shard)
			require.NoError(t, err)
			assert.Empty(t, on, "nothing was stored")
		})
	}
}

// ValidCluster's body is accepted as it is, pinned or not, at any Azure identity.
func TestValidClusterIsAccepted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	shard := h.createShard(t)
	bodies := []*arohcp.ClusterBuilder{
		ValidCluster(newID(), "hcp-1", shard),
		ValidCluster("", "hcp-2", ""),
		ValidCluster(newID(), "a-very-long-cluster-name-that-is-longer-than-forty-five-characters", shard),
		ValidClusterFor(newID(), Identity{SubscriptionID: "00000000-0000-0000-0000-000000000009", ResourceGroup: "RG-Mixed", Name: "hcp-3", TenantID: "t", ManagedResourceGroup: "mrg", Location: "westus3"}, shard),
	}
	for _, b := range bodies {
		c, err := b.Build()
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, arohcp.MarshalCluster(c, &buf))
		resp := h.do(t, http.MethodPost, clustersPath, buf.String())
		assert.Equal(t, http.StatusCreated, resp.status, resp.body)
	}
}

// CS reports only the first error; with several, the fake names the one first in the
// documented order.
func TestCreateReportsTheFirstError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		edits     []edit
		wantField string
		notField  string
	}{
		{
			name:      "name before the subnet",
			edits:     []edit{without("azure.subnet_resource_id"), without("name")},
			wantField: "name", notField: "azure.subnet_resource_id",
		},
		{
			name:      "network before azure",
			edits:     []edit{set("azure.tenant_id", ""), set("network.host_prefix", 0)},
			wantField: "network.host_prefix", notField: "azure.tenant_id",
		},
		{
			name:      "managed resource group before the identity URL",
			edits:     []edit{set(mi+".managed_identities_data_plane_identity_url", "http://x"), set("azure.managed_resource_group_name", testRG)},
			wantField: "azure.managed_resource_group_name", notField: "managed_identities_data_plane_identity_url",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			body := validBody(t, h.createShard(t))
			for _, e := range tt.edits {
				e(t, body)
			}
			status, reason := post(t, h, body)
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Contains(t, reason, "'"+tt.wantField+"'")
			assert.NotContains(t, reason, tt.notField)
		})
	}
}
