package fakeclusterservice

import (
	"crypto/sha1"
	"fmt"
	"strings"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
)

// Defaults of the bodies ValidCluster builds. They are realistic values in ARO-HCP's shape
// (GUIDs, a real region, the identity URL ARO-HCP's own tests use), not placeholders, so
// that a check on one of them sees what production would send.
const (
	DefaultSubscriptionID = "6b690bec-0c16-4ecb-8f67-781caf40bba7"
	DefaultTenantID       = "9b1c5e8a-3f0d-4c71-a5e2-7d64c0b2f8a1"
	DefaultLocation       = "eastus"
	DefaultVersionID      = "openshift-v4.20.8"
	DefaultIdentityURL    = "https://dummyhost.identity.azure.net/otherinformation?aqueryarg=somevalue"
)

// Identity is where a cluster lives in Azure. ValidClusterFor fills each empty field with
// a default and derives the rest of the body from it (the subnet, NSG and managed
// identities are in the same subscription and resource group), so the body stays valid
// whichever fields a caller sets.
type Identity struct {
	SubscriptionID string
	// ResourceGroup defaults to "rg-" + Name.
	ResourceGroup string
	// Name is both the CS name and azure.resource_name; ARO-HCP sends it lowercased.
	Name     string
	TenantID string
	// ManagedResourceGroup defaults to the name ARO-HCP's API layer gives it,
	// "arohcp-<name, at most 45 characters>-<uuid>".
	ManagedResourceGroup string
	Location             string
}

// ValidCluster is a complete cluster create body, as ARO-HCP's backend sends it for a
// default cluster (public API and ingress, platform-managed etcd encryption, the NSG and
// the service managed identity set), that the fake accepts. id may be empty (CS then
// picks one) and so may shardID (no pin). Tests that need an invalid body start from it
// and change one field.
func ValidCluster(id, name, shardID string) *arohcp.ClusterBuilder {
	return ValidClusterFor(id, Identity{Name: name}, shardID)
}

// ValidClusterFor is ValidCluster for a cluster at a given Azure identity.
func ValidClusterFor(id string, in Identity, shardID string) *arohcp.ClusterBuilder {
	in = in.withDefaults()
	b := arohcp.NewCluster().
		Name(in.Name).
		Region(arohcp.NewCloudRegion().ID(in.Location)).
		CloudProvider(arohcp.NewCloudProvider().ID("azure")).
		Product(arohcp.NewProduct().ID("aro")).
		Hypershift(arohcp.NewHypershift().Enabled(true)).
		CCS(arohcp.NewCCS().Enabled(true)).
		Version(arohcp.NewVersion().ID(DefaultVersionID).ChannelGroup("stable")).
		FIPS(false).
		Network(arohcp.NewNetwork().
			Type("OVNKubernetes").
			PodCIDR("10.128.0.0/14").
			ServiceCIDR("172.30.0.0/16").
			MachineCIDR("10.0.0.0/16").
			HostPrefix(23)).
		API(arohcp.NewClusterAPI().
			Listening(arohcp.ListeningMethodExternal).
			CIDRBlockAccess(arohcp.NewCIDRBlockAccess().
				Allow(arohcp.NewCIDRBlockAllowAccess().Mode("allow_all")))).
		Ingresses(arohcp.NewIngressList().Items(
			arohcp.NewIngress().Default(true).Listening(arohcp.ListeningMethodExternal))).
		ImageRegistry(arohcp.NewClusterImageRegistry().State("enabled")).
		NodeDrainGracePeriod(arohcp.NewValue().Unit("minutes").Value(0)).
		RegistryConfig(arohcp.NewClusterRegistryConfig().ImageDigestMirrors()).
		Autoscaler(arohcp.NewClusterAutoscaler().
			MaxNodeProvisionTime("15m").
			MaxPodGracePeriod(600).
			PodPriorityThreshold(-10).
			ResourceLimits(arohcp.NewAutoscalerResourceLimits().MaxNodesTotal(0))).
		Properties(map[string]string{}).
		Azure(validAzure(in))
	// ARO-HCP leaves an empty prefix out: CS refuses "".
	if prefix := domainPrefix(in.Name); prefix != "" {
		b.DomainPrefix(prefix)
	}
	if id != "" {
		b.ID(id)
	}
	if shardID != "" {
		b.ProvisionShardID(shardID)
	}
	return b
}

