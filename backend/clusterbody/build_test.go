package clusterbody

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
)

// Shorthands for the parts of the test input that cases change.
func customer(in *Input) *api.ClusterCustomerProperties {
	return in.Cluster.Properties.CustomerProperties
}
func platform(in *Input) *api.ClusterPlatform { return customer(in).Platform }
func serviceProvider(in *Input) *api.ClusterServiceProviderProperties {
	return in.Cluster.Properties.ServiceProviderProperties
}
func dataEncryption(in *Input) *api.EtcdDataEncryption { return customer(in).Etcd.DataEncryption }

func customerManagedKMS(visibility string) *api.EtcdDataEncryption {
	return &api.EtcdDataEncryption{
		KeyManagementMode: "CustomerManaged",
		CustomerManaged: &api.EtcdCustomerManaged{EncryptionType: "KMS", KMS: &api.EtcdKMS{
			Visibility: visibility,
			ActiveKey:  &api.KMSKey{Name: "key", VaultName: "vault", Version: "v1"},
		}},
	}
}

// transformation is one case: a change to the minimal input, and what the wire then
// holds (want), lacks (absent), or why the build fails (wantErr, the Cosmos paths named).
type transformation struct {
	name    string
	mutate  func(*Input)
	want    map[string]any
	absent  []string
	wantErr []string
}

func runTransformations(t *testing.T, tests []transformation) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := minimalInput()
			if tt.mutate != nil {
				tt.mutate(&in)
			}
			body, err := Build(in)
			if tt.wantErr != nil {
				require.Error(t, err)
				assert.Nil(t, body)
				var de *DocumentError
				require.True(t, errors.As(err, &de), "a document error: %v", err)
				assert.Equal(t, tt.wantErr, de.Paths())
				for _, p := range tt.wantErr {
					assert.Contains(t, err.Error(), p, "the message names the Cosmos path")
				}
				return
			}
			require.NoError(t, err)
			m := wire(t, body)
			for path, want := range tt.want {
				got, ok := lookup(m, path)
				if assert.True(t, ok, "%s is sent", path) {
					assert.Equal(t, normalize(t, want), got, path)
				}
			}
			for _, path := range tt.absent {
				_, ok := lookup(m, path)
				assert.False(t, ok, "%s is not sent", path)
			}
		})
	}
}

// A cluster with only the required fields set: each optional field takes its default
// or is left out, and the rest comes from the identity as the table says.
func TestBuildDefaultsAndIdentity(t *testing.T) {
	t.Parallel()
	runTransformations(t, []transformation{{
		name: "minimal document",
		want: map[string]any{
			"kind":                  "Cluster",
			"id":                    testCSID,
			"name":                  "my-cluster",
			"region.id":             "westus3",
			"cloud_provider.id":     "azure",
			"product.id":            "aro",
			"hypershift.enabled":    true,
			"ccs.enabled":           true,
			"version.id":            "openshift-v4.20.8",
			"version.channel_group": "stable",
			"network": map[string]any{
				"type": "OVNKubernetes", "pod_cidr": "10.128.0.0/14", "service_cidr": "172.30.0.0/16",
				"machine_cidr": "10.0.0.0/16", "host_prefix": 23,
			},
			"image_registry.state":                 "enabled",
			"fips":                                 false,
			"api":                                  map[string]any{"listening": "external", "cidr_block_access": map[string]any{"allow": map[string]any{"mode": "allow_all"}}},
			"ingresses.items":                      []any{map[string]any{"kind": "Ingress", "default": true, "listening": "external"}},
			"node_drain_grace_period":              map[string]any{"value": 0, "unit": "minutes"},
			"registry_config.image_digest_mirrors": []any{},
			"autoscaler": map[string]any{
				"kind": "ClusterAutoscaler", "max_node_provision_time": "15m", "max_pod_grace_period": 600,
				"pod_priority_threshold": -10, "resource_limits": map[string]any{"max_nodes_total": 0},
			},
			"properties":                        map[string]any{},
			"azure.tenant_id":                   testTenant,
			"azure.subscription_id":             "0465bc32-c654-41b8-8d87-9815d7abe8f6",
			"azure.resource_group_name":         "some-rg",
			"azure.resource_name":               "my-cluster",
			"azure.managed_resource_group_name": testMRG,
			"azure.subnet_resource_id":          testSubnet,
			"azure.nodes_outbound_connectivity": map[string]any{"outbound_type": "load_balancer"},
			"azure.operators_authentication.managed_identities": map[string]any{
				"managed_identities_data_plane_identity_url": testIdentityURL,
				"control_plane_operators_managed_identities": map[string]any{},
				"data_plane_operators_managed_identities":    map[string]any{},
			},
			"azure.etcd_encryption": map[string]any{"data_encryption": map[string]any{"key_management_mode": "platform_managed"}},
			"provision_shard_id":    testShard,
		},
		absent: []string{
			"domain_prefix", "azure.network_security_group_resource_id", "azure.vnet_integration_subnet_resource_id",
			"api.cidr_block_access.allow.values",
		},
	}})
}

