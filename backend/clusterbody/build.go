package clusterbody

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
)

// Input is what a create is built from. The caller has checked the preconditions: the
// cluster has a pending CS ID, the SPC a desired version, the subscription a tenant, and
// the placed management cluster a provision shard. Build checks them again, so that no
// caller can POST a body Cluster Service would refuse for want of them.
type Input struct {
	Cluster *api.Cluster
	SPC     *api.ServiceProviderCluster
	// TenantID is the subscription's properties.properties.tenantId, case kept.
	TenantID string
	// ShardID is the bare provision shard ID of the placed management cluster.
	ShardID string
}

// Defaults of the fields a stored cluster may lack. ARO-HCP's frontend writes each of
// them into a new cluster document, and its read path fills in the enums of older
// documents; a document without one is sent as if it had the default. They are the
// values of ARO-HCP's NewDefaultHCPOpenShiftCluster and EnsureDefaults.
const (
	DefaultNetworkType                 = "OVNKubernetes"
	DefaultPodCIDR                     = "10.128.0.0/14"
	DefaultServiceCIDR                 = "172.30.0.0/16"
	DefaultMachineCIDR                 = "10.0.0.0/16"
	DefaultHostPrefix                  = 23
	DefaultVisibility                  = "Public"
	DefaultIngressType                 = "Public"
	DefaultImageRegistryState          = "Enabled"
	DefaultCryptoRestrictions          = "None"
	DefaultOutboundType                = "LoadBalancer"
	DefaultKMSVisibility               = "Public"
	DefaultMaxNodeProvisionTimeSeconds = 900
	DefaultMaxPodGracePeriodSeconds    = 600
	DefaultPodPriorityThreshold        = -10
)

// Constants of every ARO-HCP cluster in Cluster Service.
const (
	CloudProvider = "azure"
	Product       = "aro"
	// NodeDrainUnit is the unit of node_drain_grace_period.
	NodeDrainUnit = "minutes"
)

// Keys and values of the CS cluster's properties map.
const (
	PropertySingleReplica     = "hosted_cluster_single_replica"
	PropertySizeOverride      = "hosted_cluster_size_override"
	PropertyControlPlaneImage = "control_plane_operator_image"
	PropertyEnabled           = "true"
	PropertyMinimalSize       = "e2e_minimal"
)

// Values of the cluster document that the body depends on.
const (
	experimentalMinimalSizing = "Minimal"
	encryptionTypeKMS         = "KMS"
	keyManagementCustomer     = "CustomerManaged"
	ingressDisabled           = "Disabled"
)

// CS values without an SDK constant.
const (
	allowAll  = "allow_all"
	allowList = "allow_list"
)

// ARM resource types the body's resource IDs must have.
const (
	armTypeSubnet               = "Microsoft.Network/virtualNetworks/subnets"
	armTypeNetworkSecurityGroup = "Microsoft.Network/networkSecurityGroups"
	armTypeUserAssignedIdentity = "Microsoft.ManagedIdentity/userAssignedIdentities"
)

// The enumerations of the cluster document and their Cluster Service values. A value
// not in its map has no CS counterpart, and the document cannot be created.
var (
	networkTypes        = map[string]string{"OVNKubernetes": "OVNKubernetes", "Other": "Other"}
	listenings          = map[string]arohcp.ListeningMethod{"Public": arohcp.ListeningMethodExternal, "Private": arohcp.ListeningMethodInternal}
	imageRegistryStates = map[string]string{"Enabled": "enabled", "Disabled": "disabled"}
	fipsModes           = map[string]bool{"FIPS": true, "None": false}
	outboundTypes       = map[string]string{"LoadBalancer": "load_balancer"}
	keyManagementModes  = map[string]string{"PlatformManaged": "platform_managed", keyManagementCustomer: "customer_managed"}
	encryptionTypes     = map[string]string{encryptionTypeKMS: "kms"}
	kmsVisibilities     = map[string]arohcp.AzureKmsEncryptionVisibility{"Public": arohcp.AzureKmsEncryptionVisibilityPublic, "Private": arohcp.AzureKmsEncryptionVisibilityPrivate}
)

// FieldError is one Cosmos field that cannot become a Cluster Service value.
type FieldError struct {
	// Path is the field's Cosmos path (see paths.go for the notation).
	Path    string
	Problem string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Problem }

// DocumentError lists every field of a cluster's documents that keeps it from being
// created; all of them, so that one correction can fix them all.
type DocumentError struct {
	Fields []*FieldError
}

