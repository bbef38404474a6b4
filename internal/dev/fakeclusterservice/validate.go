package fakeclusterservice

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strings"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
)

// CS validates a cluster create and answers 400 at the first field it refuses. The fake
// does the same with createRules, in their order; README.md lists them, with where each
// comes from, and a test keeps that list and this one in step.
//
// The rules read the SDK-decoded cluster. Its Get* methods tell a field that is absent
// from one sent as "" (the generated reader marks every key it sees), which is what the
// rules on empty strings need.

type createRule struct {
	// path is the field's dotted wire path; <i> and <operator> stand for an ingress index
	// and an operator name.
	path string
	// check is given path, so that one check serves many fields.
	check func(path string, c *arohcp.Cluster) error
}

const (
	managedIdentities = "azure.operators_authentication.managed_identities"
	dataEncryption    = "azure.etcd_encryption.data_encryption"
	activeKey         = dataEncryption + ".customer_managed.kms.active_key"
)

var createRules = []createRule{
	{"name", required(func(c *arohcp.Cluster) (string, bool) { return c.GetName() })},
	{"region.id", required(func(c *arohcp.Cluster) (string, bool) { return c.Region().GetID() })},
	{"cloud_provider.id", fixed("azure", func(c *arohcp.Cluster) (string, bool) { return c.CloudProvider().GetID() })},
	{"product.id", fixed("aro", func(c *arohcp.Cluster) (string, bool) { return c.Product().GetID() })},
	{"hypershift.enabled", isTrue(func(c *arohcp.Cluster) (bool, bool) { return c.Hypershift().GetEnabled() })},
	{"ccs.enabled", isTrue(func(c *arohcp.Cluster) (bool, bool) { return c.CCS().GetEnabled() })},
	{"version.id", checkVersionID},
	{"domain_prefix", notEmpty(func(c *arohcp.Cluster) (string, bool) { return c.GetDomainPrefix() })},
	{"network.type", oneOf(true, []string{"OVNKubernetes", "Other"}, func(c *arohcp.Cluster) (string, bool) { return c.Network().GetType() })},
	{"network.pod_cidr", ipv4CIDR(func(c *arohcp.Cluster) (string, bool) { return c.Network().GetPodCIDR() })},
	{"network.service_cidr", ipv4CIDR(func(c *arohcp.Cluster) (string, bool) { return c.Network().GetServiceCIDR() })},
	{"network.machine_cidr", ipv4CIDR(func(c *arohcp.Cluster) (string, bool) { return c.Network().GetMachineCIDR() })},
	{"network.host_prefix", checkHostPrefix},
	{"api.listening", oneOf(true, []string{"external", "internal"}, func(c *arohcp.Cluster) (string, bool) {
		l, ok := c.API().GetListening()
		return string(l), ok
	})},
	{"api.cidr_block_access.allow.mode", oneOf(false, []string{"allow_all", "allow_list"}, func(c *arohcp.Cluster) (string, bool) {
		return c.API().CIDRBlockAccess().Allow().GetMode()
	})},
	{"api.cidr_block_access.allow.values", checkAllowListValues},
	{"ingresses.items[<i>].listening", checkIngresses},
	{"image_registry.state", oneOf(false, []string{"enabled", "disabled"}, func(c *arohcp.Cluster) (string, bool) { return c.ImageRegistry().GetState() })},
	{"azure.subscription_id", required(func(c *arohcp.Cluster) (string, bool) { return c.Azure().GetSubscriptionID() })},
	{"azure.resource_group_name", required(func(c *arohcp.Cluster) (string, bool) { return c.Azure().GetResourceGroupName() })},
	{"azure.resource_name", required(func(c *arohcp.Cluster) (string, bool) { return c.Azure().GetResourceName() })},
	{"azure.tenant_id", required(func(c *arohcp.Cluster) (string, bool) { return c.Azure().GetTenantID() })},
	{"azure.managed_resource_group_name", checkManagedResourceGroup},
	{"azure.subnet_resource_id", armIDOf(true, subnetType, true, func(c *arohcp.Cluster) (string, bool) { return c.Azure().GetSubnetResourceID() })},
	{"azure.network_security_group_resource_id", armIDOf(false, nsgType, true, func(c *arohcp.Cluster) (string, bool) {
		return c.Azure().GetNetworkSecurityGroupResourceID()
	})},
	{"azure.vnet_integration_subnet_resource_id", armIDOf(false, subnetType, false, func(c *arohcp.Cluster) (string, bool) {
		return c.Azure().GetVnetIntegrationSubnetResourceID()
	})},
	{"azure.nodes_outbound_connectivity.outbound_type", fixed("load_balancer", func(c *arohcp.Cluster) (string, bool) {
		return c.Azure().NodesOutboundConnectivity().GetOutboundType()
	})},
	{dataEncryption + ".key_management_mode", oneOf(true, []string{"platform_managed", "customer_managed"}, func(c *arohcp.Cluster) (string, bool) {
		return c.Azure().EtcdEncryption().DataEncryption().GetKeyManagementMode()
	})},
	{dataEncryption + ".customer_managed.encryption_type", whenCustomerManaged(fixed("kms", func(c *arohcp.Cluster) (string, bool) {
		return c.Azure().EtcdEncryption().DataEncryption().CustomerManaged().GetEncryptionType()
	}))},
	{activeKey + ".key_vault_name", whenCustomerManaged(required(func(c *arohcp.Cluster) (string, bool) { return kmsKeyOf(c).GetKeyVaultName() }))},
	{activeKey + ".key_name", whenCustomerManaged(required(func(c *arohcp.Cluster) (string, bool) { return kmsKeyOf(c).GetKeyName() }))},
	{activeKey + ".key_version", whenCustomerManaged(required(func(c *arohcp.Cluster) (string, bool) { return kmsKeyOf(c).GetKeyVersion() }))},
	{managedIdentities + ".managed_identities_data_plane_identity_url", checkIdentityURL},
	{managedIdentities + ".control_plane_operators_managed_identities.<operator>.resource_id", checkControlPlaneIdentities},
	{managedIdentities + ".data_plane_operators_managed_identities.<operator>.resource_id", checkDataPlaneIdentities},
	{managedIdentities + ".service_managed_identity.resource_id", checkServiceIdentity},
}