func TestBuildEnums(t *testing.T) {
	t.Parallel()
	runTransformations(t, []transformation{
		{name: "network type OVNKubernetes", mutate: func(in *Input) { customer(in).Network = &api.ClusterNetwork{NetworkType: "OVNKubernetes"} }, want: map[string]any{"network.type": "OVNKubernetes"}},
		{name: "network type Other", mutate: func(in *Input) { customer(in).Network = &api.ClusterNetwork{NetworkType: "Other"} }, want: map[string]any{"network.type": "Other"}},
		{name: "network type unknown", mutate: func(in *Input) { customer(in).Network = &api.ClusterNetwork{NetworkType: "OpenShiftSDN"} }, wantErr: []string{pathNetworkType}},
		{name: "image registry Enabled", mutate: func(in *Input) { customer(in).ClusterImageRegistry = &api.ClusterImageRegistry{State: "Enabled"} }, want: map[string]any{"image_registry.state": "enabled"}},
		{name: "image registry Disabled", mutate: func(in *Input) { customer(in).ClusterImageRegistry = &api.ClusterImageRegistry{State: "Disabled"} }, want: map[string]any{"image_registry.state": "disabled"}},
		{name: "image registry unknown", mutate: func(in *Input) { customer(in).ClusterImageRegistry = &api.ClusterImageRegistry{State: "enabled"} }, wantErr: []string{pathImageRegistry}},
		{name: "crypto FIPS", mutate: func(in *Input) { customer(in).CryptoRestrictions = "FIPS" }, want: map[string]any{"fips": true}},
		{name: "crypto None", mutate: func(in *Input) { customer(in).CryptoRestrictions = "None" }, want: map[string]any{"fips": false}},
		{name: "crypto unknown", mutate: func(in *Input) { customer(in).CryptoRestrictions = "FIPS140-3" }, wantErr: []string{pathCrypto}},
		{name: "API Public", mutate: func(in *Input) { customer(in).API = &api.ClusterAPI{Visibility: "Public"} }, want: map[string]any{"api.listening": "external"}},
		{name: "API Private", mutate: func(in *Input) { customer(in).API = &api.ClusterAPI{Visibility: "Private"} }, want: map[string]any{"api.listening": "internal"}},
		{name: "API unknown", mutate: func(in *Input) { customer(in).API = &api.ClusterAPI{Visibility: "Internal"} }, wantErr: []string{pathVisibility}},
		{name: "ingress Public", mutate: func(in *Input) { customer(in).Ingress = &api.ClusterIngress{Type: "Public"} }, want: map[string]any{"ingresses.items.0.listening": "external"}},
		{name: "ingress Private", mutate: func(in *Input) { customer(in).Ingress = &api.ClusterIngress{Type: "Private"} }, want: map[string]any{"ingresses.items.0.listening": "internal", "ingresses.items.0.default": true}},
		{name: "ingress Disabled", mutate: func(in *Input) { customer(in).Ingress = &api.ClusterIngress{Type: "Disabled"} }, wantErr: []string{pathIngressType}},
		{name: "ingress unknown", mutate: func(in *Input) { customer(in).Ingress = &api.ClusterIngress{Type: "External"} }, wantErr: []string{pathIngressType}},
		{name: "outbound LoadBalancer", mutate: func(in *Input) { platform(in).OutboundType = "LoadBalancer" }, want: map[string]any{"azure.nodes_outbound_connectivity.outbound_type": "load_balancer"}},
		{name: "outbound unknown", mutate: func(in *Input) { platform(in).OutboundType = "UserDefinedRouting" }, wantErr: []string{pathOutboundType}},
		{name: "key management PlatformManaged", mutate: func(in *Input) { dataEncryption(in).KeyManagementMode = "PlatformManaged" }, want: map[string]any{"azure.etcd_encryption.data_encryption.key_management_mode": "platform_managed"}},
		{name: "key management unknown", mutate: func(in *Input) { dataEncryption(in).KeyManagementMode = "platform_managed" }, wantErr: []string{pathKeyManagementMode}},
		{name: "KMS visibility Public", mutate: func(in *Input) { customer(in).Etcd.DataEncryption = customerManagedKMS("Public") }, want: map[string]any{"azure.etcd_encryption.data_encryption.customer_managed.kms.visibility": "public"}},
		{name: "KMS visibility Private", mutate: func(in *Input) { customer(in).Etcd.DataEncryption = customerManagedKMS("Private") }, want: map[string]any{"azure.etcd_encryption.data_encryption.customer_managed.kms.visibility": "private"}},
		{name: "KMS visibility absent is Public", mutate: func(in *Input) { customer(in).Etcd.DataEncryption = customerManagedKMS("") }, want: map[string]any{"azure.etcd_encryption.data_encryption.customer_managed.kms.visibility": "public"}},
		{name: "KMS visibility unknown", mutate: func(in *Input) { customer(in).Etcd.DataEncryption = customerManagedKMS("Internal") }, wantErr: []string{pathKMSVisibility}},
		{name: "encryption type unknown", mutate: func(in *Input) {
			customer(in).Etcd.DataEncryption = customerManagedKMS("")
			dataEncryption(in).CustomerManaged.EncryptionType = "HSM"
		}, wantErr: []string{pathEncryptionType}},
	})
}