func (e *DocumentError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Error()
	}
	return "the cluster cannot be created in Cluster Service: " + strings.Join(parts, "; ")
}

// Paths are the Cosmos paths the error names, in the order found.
func (e *DocumentError) Paths() []string {
	out := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		out[i] = f.Path
	}
	return out
}

// Build returns the cluster to POST, field for field as Mappings says. A *DocumentError
// names each Cosmos field that cannot be turned into a CS value; such a document stays
// uncreated until it changes.
func Build(in Input) (*arohcp.Cluster, error) {
	if in.Cluster == nil {
		return nil, errors.New("building the Cluster Service cluster: no cluster document")
	}
	b := &builder{in: in}
	body := b.cluster()
	if len(b.problems) > 0 {
		return nil, &DocumentError{Fields: b.problems}
	}
	out, err := body.Build()
	if err != nil {
		return nil, fmt.Errorf("building the Cluster Service cluster %s: %w", in.Cluster.ResourceID, err)
	}
	return out, nil
}

// builder gathers the body and every problem found on the way.
type builder struct {
	in       Input
	problems []*FieldError
}

func (b *builder) fail(path, format string, args ...any) {
	b.problems = append(b.problems, &FieldError{Path: path, Problem: fmt.Sprintf(format, args...)})
}

// required reports whether value is set, and records the problem when it is not.
func (b *builder) required(path, value string) bool {
	if value == "" {
		b.fail(path, "required, and not set")
		return false
	}
	return true
}

func (b *builder) cluster() *arohcp.ClusterBuilder {
	p := &b.in.Cluster.Properties
	cp := p.CustomerProperties
	if cp == nil {
		cp = &api.ClusterCustomerProperties{}
	}
	sp := p.ServiceProvider()

	c := arohcp.NewCluster()
	if id, err := clusterservice.ParseClusterHREF(sp.PendingClusterServiceID); err != nil {
		b.fail(pathPendingID, "%v", err)
	} else {
		c.ID(id)
	}
	if b.required(pathName, p.Name) {
		c.Name(strings.ToLower(p.Name))
	}
	if b.required(pathLocation, p.Location) {
		c.Region(arohcp.NewCloudRegion().ID(p.Location))
	}
	c.CloudProvider(arohcp.NewCloudProvider().ID(CloudProvider)).
		Product(arohcp.NewProduct().ID(Product)).
		Hypershift(arohcp.NewHypershift().Enabled(true)).
		CCS(arohcp.NewCCS().Enabled(true))
	if v := b.version(cp); v != nil {
		c.Version(v)
	}
	c.Network(b.network(cp.Network))
	c.ImageRegistry(arohcp.NewClusterImageRegistry().State(b.imageRegistry(cp.ClusterImageRegistry)))
	c.FIPS(b.fips(cp.CryptoRestrictions))
	// Cluster Service refuses an empty domain prefix, and picks one itself when none is sent.
	if cp.DNS != nil && cp.DNS.BaseDomainPrefix != "" {
		c.DomainPrefix(cp.DNS.BaseDomainPrefix)
	}
	c.API(b.api(cp.API))
	if l, ok := b.ingress(cp.Ingress); ok {
		c.Ingresses(arohcp.NewIngressList().Items(arohcp.NewIngress().Default(true).Listening(l)))
	}
	drain := int32(0)
	if cp.NodeDrainTimeoutMinutes != nil {
		drain = *cp.NodeDrainTimeoutMinutes
	}
	c.NodeDrainGracePeriod(arohcp.NewValue().Unit(NodeDrainUnit).Value(float64(drain)))
	c.RegistryConfig(arohcp.NewClusterRegistryConfig().ImageDigestMirrors(mirrors(cp.ImageDigestMirrors)...))
	c.Autoscaler(autoscaler(cp.Autoscaling))
	c.Properties(b.properties(sp.ExperimentalFeatures))
	c.Azure(b.azure(cp, sp))
	if b.required(pathShard, b.in.ShardID) {
		c.ProvisionShardID(b.in.ShardID)
	}
	return c
}