// validateCreate applies createRules in order and returns the first refusal, a 400.
func validateCreate(c *arohcp.Cluster) error {
	for _, r := range createRules {
		if err := r.check(r.path, c); err != nil {
			return err
		}
	}
	return nil
}

func invalid(path, format string, args ...any) error {
	return badRequest("attribute '%s' %s", path, fmt.Sprintf(format, args...))
}

type (
	check     = func(path string, c *arohcp.Cluster) error
	stringGet = func(c *arohcp.Cluster) (string, bool)
)

// required refuses an absent or empty string.
func required(get stringGet) check {
	return func(path string, c *arohcp.Cluster) error {
		if v, ok := get(c); !ok || v == "" {
			return invalid(path, "is required")
		}
		return nil
	}
}

// notEmpty refuses a string sent as "": CS treats an empty value as a value, not as
// absent, and rejects it.
func notEmpty(get stringGet) check {
	return func(path string, c *arohcp.Cluster) error {
		if v, ok := get(c); ok && v == "" {
			return invalid(path, "must not be empty; leave it out instead")
		}
		return nil
	}
}

// fixed requires one value.
func fixed(want string, get stringGet) check {
	return func(path string, c *arohcp.Cluster) error {
		v, ok := get(c)
		if !ok || v == "" {
			return invalid(path, "is required")
		}
		if v != want {
			return invalid(path, "must be '%s', got '%s'", want, v)
		}
		return nil
	}
}

func isTrue(get func(c *arohcp.Cluster) (bool, bool)) check {
	return func(path string, c *arohcp.Cluster) error {
		v, ok := get(c)
		if !ok {
			return invalid(path, "is required")
		}
		if !v {
			return invalid(path, "must be true")
		}
		return nil
	}
}