func TestBuildValues(t *testing.T) {
	t.Parallel()
	runTransformations(t, []transformation{
		{name: "channel group candidate", mutate: func(in *Input) { customer(in).Version = &api.ClusterVersion{ID: "4.21", ChannelGroup: "candidate"} },
			want: map[string]any{"version.id": "openshift-v4.20.8-candidate", "version.channel_group": "candidate"}},
		{name: "pre-release desired version", mutate: func(in *Input) {
			customer(in).Version = &api.ClusterVersion{ChannelGroup: "candidate"}
			in.SPC.Properties.Spec.ControlPlaneVersion.DesiredVersion = "4.21.0-rc.1"
		}, want: map[string]any{"version.id": "openshift-v4.21.0-rc.1-candidate"}},
		{name: "the customer's X.Y is not the version", mutate: func(in *Input) { customer(in).Version = &api.ClusterVersion{ID: "4.19"} },
			want: map[string]any{"version.id": "openshift-v4.20.8"}},
		{name: "network as stored", mutate: func(in *Input) {
			customer(in).Network = &api.ClusterNetwork{PodCIDR: "10.132.0.0/14", ServiceCIDR: "172.31.0.0/16", MachineCIDR: "10.1.0.0/16", HostPrefix: ptr(int32(26))}
		}, want: map[string]any{"network": map[string]any{"type": "OVNKubernetes", "pod_cidr": "10.132.0.0/14", "service_cidr": "172.31.0.0/16", "machine_cidr": "10.1.0.0/16", "host_prefix": 26}}},
		{name: "domain prefix", mutate: func(in *Input) { customer(in).DNS = &api.ClusterDNS{BaseDomainPrefix: "abc"} }, want: map[string]any{"domain_prefix": "abc"}},
		{name: "empty domain prefix is left out", mutate: func(in *Input) { customer(in).DNS = &api.ClusterDNS{} }, absent: []string{"domain_prefix"}},
		{name: "authorized CIDRs", mutate: func(in *Input) {
			customer(in).API = &api.ClusterAPI{AuthorizedCIDRs: []string{"10.0.0.0/8", "192.0.2.1"}}
		},
			want: map[string]any{"api.cidr_block_access.allow": map[string]any{"mode": "allow_list", "values": []string{"10.0.0.0/8", "192.0.2.1"}}, "api.listening": "external"}},
		{name: "authorized CIDRs empty", mutate: func(in *Input) { customer(in).API = &api.ClusterAPI{AuthorizedCIDRs: []string{}} }, wantErr: []string{pathAuthorizedCIDRs}},
		{name: "node drain", mutate: func(in *Input) { customer(in).NodeDrainTimeoutMinutes = ptr(int32(45)) }, want: map[string]any{"node_drain_grace_period": map[string]any{"value": 45, "unit": "minutes"}}},
		{name: "image digest mirrors", mutate: func(in *Input) {
			customer(in).ImageDigestMirrors = []api.ImageDigestMirror{{Source: "a.io/x", Mirrors: []string{"m.io/x"}}, {Source: "b.io/y", Mirrors: []string{"n.io/y", "o.io/y"}}}
		}, want: map[string]any{"registry_config.image_digest_mirrors": []any{
			map[string]any{"kind": "ImageMirror", "source": "a.io/x", "mirrors": []string{"m.io/x"}},
			map[string]any{"kind": "ImageMirror", "source": "b.io/y", "mirrors": []string{"n.io/y", "o.io/y"}},
		}}},
		{name: "autoscaling as stored", mutate: func(in *Input) {
			customer(in).Autoscaling = &api.ClusterAutoscaling{MaxNodesTotal: ptr(int32(12)), MaxPodGracePeriodSeconds: ptr(int32(0)), MaxNodeProvisionTimeSeconds: ptr(int32(1200)), PodPriorityThreshold: ptr(int32(5))}
		}, want: map[string]any{"autoscaler": map[string]any{
			"kind": "ClusterAutoscaler", "max_node_provision_time": "20m", "max_pod_grace_period": 0,
			"pod_priority_threshold": 5, "resource_limits": map[string]any{"max_nodes_total": 12},
		}}},
		{name: "autoscaling partly stored", mutate: func(in *Input) { customer(in).Autoscaling = &api.ClusterAutoscaling{MaxNodesTotal: ptr(int32(3))} },
			want: map[string]any{"autoscaler.max_node_provision_time": "15m", "autoscaler.max_pod_grace_period": 600, "autoscaler.pod_priority_threshold": -10, "autoscaler.resource_limits.max_nodes_total": 3}},
		{name: "NSG and vnet integration subnet", mutate: func(in *Input) {
			platform(in).NetworkSecurityGroupID = testNSG
			platform(in).VnetIntegrationSubnetID = testVnetSubnet
		}, want: map[string]any{"azure.network_security_group_resource_id": testNSG, "azure.vnet_integration_subnet_resource_id": testVnetSubnet}},
		{name: "operator identities", mutate: func(in *Input) {
			platform(in).OperatorsAuthentication = &api.OperatorsAuthentication{UserAssignedIdentities: &api.UserAssignedIdentities{
				ControlPlaneOperators:  map[string]string{"ingress": testIdentity("ingress")},
				DataPlaneOperators:     map[string]string{"image-registry": testIdentity("dp-image-registry")},
				ServiceManagedIdentity: testIdentity("service"),
			}}
		}, want: map[string]any{"azure.operators_authentication.managed_identities": map[string]any{
			"managed_identities_data_plane_identity_url": testIdentityURL,
			"control_plane_operators_managed_identities": map[string]any{"ingress": map[string]any{"resource_id": testIdentity("ingress")}},
			"data_plane_operators_managed_identities":    map[string]any{"image-registry": map[string]any{"resource_id": testIdentity("dp-image-registry")}},
			"service_managed_identity":                   map[string]any{"resource_id": testIdentity("service")},
		}}},
		{name: "tenant and managed resource group keep their case", mutate: func(in *Input) { in.TenantID = "The-Tenant" },
			want: map[string]any{"azure.tenant_id": "The-Tenant", "azure.managed_resource_group_name": testMRG}},
		{name: "the name is the document's, lowercased", mutate: func(in *Input) { in.Cluster.Properties.Name = "My-CLUSTER" },
			want: map[string]any{"name": "my-cluster", "azure.resource_name": "my-cluster"}},
	})
}