func (b *builder) version(cp *api.ClusterCustomerProperties) *arohcp.VersionBuilder {
	group := DefaultChannelGroup
	if cp.Version != nil && cp.Version.ChannelGroup != "" {
		group = cp.Version.ChannelGroup
	}
	desired := ""
	if b.in.SPC != nil {
		desired = b.in.SPC.Properties.DesiredControlPlaneVersion()
	}
	// The two fields live in two documents; each problem is named where it is.
	ok := true
	if err := validateDesiredVersion(desired); err != nil {
		b.fail(pathDesiredVersion, "%v", err)
		ok = false
	}
	if err := validateChannelGroup(group); err != nil {
		b.fail(pathChannelGroup, "%v", err)
		ok = false
	}
	if !ok {
		return nil
	}
	id, err := VersionID(desired, group)
	if err != nil {
		b.fail(pathDesiredVersion, "%v", err)
		return nil
	}
	return arohcp.NewVersion().ID(id).ChannelGroup(group)
}

func (b *builder) network(n *api.ClusterNetwork) *arohcp.NetworkBuilder {
	if n == nil {
		n = &api.ClusterNetwork{}
	}
	typ, _ := enum(b, pathNetworkType, n.NetworkType, DefaultNetworkType, networkTypes)
	hostPrefix := int32(DefaultHostPrefix)
	if n.HostPrefix != nil {
		hostPrefix = *n.HostPrefix
	}
	if hostPrefix < 1 || hostPrefix > 32 {
		b.fail(pathHostPrefix, "host prefix %d is not in 1..32", hostPrefix)
	}
	return arohcp.NewNetwork().
		Type(typ).
		PodCIDR(b.cidr(pathPodCIDR, n.PodCIDR, DefaultPodCIDR)).
		ServiceCIDR(b.cidr(pathServiceCIDR, n.ServiceCIDR, DefaultServiceCIDR)).
		MachineCIDR(b.cidr(pathMachineCIDR, n.MachineCIDR, DefaultMachineCIDR)).
		HostPrefix(int(hostPrefix))
}

// cidr is value, or def when it is empty; it must be an IPv4 CIDR.
func (b *builder) cidr(path, value, def string) string {
	if value == "" {
		return def
	}
	ip, _, err := net.ParseCIDR(value)
	if err != nil || ip.To4() == nil {
		b.fail(path, "%q is not an IPv4 CIDR", value)
	}
	return value
}

func (b *builder) imageRegistry(r *api.ClusterImageRegistry) string {
	state := ""
	if r != nil {
		state = r.State
	}
	v, _ := enum(b, pathImageRegistry, state, DefaultImageRegistryState, imageRegistryStates)
	return v
}

func (b *builder) fips(crypto string) bool {
	v, _ := enum(b, pathCrypto, crypto, DefaultCryptoRestrictions, fipsModes)
	return v
}

func (b *builder) api(a *api.ClusterAPI) *arohcp.ClusterAPIBuilder {
	if a == nil {
		a = &api.ClusterAPI{}
	}
	listening, _ := enum(b, pathVisibility, a.Visibility, DefaultVisibility, listenings)
	out := arohcp.NewClusterAPI().Listening(listening)
	allow := arohcp.NewCIDRBlockAllowAccess()
	switch {
	case a.AuthorizedCIDRs == nil:
		// Absent or null: the API server is open to all.
		allow.Mode(allowAll)
	case len(a.AuthorizedCIDRs) == 0:
		// ARO-HCP refuses an empty list before the call; an allow list of nothing would
		// lock everyone out, and is no one's intent.
		b.fail(pathAuthorizedCIDRs, "an empty list; absent means open to all, a list must name at least one CIDR")
	default:
		allow.Mode(allowList).Values(a.AuthorizedCIDRs...)
	}
	return out.CIDRBlockAccess(arohcp.NewCIDRBlockAccess().Allow(allow))
}

func (b *builder) ingress(i *api.ClusterIngress) (arohcp.ListeningMethod, bool) {
	typ := ""
	if i != nil {
		typ = i.Type
	}
	if typ == ingressDisabled {
		b.fail(pathIngressType, "%q has no Cluster Service counterpart: every cluster gets a default ingress", typ)
		return "", false
	}
	return enum(b, pathIngressType, typ, DefaultIngressType, listenings)
}

func mirrors(in []api.ImageDigestMirror) []*arohcp.ImageMirrorBuilder {
	// Always a list, [] when there are none: an absent list would keep whatever
	// mirrors a cluster had, an empty one says there are none.
	out := make([]*arohcp.ImageMirrorBuilder, 0, len(in))
	for _, m := range in {
		out = append(out, arohcp.NewImageMirror().Source(m.Source).Mirrors(m.Mirrors...))
	}
	return out
}

