package clusterbody

import "strconv"

// Mapping is one field of the Cluster Service cluster Build sends.
type Mapping struct {
	// Wire is the field's dotted path in the CS cluster JSON. "[]" stands for every item
	// of a list, "<operator>" for every key of a map.
	Wire string
	// From are the Cosmos paths the value comes from: paths.go's notation, the cluster
	// document's from its root, another document's after its type. None for a constant.
	From []string
	// How is the transformation, in words.
	How string
}

// Mappings is every field Build sends, in the order docs/cluster-service-create.md
// lists them. It is the one statement of the body: a test holds the document's table to
// it, and another holds it to what Build marshals.
var Mappings = []Mapping{
	{Wire: "kind", How: "always `Cluster`, written by the SDK"},
	{Wire: "id", From: []string{pathPendingID}, How: "the last path segment of `/api/aro_hcp/v1alpha1/clusters/<id>`; Cluster Service must create the cluster under it"},
	{Wire: "name", From: []string{pathName}, How: "lowercased; required"},
	{Wire: "region.kind", How: "always `CloudRegion`, written by the SDK"},
	{Wire: "region.id", From: []string{pathLocation}, How: "as stored; required"},
	{Wire: "cloud_provider.kind", How: "always `CloudProvider`, written by the SDK"},
	{Wire: "cloud_provider.id", How: "always `" + CloudProvider + "`"},
	{Wire: "product.kind", How: "always `Product`, written by the SDK"},
	{Wire: "product.id", How: "always `" + Product + "`"},
	{Wire: "hypershift.enabled", How: "always `true`"},
	{Wire: "ccs.kind", How: "always `CCS`, written by the SDK"},
	{Wire: "ccs.enabled", How: "always `true`"},
	{Wire: "version.kind", How: "always `Version`, written by the SDK"},
	{Wire: "version.id", From: []string{pathDesiredVersion, pathChannelGroup}, How: "`" + VersionPrefix + "` + X.Y.Z, then `-<pre-release>` if any, then `-<channel group>` unless the group is `" + DefaultChannelGroup + "`: `openshift-v4.20.8`, `openshift-v4.21.0-rc.1-candidate`; a desired version that is not a full X.Y.Z is an error. Never from `customerProperties.version.id`, which holds only X.Y"},
	{Wire: "version.channel_group", From: []string{pathChannelGroup}, How: "as stored; `" + DefaultChannelGroup + "` when absent; must be one lowercase word"},
	{Wire: "network.type", From: []string{pathNetworkType}, How: "`OVNKubernetes` or `Other`, as stored; `" + DefaultNetworkType + "` when absent; any other value is an error"},
	{Wire: "network.pod_cidr", From: []string{pathPodCIDR}, How: "as stored; `" + DefaultPodCIDR + "` when absent; must be an IPv4 CIDR"},
	{Wire: "network.service_cidr", From: []string{pathServiceCIDR}, How: "as stored; `" + DefaultServiceCIDR + "` when absent; must be an IPv4 CIDR"},
	{Wire: "network.machine_cidr", From: []string{pathMachineCIDR}, How: "as stored; `" + DefaultMachineCIDR + "` when absent; must be an IPv4 CIDR"},
	{Wire: "network.host_prefix", From: []string{pathHostPrefix}, How: "as stored; `" + strconv.Itoa(DefaultHostPrefix) + "` when absent; must be in 1..32"},
	{Wire: "image_registry.state", From: []string{pathImageRegistry}, How: "`Enabled` → `enabled`, `Disabled` → `disabled`; `" + DefaultImageRegistryState + "` when absent; any other value is an error"},
	{Wire: "fips", From: []string{pathCrypto}, How: "`FIPS` → `true`, `None` → `false`; `" + DefaultCryptoRestrictions + "` when absent; any other value is an error"},
	{Wire: "domain_prefix", From: []string{pathDomainPrefix}, How: "as stored; left out when empty (Cluster Service refuses an empty string and picks a prefix itself)"},
	{Wire: "api.listening", From: []string{pathVisibility}, How: "`Public` → `external`, `Private` → `internal`; `" + DefaultVisibility + "` when absent; any other value is an error"},
	{Wire: "api.cidr_block_access.allow.mode", From: []string{pathAuthorizedCIDRs}, How: "absent or null → `" + allowAll + "`; a non-empty list → `" + allowList + "`; an empty list `[]` is an error"},
	{Wire: "api.cidr_block_access.allow.values[]", From: []string{pathAuthorizedCIDRs}, How: "the list as stored, only with `" + allowList + "`"},
	{Wire: "ingresses.items[].kind", How: "always `Ingress`, written by the SDK; the list holds exactly one item"},
	{Wire: "ingresses.items[].default", How: "always `true`"},
	{Wire: "ingresses.items[].listening", From: []string{pathIngressType}, How: "`Public` → `external`, `Private` → `internal`; `" + DefaultIngressType + "` when absent; `Disabled` and any other value are errors"},
	{Wire: "node_drain_grace_period.value", From: []string{pathNodeDrain}, How: "the minutes as a number; `0` when absent"},
	{Wire: "node_drain_grace_period.unit", How: "always `" + NodeDrainUnit + "`"},
	{Wire: "registry_config.image_digest_mirrors", From: []string{pathMirrors}, How: "always sent: one item per stored entry, `[]` when there are none"},
	{Wire: "registry_config.image_digest_mirrors[].kind", How: "always `ImageMirror`, written by the SDK"},
	{Wire: "registry_config.image_digest_mirrors[].source", From: []string{pathMirrors + "[].source"}, How: "as stored"},
	{Wire: "registry_config.image_digest_mirrors[].mirrors[]", From: []string{pathMirrors + "[].mirrors[]"}, How: "as stored; `mirrorSourcePolicy` is not sent"},
	{Wire: "autoscaler.kind", How: "always `ClusterAutoscaler`, written by the SDK"},
	{Wire: "autoscaler.max_node_provision_time", From: []string{pathMaxNodeProvision}, How: "seconds as minutes, the shortest exact decimal followed by `m`: `900` → `15m`, `90` → `1.5m`; `" + strconv.Itoa(DefaultMaxNodeProvisionTimeSeconds) + "` when absent"},
	{Wire: "autoscaler.max_pod_grace_period", From: []string{pathMaxPodGrace}, How: "seconds as stored; `" + strconv.Itoa(DefaultMaxPodGracePeriodSeconds) + "` when absent"},
	{Wire: "autoscaler.pod_priority_threshold", From: []string{pathPodPriority}, How: "as stored; `" + strconv.Itoa(DefaultPodPriorityThreshold) + "` when absent"},
	{Wire: "autoscaler.resource_limits.max_nodes_total", From: []string{pathMaxNodesTotal}, How: "as stored; `0` when absent"},
	{Wire: "properties", From: []string{pathExperimental, pathDesiredSize}, How: "always sent, `{}` when no key below applies"},
	{Wire: "properties." + PropertySingleReplica, From: []string{pathSingleReplica}, How: "`" + PropertyEnabled + "`, only when the feature is `SingleReplica`"},
	{Wire: "properties." + PropertySizeOverride, From: []string{pathDesiredSize, pathSizeOverride}, How: "the SPC's size lowercased when set (`Large` → `large`); otherwise `" + PropertyMinimalSize + "` when the feature is `Minimal`; otherwise absent"},
	{Wire: "properties." + PropertyControlPlaneImage, From: []string{pathControlPlaneImage}, How: "the image as stored, only when set"},
	{Wire: "azure.tenant_id", From: []string{pathTenant}, How: "as stored, case kept; required"},
	{Wire: "azure.subscription_id", From: []string{pathResourceID}, How: "its subscription segment, lowercased"},
	{Wire: "azure.resource_group_name", From: []string{pathResourceID}, How: "its resource group segment, lowercased"},
	{Wire: "azure.resource_name", From: []string{pathName}, How: "lowercased"},
	{Wire: "azure.managed_resource_group_name", From: []string{pathMRG}, How: "as stored, case kept; required, and must differ from the cluster's resource group"},
	{Wire: "azure.subnet_resource_id", From: []string{pathSubnet}, How: "as stored; required; a `" + armTypeSubnet + "` ID in the cluster's subscription"},
	{Wire: "azure.network_security_group_resource_id", From: []string{pathNSG}, How: "as stored; left out when empty (Cluster Service refuses an empty string); a `" + armTypeNetworkSecurityGroup + "` ID in the cluster's subscription"},
	{Wire: "azure.vnet_integration_subnet_resource_id", From: []string{pathVnetIntegration}, How: "as stored; left out when empty (Cluster Service refuses an empty string); a `" + armTypeSubnet + "` ID"},
	{Wire: "azure.nodes_outbound_connectivity.outbound_type", From: []string{pathOutboundType}, How: "`LoadBalancer` → `load_balancer`; `" + DefaultOutboundType + "` when absent; any other value is an error"},
	{Wire: "azure.operators_authentication.managed_identities.managed_identities_data_plane_identity_url", From: []string{pathIdentityURL}, How: "as stored (the frontend took it from the create's `X-Ms-Identity-Url` header); required; an https URL"},
	{Wire: "azure.operators_authentication.managed_identities.control_plane_operators_managed_identities", From: []string{pathControlPlaneOps}, How: "always sent, one key per operator, `{}` when there are none"},
	{Wire: "azure.operators_authentication.managed_identities.control_plane_operators_managed_identities.<operator>.resource_id", From: []string{pathControlPlaneOps + ".<operator>"}, How: "as stored; a `" + armTypeUserAssignedIdentity + "` ID"},
	{Wire: "azure.operators_authentication.managed_identities.data_plane_operators_managed_identities", From: []string{pathDataPlaneOps}, How: "always sent, one key per operator, `{}` when there are none"},
	{Wire: "azure.operators_authentication.managed_identities.data_plane_operators_managed_identities.<operator>.resource_id", From: []string{pathDataPlaneOps + ".<operator>"}, How: "as stored; a `" + armTypeUserAssignedIdentity + "` ID"},
	{Wire: "azure.operators_authentication.managed_identities.service_managed_identity.resource_id", From: []string{pathServiceIdentity}, How: "as stored, only when set (ARO-HCP leaves it out otherwise); a `" + armTypeUserAssignedIdentity + "` ID"},
	{Wire: "azure.etcd_encryption.data_encryption.key_management_mode", From: []string{pathKeyManagementMode}, How: "`PlatformManaged` → `platform_managed`, `CustomerManaged` → `customer_managed`; required, no default; any other value is an error"},
	{Wire: "azure.etcd_encryption.data_encryption.customer_managed.encryption_type", From: []string{pathEncryptionType}, How: "`KMS` → `kms`, only when `customerManaged` is stored (required with `CustomerManaged`); any other value is an error"},
	{Wire: "azure.etcd_encryption.data_encryption.customer_managed.kms.active_key.key_name", From: []string{pathKMSKeyName}, How: "as stored, only when `kms` is stored (required with `KMS`); required"},
	{Wire: "azure.etcd_encryption.data_encryption.customer_managed.kms.active_key.key_vault_name", From: []string{pathKMSVaultName}, How: "as stored, only when `kms` is stored; required"},
	{Wire: "azure.etcd_encryption.data_encryption.customer_managed.kms.active_key.key_version", From: []string{pathKMSKeyVersion}, How: "as stored, only with `CustomerManaged` and `KMS`; then required"},
	{Wire: "azure.etcd_encryption.data_encryption.customer_managed.kms.visibility", From: []string{pathKMSVisibility}, How: "`Public` → `public`, `Private` → `private`, only when `kms` is stored; `" + DefaultKMSVisibility + "` when absent (ARO-HCP's read default); any other value is an error"},
	{Wire: "provision_shard_id", From: []string{pathShard}, How: "the last path segment of `/api/aro_hcp/v1alpha1/provision_shards/<id>` of the management cluster placement chose; required"},
}