func TestBuildProperties(t *testing.T) {
	t.Parallel()
	experimental := func(ef api.ExperimentalFeatures) func(*Input) {
		return func(in *Input) { serviceProvider(in).ExperimentalFeatures = &ef }
	}
	runTransformations(t, []transformation{
		{name: "no experimental features", mutate: experimental(api.ExperimentalFeatures{}), want: map[string]any{"properties": map[string]any{}}},
		{name: "single replica", mutate: experimental(api.ExperimentalFeatures{SingleReplica: "SingleReplica"}),
			want: map[string]any{"properties": map[string]any{PropertySingleReplica: "true"}}},
		{name: "another control plane availability", mutate: experimental(api.ExperimentalFeatures{SingleReplica: "HighlyAvailable"}),
			want: map[string]any{"properties": map[string]any{}}},
		{name: "minimal sizing", mutate: experimental(api.ExperimentalFeatures{SizeOverride: "Minimal"}),
			want: map[string]any{"properties": map[string]any{PropertySizeOverride: "e2e_minimal"}}},
		{name: "the SPC's size, lowercased", mutate: func(in *Input) { in.SPC.Properties.Spec.DesiredHostedClusterControlPlaneSize = "XXlarge" },
			want: map[string]any{"properties": map[string]any{PropertySizeOverride: "xxlarge"}}},
		{name: "the SPC's size wins over minimal sizing", mutate: func(in *Input) {
			experimental(api.ExperimentalFeatures{SizeOverride: "Minimal"})(in)
			in.SPC.Properties.Spec.DesiredHostedClusterControlPlaneSize = "Medium"
		}, want: map[string]any{"properties": map[string]any{PropertySizeOverride: "medium"}}},
		{name: "control plane operator image", mutate: experimental(api.ExperimentalFeatures{ControlPlaneOperatorImage: "quay.io/x/cpo:1"}),
			want: map[string]any{"properties": map[string]any{PropertyControlPlaneImage: "quay.io/x/cpo:1"}}},
	})
}