// oneOf requires a value from values; an absent value is refused only when isRequired.
// The comparison is exact: CS's enums are lowercase wire values, unlike the capitalised
// ones ARO-HCP stores.
func oneOf(isRequired bool, values []string, get stringGet) check {
	return func(path string, c *arohcp.Cluster) error {
		v, ok := get(c)
		if !ok {
			if isRequired {
				return invalid(path, "is required")
			}
			return nil
		}
		if v == "" && isRequired {
			return invalid(path, "is required")
		}
		for _, want := range values {
			if v == want {
				return nil
			}
		}
		return invalid(path, "must be one of '%s', got '%s'", strings.Join(values, "', '"), v)
	}
}

// versionIDPattern is CS's version id: openshift-v, a semantic version X.Y.Z without
// leading zeros, then optional hyphen-separated suffixes (a prerelease such as rc.1, then
// the channel group unless it is stable), each made of dot-separated alphanumerics.
var versionIDPattern = regexp.MustCompile(`^openshift-v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z]+(\.[0-9A-Za-z]+)*)*$`)

func checkVersionID(path string, c *arohcp.Cluster) error {
	v, ok := c.Version().GetID()
	if !ok || v == "" {
		return invalid(path, "is required")
	}
	if !versionIDPattern.MatchString(v) {
		return invalid(path, "must be 'openshift-v<X>.<Y>.<Z>' with optional '-<prerelease>' and '-<channel group>' suffixes, got '%s'", v)
	}
	return nil
}

// ipv4CIDR requires an IPv4 CIDR block, as the agreed rules do (the model's examples are
// all IPv4).
func ipv4CIDR(get stringGet) check {
	return func(path string, c *arohcp.Cluster) error {
		v, ok := get(c)
		if !ok || v == "" {
			return invalid(path, "is required")
		}
		ip, _, err := net.ParseCIDR(v)
		// ParseCIDR also reads IPv4-mapped IPv6 ("::ffff:a.b.c.d/n"), which To4 would
		// pass; the colon rules those out.
		if err != nil || ip.To4() == nil || strings.Contains(v, ":") {
			return invalid(path, "must be an IPv4 CIDR block, got '%s'", v)
		}
		return nil
	}
}

func checkHostPrefix(path string, c *arohcp.Cluster) error {
	v, ok := c.Network().GetHostPrefix()
	if !ok {
		return invalid(path, "is required")
	}
	if v < 1 || v > 32 {
		return invalid(path, "must be between 1 and 32, got %d", v)
	}
	return nil
}

func checkAllowListValues(path string, c *arohcp.Cluster) error {
	allow := c.API().CIDRBlockAccess().Allow()
	if allow.Mode() == "allow_list" && len(allow.Values()) == 0 {
		return invalid(path, "must hold at least one CIDR block when the mode is 'allow_list'")
	}
	return nil
}

func checkIngresses(path string, c *arohcp.Cluster) error {
	for i, ing := range c.Ingresses().Items() {
		listening := oneOf(false, []string{"external", "internal"}, func(*arohcp.Cluster) (string, bool) {
			l, ok := ing.GetListening()
			return string(l), ok
		})
		if err := listening(strings.Replace(path, "<i>", fmt.Sprint(i), 1), c); err != nil {
			return err
		}
	}
	return nil
}

func checkManagedResourceGroup(path string, c *arohcp.Cluster) error {
	az := c.Azure()
	v, ok := az.GetManagedResourceGroupName()
	if !ok || v == "" {
		return invalid(path, "is required")
	}
	if strings.EqualFold(v, az.ResourceGroupName()) {
		return invalid(path, "must differ from 'azure.resource_group_name', both are '%s'", v)
	}
	return nil
}