func autoscaler(a *api.ClusterAutoscaling) *arohcp.ClusterAutoscalerBuilder {
	if a == nil {
		a = &api.ClusterAutoscaling{}
	}
	or := func(v *int32, def int32) int32 {
		if v == nil {
			return def
		}
		return *v
	}
	provision := time.Duration(or(a.MaxNodeProvisionTimeSeconds, DefaultMaxNodeProvisionTimeSeconds)) * time.Second
	return arohcp.NewClusterAutoscaler().
		MaxNodeProvisionTime(MaxNodeProvisionTime(provision)).
		MaxPodGracePeriod(int(or(a.MaxPodGracePeriodSeconds, DefaultMaxPodGracePeriodSeconds))).
		PodPriorityThreshold(int(or(a.PodPriorityThreshold, DefaultPodPriorityThreshold))).
		ResourceLimits(arohcp.NewAutoscalerResourceLimits().MaxNodesTotal(int(or(a.MaxNodesTotal, 0))))
}

// MaxNodeProvisionTime is the autoscaler's max_node_provision_time for d: minutes, as
// the shortest decimal that reads back exactly, then "m" (900 s is "15m", 90 s "1.5m").
// Cluster Service parses it as a Go duration.
func MaxNodeProvisionTime(d time.Duration) string {
	return strconv.FormatFloat(d.Minutes(), 'g', -1, 64) + "m"
}

func (b *builder) properties(ef *api.ExperimentalFeatures) map[string]string {
	if ef == nil {
		ef = &api.ExperimentalFeatures{}
	}
	// Always an object, {} by default: on a create there is nothing to keep.
	props := map[string]string{}
	if ef.SingleReplica == api.SingleReplica {
		props[PropertySingleReplica] = PropertyEnabled
	}
	size := ""
	if b.in.SPC != nil && b.in.SPC.Properties.Spec != nil {
		size = b.in.SPC.Properties.Spec.DesiredHostedClusterControlPlaneSize
	}
	switch {
	case size != "":
		// An SRE's choice on the SPC wins over the customer's experimental tag;
		// Cluster Service's size tiers are lowercase.
		props[PropertySizeOverride] = strings.ToLower(size)
	case ef.SizeOverride == experimentalMinimalSizing:
		props[PropertySizeOverride] = PropertyMinimalSize
	}
	if ef.ControlPlaneOperatorImage != "" {
		props[PropertyControlPlaneImage] = ef.ControlPlaneOperatorImage
	}
	return props
}

func (b *builder) azure(cp *api.ClusterCustomerProperties, sp api.ClusterServiceProviderProperties) *arohcp.AzureBuilder {
	rid, err := b.in.Cluster.ParsedResourceID()
	if err != nil {
		b.fail(pathResourceID, "%v", err)
		rid = nil
	}
	id := Identity(b.in.Cluster, b.in.TenantID)
	az := arohcp.NewAzure()
	if b.required(pathTenant, id.TenantID) {
		az.TenantID(id.TenantID)
	}
	subscription := ""
	if rid != nil {
		subscription = rid.SubscriptionID
		if rid.ResourceGroup == "" {
			b.fail(pathResourceID, "%s names no resource group", rid)
		}
		az.SubscriptionID(id.SubscriptionID).ResourceGroupName(id.ResourceGroupName)
	}
	if b.in.Cluster.Properties.Name != "" {
		az.ResourceName(id.ResourceName)
	}

	pl := cp.Platform
	if pl == nil {
		pl = &api.ClusterPlatform{}
	}
	if b.required(pathMRG, pl.ManagedResourceGroup) {
		if rid != nil && strings.EqualFold(pl.ManagedResourceGroup, rid.ResourceGroup) {
			b.fail(pathMRG, "%q is the cluster's own resource group; Cluster Service needs one of its own", pl.ManagedResourceGroup)
		}
		az.ManagedResourceGroupName(id.ManagedResourceGroupName)
	}
	if b.required(pathSubnet, pl.SubnetID) {
		b.armID(pathSubnet, pl.SubnetID, armTypeSubnet, subscription)
		az.SubnetResourceID(pl.SubnetID)
	}
	// Cluster Service refuses these two as empty strings; ARO-HCP leaves them out
	// when they are unset, though the API model calls the NSG required.
	if pl.NetworkSecurityGroupID != "" {
		b.armID(pathNSG, pl.NetworkSecurityGroupID, armTypeNetworkSecurityGroup, subscription)
		az.NetworkSecurityGroupResourceID(pl.NetworkSecurityGroupID)
	}
	if pl.VnetIntegrationSubnetID != "" {
		b.armID(pathVnetIntegration, pl.VnetIntegrationSubnetID, armTypeSubnet, "")
		az.VnetIntegrationSubnetResourceID(pl.VnetIntegrationSubnetID)
	}
	outbound, _ := enum(b, pathOutboundType, pl.OutboundType, DefaultOutboundType, outboundTypes)
	az.NodesOutboundConnectivity(arohcp.NewAzureNodesOutboundConnectivity().OutboundType(outbound))
	az.OperatorsAuthentication(arohcp.NewAzureOperatorsAuthentication().ManagedIdentities(b.identities(pl, sp)))
	if etcd := b.etcd(cp.Etcd); etcd != nil {
		az.EtcdEncryption(etcd)
	}
	return az
}