// Platform-managed encryption sends the mode alone; customer-managed KMS sends the key,
// its version included.
func TestBuildEtcdEncryption(t *testing.T) {
	t.Parallel()
	runTransformations(t, []transformation{
		{name: "platform managed", want: map[string]any{"azure.etcd_encryption": map[string]any{"data_encryption": map[string]any{"key_management_mode": "platform_managed"}}}},
		{name: "customer managed KMS", mutate: func(in *Input) { customer(in).Etcd.DataEncryption = customerManagedKMS("Private") },
			want: map[string]any{"azure.etcd_encryption": map[string]any{"data_encryption": map[string]any{
				"key_management_mode": "customer_managed",
				"customer_managed": map[string]any{"encryption_type": "kms", "kms": map[string]any{
					"visibility": "private",
					"active_key": map[string]any{"key_name": "key", "key_vault_name": "vault", "key_version": "v1"},
				}},
			}}}},
		{name: "platform managed with a stored key sends no version", mutate: func(in *Input) {
			customer(in).Etcd.DataEncryption = customerManagedKMS("")
			dataEncryption(in).KeyManagementMode = "PlatformManaged"
		}, want: map[string]any{"azure.etcd_encryption.data_encryption.customer_managed.kms.active_key": map[string]any{"key_name": "key", "key_vault_name": "vault"}}},
		{name: "customer managed without customerManaged", mutate: func(in *Input) { dataEncryption(in).KeyManagementMode = "CustomerManaged" }, wantErr: []string{pathCustomerManaged}},
		{name: "KMS without kms", mutate: func(in *Input) {
			customer(in).Etcd.DataEncryption = customerManagedKMS("")
			dataEncryption(in).CustomerManaged.KMS = nil
		}, wantErr: []string{pathKMS}},
		{name: "KMS key incomplete", mutate: func(in *Input) {
			customer(in).Etcd.DataEncryption = customerManagedKMS("")
			dataEncryption(in).CustomerManaged.KMS.ActiveKey = &api.KMSKey{}
		}, wantErr: []string{pathKMSKeyName, pathKMSVaultName, pathKMSKeyVersion}},
		{name: "no etcd", mutate: func(in *Input) { customer(in).Etcd = nil }, wantErr: []string{pathKeyManagementMode}},
		{name: "no key management mode", mutate: func(in *Input) { dataEncryption(in).KeyManagementMode = "" }, wantErr: []string{pathKeyManagementMode}},
	})
}