// armIDOf requires an ARM ID of resourceType; sameSubscription also requires it to be in
// azure.subscription_id. When !isRequired the field may be absent, but not "".
func armIDOf(isRequired bool, resourceType string, sameSubscription bool, get stringGet) check {
	return func(path string, c *arohcp.Cluster) error {
		v, ok := get(c)
		switch {
		case !ok && !isRequired:
			return nil
		case (!ok || v == "") && isRequired:
			return invalid(path, "is required")
		case v == "":
			return invalid(path, "must not be empty; leave it out instead")
		}
		if err := isARMIDOf(path, v, resourceType); err != nil {
			return err
		}
		id, _ := parseARMID(v)
		if sub := c.Azure().SubscriptionID(); sameSubscription && !strings.EqualFold(id.subscription, sub) {
			return invalid(path, "must be in subscription '%s' of 'azure.subscription_id', got '%s'", sub, id.subscription)
		}
		return nil
	}
}

func isARMIDOf(path, v, resourceType string) error {
	id, err := parseARMID(v)
	if err != nil {
		return invalid(path, "must be an Azure resource ID of type '%s': '%s' %v", resourceType, v, err)
	}
	if !id.isType(resourceType) {
		return invalid(path, "must be an Azure resource ID of type '%s', got type '%s'", resourceType, id.resourceType)
	}
	return nil
}

// whenCustomerManaged applies inner only to customer-managed etcd encryption, which is
// the mode that needs a key.
func whenCustomerManaged(inner check) check {
	return func(path string, c *arohcp.Cluster) error {
		if c.Azure().EtcdEncryption().DataEncryption().KeyManagementMode() != "customer_managed" {
			return nil
		}
		return inner(path, c)
	}
}

func kmsKeyOf(c *arohcp.Cluster) *arohcp.AzureKmsKey {
	return c.Azure().EtcdEncryption().DataEncryption().CustomerManaged().Kms().ActiveKey()
}

func managedIdentitiesOf(c *arohcp.Cluster) *arohcp.AzureOperatorsAuthenticationManagedIdentities {
	return c.Azure().OperatorsAuthentication().ManagedIdentities()
}

// checkIdentityURL requires an https URL with a host: CS calls the managed identities
// data plane at it.
func checkIdentityURL(path string, c *arohcp.Cluster) error {
	v, ok := managedIdentitiesOf(c).GetManagedIdentitiesDataPlaneIdentityUrl()
	if !ok || v == "" {
		return invalid(path, "is required")
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return invalid(path, "must be an https URL, got '%s'", v)
	}
	return nil
}

func checkControlPlaneIdentities(path string, c *arohcp.Cluster) error {
	ids := managedIdentitiesOf(c).ControlPlaneOperatorsManagedIdentities()
	return checkOperatorIdentities(path, ids, func(i *arohcp.AzureControlPlaneManagedIdentity) string { return i.ResourceID() })
}

func checkDataPlaneIdentities(path string, c *arohcp.Cluster) error {
	ids := managedIdentitiesOf(c).DataPlaneOperatorsManagedIdentities()
	return checkOperatorIdentities(path, ids, func(i *arohcp.AzureDataPlaneManagedIdentity) string { return i.ResourceID() })
}

// checkOperatorIdentities requires every operator's identity to be a user-assigned
// identity, visiting operators in name order so the one reported is deterministic.
func checkOperatorIdentities[T any](path string, ids map[string]T, resourceID func(T) string) error {
	names := make([]string, 0, len(ids))
	for name := range ids {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := strings.Replace(path, "<operator>", name, 1)
		if err := isARMIDOf(p, resourceID(ids[name]), userIdentityType); err != nil {
			return err
		}
	}
	return nil
}

// checkServiceIdentity: the model calls the service managed identity required, but
// ARO-HCP leaves it out when the cluster document has none, so only a present one is
// checked.
func checkServiceIdentity(path string, c *arohcp.Cluster) error {
	smi, ok := managedIdentitiesOf(c).GetServiceManagedIdentity()
	if !ok {
		return nil
	}
	return isARMIDOf(path, smi.ResourceID(), userIdentityType)
}