// Identity is how Cluster Service knows the cluster, as ARO-HCP's create sends it and
// searches for it: subscription and resource group from its resource ID and the resource
// name from properties.name (the resource ID's when that is missing), all lowercased; the
// tenant and the managed resource group as stored. Build sends exactly this in azure.*,
// and ClusterServiceCreate's adoption search matches on it, so the two cannot drift.
func Identity(c *api.Cluster, tenant string) clusterservice.AzureIdentity {
	id := clusterservice.AzureIdentity{TenantID: tenant, ResourceName: strings.ToLower(c.Properties.Name)}
	if rid, err := c.ParsedResourceID(); err == nil {
		id.SubscriptionID = strings.ToLower(rid.SubscriptionID)
		id.ResourceGroupName = strings.ToLower(rid.ResourceGroup)
		if id.ResourceName == "" {
			id.ResourceName = strings.ToLower(rid.Name())
		}
	}
	if cp := c.Properties.CustomerProperties; cp != nil && cp.Platform != nil {
		id.ManagedResourceGroupName = cp.Platform.ManagedResourceGroup
	}
	return id
}

// armID checks that value is an ARM resource ID of type typ (compared
// case-insensitively, as ARM does), in subscription when that is given.
func (b *builder) armID(path, value, typ, subscription string) {
	rid, err := api.ParseResourceID(value)
	if err != nil {
		b.fail(path, "%v", err)
		return
	}
	if !strings.EqualFold(rid.ResourceType(), typ) || rid.ResourceGroup == "" || rid.SubscriptionID == "" {
		b.fail(path, "%q is not the ARM ID of a %s", value, typ)
		return
	}
	if subscription != "" && !strings.EqualFold(rid.SubscriptionID, subscription) {
		b.fail(path, "%q is in subscription %s, not the cluster's %s", value, rid.SubscriptionID, subscription)
	}
}

func (b *builder) identities(pl *api.ClusterPlatform, sp api.ClusterServiceProviderProperties) *arohcp.AzureOperatorsAuthenticationManagedIdentitiesBuilder {
	var uai api.UserAssignedIdentities
	if pl.OperatorsAuthentication != nil && pl.OperatorsAuthentication.UserAssignedIdentities != nil {
		uai = *pl.OperatorsAuthentication.UserAssignedIdentities
	}
	mi := arohcp.NewAzureOperatorsAuthenticationManagedIdentities()
	if b.required(pathIdentityURL, sp.ManagedIdentitiesDataPlaneIdentityURL) {
		if u, err := url.Parse(sp.ManagedIdentitiesDataPlaneIdentityURL); err != nil || u.Scheme != "https" || u.Host == "" {
			b.fail(pathIdentityURL, "%q is not an https URL", sp.ManagedIdentitiesDataPlaneIdentityURL)
		}
		mi.ManagedIdentitiesDataPlaneIdentityUrl(sp.ManagedIdentitiesDataPlaneIdentityURL)
	}
	// Both maps are always sent, {} when empty, as ARO-HCP does.
	controlPlane := map[string]*arohcp.AzureControlPlaneManagedIdentityBuilder{}
	for _, op := range sortedKeys(uai.ControlPlaneOperators) {
		id := uai.ControlPlaneOperators[op]
		b.armID(pathControlPlaneOps+"."+op, id, armTypeUserAssignedIdentity, "")
		controlPlane[op] = arohcp.NewAzureControlPlaneManagedIdentity().ResourceID(id)
	}
	dataPlane := map[string]*arohcp.AzureDataPlaneManagedIdentityBuilder{}
	for _, op := range sortedKeys(uai.DataPlaneOperators) {
		id := uai.DataPlaneOperators[op]
		b.armID(pathDataPlaneOps+"."+op, id, armTypeUserAssignedIdentity, "")
		dataPlane[op] = arohcp.NewAzureDataPlaneManagedIdentity().ResourceID(id)
	}
	mi.ControlPlaneOperatorsManagedIdentities(controlPlane).DataPlaneOperatorsManagedIdentities(dataPlane)
	// Only when set: ARO-HCP omits it otherwise, though the API model calls it required.
	if uai.ServiceManagedIdentity != "" {
		b.armID(pathServiceIdentity, uai.ServiceManagedIdentity, armTypeUserAssignedIdentity, "")
		mi.ServiceManagedIdentity(arohcp.NewAzureServiceManagedIdentity().ResourceID(uai.ServiceManagedIdentity))
	}
	return mi
}