func (in Identity) withDefaults() Identity {
	if in.SubscriptionID == "" {
		in.SubscriptionID = DefaultSubscriptionID
	}
	if in.ResourceGroup == "" {
		in.ResourceGroup = "rg-" + in.Name
	}
	if in.TenantID == "" {
		in.TenantID = DefaultTenantID
	}
	if in.ManagedResourceGroup == "" {
		in.ManagedResourceGroup = defaultManagedResourceGroup(in.Name)
	}
	if in.Location == "" {
		in.Location = DefaultLocation
	}
	return in
}

// The operators ARO-HCP's 4.20 clusters have identities for, as in the captured cluster
// document realcosmos-hcpcluster-deleting-with-legacy-fields.json.
var (
	controlPlaneOperators = []string{
		"cloud-controller-manager", "cloud-network-config", "cluster-api-azure", "control-plane",
		"disk-csi-driver", "file-csi-driver", "image-registry", "ingress", "kms",
	}
	dataPlaneOperators = []string{"disk-csi-driver", "file-csi-driver", "image-registry"}
)

func validAzure(in Identity) *arohcp.AzureBuilder {
	group := "/subscriptions/" + in.SubscriptionID + "/resourceGroups/" + in.ResourceGroup + "/providers/"
	identity := func(name string) string {
		return group + "Microsoft.ManagedIdentity/userAssignedIdentities/" + name
	}
	cp := make(map[string]*arohcp.AzureControlPlaneManagedIdentityBuilder, len(controlPlaneOperators))
	for _, op := range controlPlaneOperators {
		cp[op] = arohcp.NewAzureControlPlaneManagedIdentity().ResourceID(identity(in.Name + "-cp-" + op))
	}
	dp := make(map[string]*arohcp.AzureDataPlaneManagedIdentityBuilder, len(dataPlaneOperators))
	for _, op := range dataPlaneOperators {
		dp[op] = arohcp.NewAzureDataPlaneManagedIdentity().ResourceID(identity(in.Name + "-dp-" + op))
	}
	return arohcp.NewAzure().
		TenantID(in.TenantID).
		SubscriptionID(in.SubscriptionID).
		ResourceGroupName(in.ResourceGroup).
		ResourceName(in.Name).
		ManagedResourceGroupName(in.ManagedResourceGroup).
		SubnetResourceID(group + "Microsoft.Network/virtualNetworks/" + in.Name + "-vnet/subnets/" + in.Name + "-subnet").
		NetworkSecurityGroupResourceID(group + "Microsoft.Network/networkSecurityGroups/" + in.Name + "-nsg").
		NodesOutboundConnectivity(arohcp.NewAzureNodesOutboundConnectivity().OutboundType("load_balancer")).
		EtcdEncryption(arohcp.NewAzureEtcdEncryption().DataEncryption(
			arohcp.NewAzureEtcdDataEncryption().KeyManagementMode("platform_managed"))).
		OperatorsAuthentication(arohcp.NewAzureOperatorsAuthentication().ManagedIdentities(
			arohcp.NewAzureOperatorsAuthenticationManagedIdentities().
				ManagedIdentitiesDataPlaneIdentityUrl(DefaultIdentityURL).
				ControlPlaneOperatorsManagedIdentities(cp).
				DataPlaneOperatorsManagedIdentities(dp).
				ServiceManagedIdentity(arohcp.NewAzureServiceManagedIdentity().ResourceID(identity(in.Name + "-service")))))
}

// defaultManagedResourceGroup is the name ARO-HCP's API layer gives a managed resource
// group the customer did not name; the uuid is derived from the name so bodies are
// reproducible.
func defaultManagedResourceGroup(name string) string {
	short := name
	if len(short) > 45 {
		short = short[:45]
	}
	sum := sha1.Sum([]byte(name))
	return fmt.Sprintf("arohcp-%s-%x-%x-%x-%x-%x", short, sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
}

// domainPrefix is a DNS label of at most 15 characters, the length ARO-HCP generates.
func domainPrefix(name string) string {
	p := strings.Trim(strings.ToLower(name), "-")
	if len(p) > 15 {
		p = strings.TrimRight(p[:15], "-")
	}
	return p
}