// A document that lacks what Cluster Service requires, or holds what it would refuse,
// names the field; nothing is built.
func TestBuildRefusesWhatClusterServiceWould(t *testing.T) {
	t.Parallel()
	otherSub := "/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/" + testGroup + "/providers/"
	runTransformations(t, []transformation{
		{name: "no pending ID", mutate: func(in *Input) { serviceProvider(in).PendingClusterServiceID = "" }, wantErr: []string{pathPendingID}},
		{name: "a legacy pending ID", mutate: func(in *Input) {
			serviceProvider(in).PendingClusterServiceID = "/api/clusters_mgmt/v1/clusters/" + testCSID
		}, wantErr: []string{pathPendingID}},
		{name: "no name", mutate: func(in *Input) { in.Cluster.Properties.Name = "" }, wantErr: []string{pathName}},
		{name: "no location", mutate: func(in *Input) { in.Cluster.Properties.Location = "" }, wantErr: []string{pathLocation}},
		{name: "no SPC", mutate: func(in *Input) { in.SPC = nil }, wantErr: []string{pathDesiredVersion}},
		{name: "no desired version", mutate: func(in *Input) { in.SPC.Properties.Spec.ControlPlaneVersion = nil }, wantErr: []string{pathDesiredVersion}},
		{name: "a bare X.Y desired version", mutate: func(in *Input) { in.SPC.Properties.Spec.ControlPlaneVersion.DesiredVersion = "4.20" }, wantErr: []string{pathDesiredVersion}},
		{name: "a channel group that is no word", mutate: func(in *Input) { customer(in).Version = &api.ClusterVersion{ChannelGroup: "candidate 4.20"} }, wantErr: []string{pathChannelGroup}},
		{name: "no tenant", mutate: func(in *Input) { in.TenantID = "" }, wantErr: []string{pathTenant}},
		{name: "no shard", mutate: func(in *Input) { in.ShardID = "" }, wantErr: []string{pathShard}},
		{name: "no customer properties", mutate: func(in *Input) { in.Cluster.Properties.CustomerProperties = nil }, wantErr: []string{pathMRG, pathSubnet, pathKeyManagementMode}},
		{name: "no managed resource group", mutate: func(in *Input) { platform(in).ManagedResourceGroup = "" }, wantErr: []string{pathMRG}},
		{name: "the managed resource group is the cluster's", mutate: func(in *Input) { platform(in).ManagedResourceGroup = "some-rg" }, wantErr: []string{pathMRG}},
		{name: "no subnet", mutate: func(in *Input) { platform(in).SubnetID = "" }, wantErr: []string{pathSubnet}},
		{name: "a subnet that is a vnet", mutate: func(in *Input) { platform(in).SubnetID = armID("Microsoft.Network/virtualNetworks/vnet") }, wantErr: []string{pathSubnet}},
		{name: "a subnet that is no ID", mutate: func(in *Input) { platform(in).SubnetID = "subnet" }, wantErr: []string{pathSubnet}},
		{name: "a subnet in another subscription", mutate: func(in *Input) { platform(in).SubnetID = otherSub + "Microsoft.Network/virtualNetworks/v/subnets/s" }, wantErr: []string{pathSubnet}},
		{name: "an NSG in another subscription", mutate: func(in *Input) {
			platform(in).NetworkSecurityGroupID = otherSub + "Microsoft.Network/networkSecurityGroups/nsg"
		}, wantErr: []string{pathNSG}},
		{name: "an NSG that is a subnet", mutate: func(in *Input) { platform(in).NetworkSecurityGroupID = testSubnet }, wantErr: []string{pathNSG}},
		{name: "a vnet integration subnet that is an NSG", mutate: func(in *Input) { platform(in).VnetIntegrationSubnetID = testNSG }, wantErr: []string{pathVnetIntegration}},
		{name: "no identity URL", mutate: func(in *Input) { serviceProvider(in).ManagedIdentitiesDataPlaneIdentityURL = "" }, wantErr: []string{pathIdentityURL}},
		{name: "an http identity URL", mutate: func(in *Input) {
			serviceProvider(in).ManagedIdentitiesDataPlaneIdentityURL = "http://dummyhost.identity.azure.net"
		}, wantErr: []string{pathIdentityURL}},
		{name: "an operator identity that is no identity", mutate: func(in *Input) {
			platform(in).OperatorsAuthentication = &api.OperatorsAuthentication{UserAssignedIdentities: &api.UserAssignedIdentities{
				ControlPlaneOperators: map[string]string{"kms": testSubnet},
				DataPlaneOperators:    map[string]string{"disk-csi-driver": "nope"},
			}}
		}, wantErr: []string{pathControlPlaneOps + ".kms", pathDataPlaneOps + ".disk-csi-driver"}},
		{name: "a service identity that is no identity", mutate: func(in *Input) {
			platform(in).OperatorsAuthentication = &api.OperatorsAuthentication{UserAssignedIdentities: &api.UserAssignedIdentities{ServiceManagedIdentity: testNSG}}
		}, wantErr: []string{pathServiceIdentity}},
		{name: "CIDRs that do not parse", mutate: func(in *Input) {
			customer(in).Network = &api.ClusterNetwork{PodCIDR: "10.128.0.0", ServiceCIDR: "fd00::/108", MachineCIDR: "10.0.0.0/33"}
		}, wantErr: []string{pathPodCIDR, pathServiceCIDR, pathMachineCIDR}},
		{name: "host prefix 0", mutate: func(in *Input) { customer(in).Network = &api.ClusterNetwork{HostPrefix: ptr(int32(0))} }, wantErr: []string{pathHostPrefix}},
		{name: "host prefix 33", mutate: func(in *Input) { customer(in).Network = &api.ClusterNetwork{HostPrefix: ptr(int32(33))} }, wantErr: []string{pathHostPrefix}},
	})
}

func TestBuildWithoutACluster(t *testing.T) {
	t.Parallel()
	_, err := Build(Input{})
	require.Error(t, err)
}

func TestMaxNodeProvisionTime(t *testing.T) {
	t.Parallel()
	for seconds, want := range map[int]string{900: "15m", 90: "1.5m", 0: "0m", 60: "1m", 100: "1.6666666666666665m", 3600: "60m"} {
		assert.Equal(t, want, MaxNodeProvisionTime(time.Duration(seconds)*time.Second), "%d s", seconds)
	}
}