func (b *builder) etcd(e *api.ClusterEtcd) *arohcp.AzureEtcdEncryptionBuilder {
	var de api.EtcdDataEncryption
	if e != nil && e.DataEncryption != nil {
		de = *e.DataEncryption
	}
	// No default: the frontend always writes the mode, and guessing one would pick the
	// cluster's encryption for it.
	if !b.required(pathKeyManagementMode, de.KeyManagementMode) {
		return nil
	}
	mode, ok := keyManagementModes[de.KeyManagementMode]
	if !ok {
		unknown(b, pathKeyManagementMode, de.KeyManagementMode, keyManagementModes)
		return nil
	}
	data := arohcp.NewAzureEtcdDataEncryption().KeyManagementMode(mode)
	customer := de.KeyManagementMode == keyManagementCustomer
	cm := de.CustomerManaged
	if cm == nil {
		if customer {
			b.fail(pathCustomerManaged, "required when keyManagementMode is %s, and not set", keyManagementCustomer)
		}
		return arohcp.NewAzureEtcdEncryption().DataEncryption(data)
	}
	cmb := arohcp.NewAzureEtcdDataEncryptionCustomerManaged()
	if b.required(pathEncryptionType, cm.EncryptionType) {
		if t, ok := encryptionTypes[cm.EncryptionType]; ok {
			cmb.EncryptionType(t)
		} else {
			unknown(b, pathEncryptionType, cm.EncryptionType, encryptionTypes)
		}
	}
	switch {
	case cm.KMS != nil:
		cmb.Kms(b.kms(cm.KMS, customer && cm.EncryptionType == encryptionTypeKMS))
	case cm.EncryptionType == encryptionTypeKMS:
		b.fail(pathKMS, "required when encryptionType is %s, and not set", encryptionTypeKMS)
	}
	return arohcp.NewAzureEtcdEncryption().DataEncryption(data.CustomerManaged(cmb))
}

// kms is the key Cluster Service encrypts etcd with. ARO-HCP sends the key's version
// only for a customer-managed KMS key, the one case in which it can change later.
func (b *builder) kms(k *api.EtcdKMS, withVersion bool) *arohcp.AzureKmsEncryptionBuilder {
	key := k.ActiveKey
	if key == nil {
		key = &api.KMSKey{}
	}
	kb := arohcp.NewAzureKmsKey()
	if b.required(pathKMSKeyName, key.Name) {
		kb.KeyName(key.Name)
	}
	if b.required(pathKMSVaultName, key.VaultName) {
		kb.KeyVaultName(key.VaultName)
	}
	if withVersion && b.required(pathKMSKeyVersion, key.Version) {
		kb.KeyVersion(key.Version)
	}
	// ARO-HCP's read path makes a KMS key without a visibility Public.
	visibility, _ := enum(b, pathKMSVisibility, k.Visibility, DefaultKMSVisibility, kmsVisibilities)
	return arohcp.NewAzureKmsEncryption().ActiveKey(kb).Visibility(visibility)
}

// enum maps value (def when empty) through values, recording a problem when it has no
// counterpart.
func enum[V any](b *builder, path, value, def string, values map[string]V) (V, bool) {
	if value == "" {
		value = def
	}
	v, ok := values[value]
	if !ok {
		unknown(b, path, value, values)
	}
	return v, ok
}

func unknown[V any](b *builder, path, value string, values map[string]V) {
	b.fail(path, "%q has no Cluster Service counterpart (known: %s)", value, strings.Join(sortedKeys(values), ", "))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
