package clusterbody

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
)

// The test cluster's identity, in the casing ARM and the frontend write.
const (
	testSubscription = "0465BC32-C654-41B8-8D87-9815D7ABE8F6"
	testGroup        = "Some-RG"
	testName         = "My-Cluster"
	testMRG          = "Managed-RG-Of-My-Cluster"
	testTenant       = "72F988BF-86F1-41AF-91AB-2D7CD011DB47"
	testShard        = "shard-1"
	testCSID         = "0123456789abcdefghijklmnopqrstuv"
	testIdentityURL  = "https://dummyhost.identity.azure.net/otherinformation?aqueryarg=somevalue"
	testDesired      = "4.20.8"
)

func armID(rest string) string {
	return "/subscriptions/" + testSubscription + "/resourceGroups/" + testGroup + "/providers/" + rest
}

var (
	testSubnet      = armID("Microsoft.Network/virtualNetworks/vnet/subnets/nodes")
	testVnetSubnet  = armID("Microsoft.Network/virtualNetworks/vnet/subnets/api")
	testNSG         = armID("Microsoft.Network/networkSecurityGroups/nsg")
	testClusterRID  = api.MustParseResourceID(armID("Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + testName))
	testPendingHREF = "/api/aro_hcp/v1alpha1/clusters/" + testCSID
)

func testIdentity(name string) string {
	return armID("Microsoft.ManagedIdentity/userAssignedIdentities/" + name)
}

func ptr[T any](v T) *T { return &v }

// minimalInput is a cluster with only what Build requires set: everything else takes
// its default or is left out.
func minimalInput() Input {
	pk, _ := api.ResourcesPartitionKey(testClusterRID)
	c := api.NewDocument(testClusterRID, pk, api.ClusterProperties{
		Name:     testName,
		Location: "westus3",
		CustomerProperties: &api.ClusterCustomerProperties{
			Platform: &api.ClusterPlatform{ManagedResourceGroup: testMRG, SubnetID: testSubnet},
			Etcd:     &api.ClusterEtcd{DataEncryption: &api.EtcdDataEncryption{KeyManagementMode: "PlatformManaged"}},
		},
		ServiceProviderProperties: &api.ClusterServiceProviderProperties{
			PendingClusterServiceID:               testPendingHREF,
			ManagedIdentitiesDataPlaneIdentityURL: testIdentityURL,
		},
	})
	c.ResourceType = api.ClusterResourceType
	spc := api.NewDocument(api.ServiceProviderClusterResourceID(testClusterRID), pk, api.ServiceProviderClusterProperties{
		Spec: &api.ServiceProviderClusterSpec{ControlPlaneVersion: &api.ControlPlaneVersionSpec{DesiredVersion: testDesired}},
	})
	return Input{Cluster: c, SPC: spc, TenantID: testTenant, ShardID: testShard}
}

// fullInput has every optional Cosmos field the body reads set.
func fullInput() Input {
	in := minimalInput()
	p := &in.Cluster.Properties
	p.CustomerProperties = &api.ClusterCustomerProperties{
		Version: &api.ClusterVersion{ID: "4.21", ChannelGroup: "candidate"},
		DNS:     &api.ClusterDNS{BaseDomainPrefix: "mycluster"},
		Network: &api.ClusterNetwork{NetworkType: "Other", PodCIDR: "10.132.0.0/14", ServiceCIDR: "172.31.0.0/16", MachineCIDR: "10.1.0.0/16", HostPrefix: ptr(int32(24))},
		API:     &api.ClusterAPI{Visibility: "Private", AuthorizedCIDRs: []string{"203.0.113.0/24", "198.51.100.7"}},
		Ingress: &api.ClusterIngress{Type: "Private"},
		Platform: &api.ClusterPlatform{
			ManagedResourceGroup:    testMRG,
			SubnetID:                testSubnet,
			VnetIntegrationSubnetID: testVnetSubnet,
			OutboundType:            "LoadBalancer",
			NetworkSecurityGroupID:  testNSG,
			OperatorsAuthentication: &api.OperatorsAuthentication{UserAssignedIdentities: &api.UserAssignedIdentities{
				ControlPlaneOperators:  map[string]string{"cluster-api-azure": testIdentity("capz"), "kms": testIdentity("kms")},
				DataPlaneOperators:     map[string]string{"disk-csi-driver": testIdentity("dp-disk")},
				ServiceManagedIdentity: testIdentity("service"),
			}},
		},
		Autoscaling:             &api.ClusterAutoscaling{MaxNodesTotal: ptr(int32(50)), MaxPodGracePeriodSeconds: ptr(int32(300)), MaxNodeProvisionTimeSeconds: ptr(int32(90)), PodPriorityThreshold: ptr(int32(-5))},
		NodeDrainTimeoutMinutes: ptr(int32(30)),
		Etcd: &api.ClusterEtcd{DataEncryption: &api.EtcdDataEncryption{
			KeyManagementMode: "CustomerManaged",
			CustomerManaged: &api.EtcdCustomerManaged{EncryptionType: "KMS", KMS: &api.EtcdKMS{
				Visibility: "Private",
				ActiveKey:  &api.KMSKey{Name: "etcd-key", VaultName: "my-vault", Version: "0ac571d3970149dfb69e433820082616"},
			}},
		}},
		ClusterImageRegistry: &api.ClusterImageRegistry{State: "Disabled"},
		CryptoRestrictions:   "FIPS",
		ImageDigestMirrors: []api.ImageDigestMirror{
			{Source: "quay.io/openshift-release-dev", Mirrors: []string{"mirror.example.com/ocp", "backup.example.com/ocp"}},
		},
	}
	p.ServiceProviderProperties.ExperimentalFeatures = &api.ExperimentalFeatures{
		SingleReplica: api.SingleReplica, SizeOverride: "Minimal", ControlPlaneOperatorImage: "quay.io/example/cpo@sha256:0123",
	}
	in.SPC.Properties.Spec.DesiredHostedClusterControlPlaneSize = "Large"
	in.SPC.Properties.Spec.ControlPlaneVersion.DesiredVersion = "4.21.0-rc.1"
	return in
}

// wire is the body as the SDK puts it on the wire, decoded.
func wire(t testing.TB, c *arohcp.Cluster) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, arohcp.MarshalCluster(c, &buf))
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	return m
}

// lookup is the value at a dotted path of a decoded body; a numeric segment indexes a
// list.
func lookup(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, seg := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[seg]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// normalize turns a Go value into what decoding its JSON gives.
func normalize(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// leaves are the paths of a decoded body's leaves, with list indices written as [].
// An empty object or list is a leaf of its own.
func leaves(prefix string, v any, out map[string]bool) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[prefix] = true
		}
		for k, child := range x {
			leaves(join(k), child, out)
		}
	case []any:
		if len(x) == 0 {
			out[prefix] = true
		}
		for _, child := range x {
			leaves(prefix+"[]", child, out)
		}
	default:
		out[prefix] = true
	}
}

// nodes are the paths of every node of a decoded body, leaves and containers.
func nodes(prefix string, v any, out map[string]bool) {
	if prefix != "" {
		out[prefix] = true
	}
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			nodes(join(k), child, out)
		}
	case []any:
		for _, child := range x {
			nodes(prefix+"[]", child, out)
		}
	}
}
