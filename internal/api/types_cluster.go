package api

import "time"

// ---- HCPOpenShiftCluster (Resources container, partition key = subscription) ----

type ClusterProperties struct {
	CosmosMetadata            *CosmosMetadata                   `json:"cosmosMetadata,omitempty"`
	SystemData                *SystemData                       `json:"systemData,omitempty"`
	CustomerProperties        *ClusterCustomerProperties        `json:"customerProperties,omitempty"`
	ServiceProviderProperties *ClusterServiceProviderProperties `json:"serviceProviderProperties,omitempty"`
	// Name and Location are the ARM resource's, as the frontend wrote them.
	Name     string `json:"name,omitempty"`
	Location string `json:"location,omitempty" hcpsched:"intern"`
	Object
}

func (p *ClusterProperties) UnmarshalJSON(b []byte) error    { return decodeObject(b, p) }
func (p ClusterProperties) MarshalJSON() ([]byte, error)     { return encodeObject(&p) }
func (p *ClusterProperties) metadataField() **CosmosMetadata { return &p.CosmosMetadata }

type SystemData struct {
	CreatedAt time.Time `json:"createdAt,omitzero"`
	Object
}

func (p *SystemData) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p SystemData) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

// ClusterCustomerProperties is what the customer asked for, written by the frontend.
// hcpsched never writes it; it reads the fields the Cluster Service create is built
// from (see docs/cluster-service-create.md). Each nested level embeds Object so the
// fields it does not declare survive any write of the document. Levels tagged intern
// hold what repeats from cluster to cluster (versions, defaults, visibilities): lean
// caches share one decoded level among the clusters that stored the same bytes.
type ClusterCustomerProperties struct {
	Version                 *ClusterVersion       `json:"version,omitempty" hcpsched:"intern"`
	DNS                     *ClusterDNS           `json:"dns,omitempty"`
	Network                 *ClusterNetwork       `json:"network,omitempty" hcpsched:"intern"`
	API                     *ClusterAPI           `json:"api,omitempty" hcpsched:"intern"`
	Ingress                 *ClusterIngress       `json:"ingress,omitempty" hcpsched:"intern"`
	Platform                *ClusterPlatform      `json:"platform,omitempty"`
	Autoscaling             *ClusterAutoscaling   `json:"autoscaling,omitempty" hcpsched:"intern"`
	NodeDrainTimeoutMinutes *int32                `json:"nodeDrainTimeoutMinutes,omitempty"`
	Etcd                    *ClusterEtcd          `json:"etcd,omitempty"`
	ClusterImageRegistry    *ClusterImageRegistry `json:"clusterImageRegistry,omitempty" hcpsched:"intern"`
	CryptoRestrictions      string                `json:"cryptoRestrictions,omitempty" hcpsched:"intern"`
	ImageDigestMirrors      []ImageDigestMirror   `json:"imageDigestMirrors,omitempty"`
	Object
}

func (p *ClusterCustomerProperties) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ClusterCustomerProperties) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ClusterPlatform struct {
	ManagedResourceGroup    string                   `json:"managedResourceGroup,omitempty"`
	SubnetID                string                   `json:"subnetId,omitempty"`
	VnetIntegrationSubnetID string                   `json:"vnetIntegrationSubnetId,omitempty"`
	OutboundType            string                   `json:"outboundType,omitempty" hcpsched:"intern"`
	NetworkSecurityGroupID  string                   `json:"networkSecurityGroupId,omitempty"`
	OperatorsAuthentication *OperatorsAuthentication `json:"operatorsAuthentication,omitempty"`
	Object
}

func (p *ClusterPlatform) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ClusterPlatform) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type OperatorsAuthentication struct {
	UserAssignedIdentities *UserAssignedIdentities `json:"userAssignedIdentities,omitempty"`
	Object
}

func (p *OperatorsAuthentication) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p OperatorsAuthentication) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

// UserAssignedIdentities maps operator names to the ARM IDs of their managed identities.
type UserAssignedIdentities struct {
	ControlPlaneOperators  map[string]string `json:"controlPlaneOperators,omitempty"`
	DataPlaneOperators     map[string]string `json:"dataPlaneOperators,omitempty"`
	ServiceManagedIdentity string            `json:"serviceManagedIdentity,omitempty"`
	Object
}

func (p *UserAssignedIdentities) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p UserAssignedIdentities) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

// ClusterVersion is the customer's version: id holds only X.Y (the full version is the
// SPC's spec.control_plane_version.desired_version), channelGroup stable by default.
type ClusterVersion struct {
	ID           string `json:"id,omitempty" hcpsched:"intern"`
	ChannelGroup string `json:"channelGroup,omitempty" hcpsched:"intern"`
	Object
}

func (p *ClusterVersion) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ClusterVersion) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ClusterDNS struct {
	BaseDomainPrefix string `json:"baseDomainPrefix,omitempty"`
	Object
}

func (p *ClusterDNS) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ClusterDNS) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ClusterNetwork struct {
	NetworkType string `json:"networkType,omitempty" hcpsched:"intern"`
	PodCIDR     string `json:"podCidr,omitempty" hcpsched:"intern"`
	ServiceCIDR string `json:"serviceCidr,omitempty" hcpsched:"intern"`
	MachineCIDR string `json:"machineCidr,omitempty" hcpsched:"intern"`
	HostPrefix  *int32 `json:"hostPrefix,omitempty"`
	Object
}

func (p *ClusterNetwork) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ClusterNetwork) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

// ClusterAPI is the API server's exposure. AuthorizedCIDRs distinguishes absent (nil:
// open to all) from an empty list, which ARO-HCP refuses.
type ClusterAPI struct {
	Visibility      string   `json:"visibility,omitempty" hcpsched:"intern"`
	AuthorizedCIDRs []string `json:"authorizedCidrs,omitempty"`
	Object
}

func (p *ClusterAPI) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ClusterAPI) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ClusterIngress struct {
	Type string `json:"type,omitempty" hcpsched:"intern"`
	Object
}

func (p *ClusterIngress) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ClusterIngress) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

// ClusterAutoscaling holds pointers so that an unset value takes ARO-HCP's default
// rather than zero.
type ClusterAutoscaling struct {
	MaxNodesTotal               *int32 `json:"maxNodesTotal,omitempty"`
	MaxPodGracePeriodSeconds    *int32 `json:"maxPodGracePeriodSeconds,omitempty"`
	MaxNodeProvisionTimeSeconds *int32 `json:"maxNodeProvisionTimeSeconds,omitempty"`
	PodPriorityThreshold        *int32 `json:"podPriorityThreshold,omitempty"`
	Object
}

func (p *ClusterAutoscaling) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ClusterAutoscaling) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ClusterEtcd struct {
	DataEncryption *EtcdDataEncryption `json:"dataEncryption,omitempty"`
	Object
}

func (p *ClusterEtcd) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ClusterEtcd) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type EtcdDataEncryption struct {
	KeyManagementMode string               `json:"keyManagementMode,omitempty" hcpsched:"intern"`
	CustomerManaged   *EtcdCustomerManaged `json:"customerManaged,omitempty"`
	Object
}

func (p *EtcdDataEncryption) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p EtcdDataEncryption) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type EtcdCustomerManaged struct {
	EncryptionType string   `json:"encryptionType,omitempty" hcpsched:"intern"`
	KMS            *EtcdKMS `json:"kms,omitempty"`
	Object
}

func (p *EtcdCustomerManaged) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p EtcdCustomerManaged) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type EtcdKMS struct {
	Visibility string  `json:"visibility,omitempty" hcpsched:"intern"`
	ActiveKey  *KMSKey `json:"activeKey,omitempty"`
	Object
}

func (p *EtcdKMS) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p EtcdKMS) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type KMSKey struct {
	Name      string `json:"name,omitempty"`
	VaultName string `json:"vaultName,omitempty"`
	Version   string `json:"version,omitempty"`
	Object
}

func (p *KMSKey) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p KMSKey) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ClusterImageRegistry struct {
	State string `json:"state,omitempty" hcpsched:"intern"`
	Object
}

func (p *ClusterImageRegistry) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ClusterImageRegistry) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

// ImageDigestMirror is one mirror set; mirrorSourcePolicy is stored by the frontend but
// not sent to Cluster Service, so it is left undeclared (and passes through).
type ImageDigestMirror struct {
	Source  string   `json:"source,omitempty"`
	Mirrors []string `json:"mirrors,omitempty"`
	Object
}

func (p *ImageDigestMirror) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ImageDigestMirror) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

// Provisioning states that end a cluster's life for placement purposes.
const (
	ProvisioningStateDeleting  = "Deleting"
	ProvisioningStateFailed    = "Failed"
	ProvisioningStateCanceled  = "Canceled"
	ProvisioningStateSucceeded = "Succeeded"
)

// SingleReplica is the experimentalFeatures.singleReplica value of a single-replica
// control plane.
const SingleReplica = "SingleReplica"

type ClusterServiceProviderProperties struct {
	ProvisioningState       string                `json:"provisioningState,omitempty" hcpsched:"intern"`
	PendingClusterServiceID string                `json:"pendingClusterServiceID,omitempty"`
	ClusterServiceID        string                `json:"clusterServiceID,omitempty"`
	ExperimentalFeatures    *ExperimentalFeatures `json:"experimentalFeatures,omitempty" hcpsched:"intern"`
	DeletionTimestamp       *time.Time            `json:"deletionTimestamp,omitempty"`
	// ManagedIdentitiesDataPlaneIdentityURL is the managed-identity data plane URL the
	// frontend stored from the create PUT's X-Ms-Identity-Url header; per cluster.
	ManagedIdentitiesDataPlaneIdentityURL string `json:"managedIdentitiesDataPlaneIdentityURL,omitempty"`
	Object
}

func (p *ClusterServiceProviderProperties) UnmarshalJSON(b []byte) error {
	return decodeObject(b, p)
}
func (p ClusterServiceProviderProperties) MarshalJSON() ([]byte, error) { return encodeObject(&p) }

type ExperimentalFeatures struct {
	SingleReplica             string `json:"singleReplica,omitempty" hcpsched:"intern"`
	SizeOverride              string `json:"sizeOverride,omitempty" hcpsched:"intern"`
	ControlPlaneOperatorImage string `json:"controlPlaneOperatorImage,omitempty"`
	Object
}

func (p *ExperimentalFeatures) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ExperimentalFeatures) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type Cluster = Document[ClusterProperties]

// ClusterDeleting reports whether a cluster is on its way out. The frontend marks a
// DELETE with serviceProviderProperties.deletionTimestamp and provisioningState
// Deleting; a soft-deleted document (deletionTimestamp on the envelope) is one too.
// Nothing should be created or reserved for such a cluster.
func ClusterDeleting(c *Cluster) bool {
	p := c.Properties.ServiceProvider()
	return c.IsDeleted() || p.DeletionTimestamp != nil || p.ProvisioningState == ProvisioningStateDeleting
}

// ClusterEnded reports whether a cluster's provisioning ended without a control plane
// to place or keep capacity for: Failed or Canceled.
func ClusterEnded(c *Cluster) bool {
	switch c.Properties.ServiceProvider().ProvisioningState {
	case ProvisioningStateFailed, ProvisioningStateCanceled:
		return true
	}
	return false
}

// ---- ServiceProviderCluster (Resources container, <cluster>/serviceProviderClusters/default) ----

type ServiceProviderClusterProperties struct {
	CosmosMetadata *CosmosMetadata               `json:"cosmosMetadata,omitempty"`
	Spec           *ServiceProviderClusterSpec   `json:"spec,omitempty"`
	Status         *ServiceProviderClusterStatus `json:"status,omitempty"`
	Object
}

func (p *ServiceProviderClusterProperties) UnmarshalJSON(b []byte) error {
	return decodeObject(b, p)
}
func (p ServiceProviderClusterProperties) MarshalJSON() ([]byte, error) { return encodeObject(&p) }
func (p *ServiceProviderClusterProperties) metadataField() **CosmosMetadata {
	return &p.CosmosMetadata
}

type ServiceProviderClusterSpec struct {
	// ManagementClusterResourceID is placement's intent; written once, by placement only.
	ManagementClusterResourceID    string    `json:"managementClusterResourceID,omitempty" hcpsched:"intern"`
	ManagementClusterPlacementTime time.Time `json:"managementClusterPlacementTime,omitzero"`
	// ControlPlaneVersion is written by ARO-HCP's ControlPlaneDesiredVersion controller;
	// hcpsched only reads it (the full version Cluster Service creates).
	ControlPlaneVersion *ControlPlaneVersionSpec `json:"control_plane_version,omitempty" hcpsched:"intern"`
	// DesiredHostedClusterControlPlaneSize overrides the control plane's size class.
	DesiredHostedClusterControlPlaneSize string `json:"desiredHostedClusterControlPlaneSize,omitempty" hcpsched:"intern"`
	Object
}

func (p *ServiceProviderClusterSpec) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ServiceProviderClusterSpec) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ControlPlaneVersionSpec struct {
	DesiredVersion string `json:"desired_version,omitempty" hcpsched:"intern"`
	Object
}

func (p *ControlPlaneVersionSpec) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ControlPlaneVersionSpec) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

// DesiredControlPlaneVersion is spec.control_plane_version.desired_version, the full
// X.Y.Z version to create; empty until ARO-HCP's version controller has chosen it.
func (p *ServiceProviderClusterProperties) DesiredControlPlaneVersion() string {
	if p.Spec != nil && p.Spec.ControlPlaneVersion != nil {
		return p.Spec.ControlPlaneVersion.DesiredVersion
	}
	return ""
}

type ServiceProviderClusterStatus struct {
	// ManagementClusterResourceID is where Cluster Service actually put the cluster,
	// written only by placement sync. It is never copied into spec.
	ManagementClusterResourceID string           `json:"managementClusterResourceID,omitempty" hcpsched:"intern"`
	Placement                   *PlacementStatus `json:"placement,omitempty"`
	Object
}

func (p *ServiceProviderClusterStatus) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ServiceProviderClusterStatus) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type PlacementStatus struct {
	Conditions []Condition `json:"conditions,omitempty"`
	Object
}

func (p *PlacementStatus) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p PlacementStatus) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ServiceProviderCluster = Document[ServiceProviderClusterProperties]

// ServiceProvider returns the cluster's serviceProviderProperties, or an empty value when
// the document has none, so readers need no nil checks. Writers change the pointer field.
func (p *ClusterProperties) ServiceProvider() ClusterServiceProviderProperties {
	if p.ServiceProviderProperties != nil {
		return *p.ServiceProviderProperties
	}
	return ClusterServiceProviderProperties{}
}

// IntendedManagementCluster is spec.managementClusterResourceID, placement's choice;
// empty while the cluster is unplaced.
func (p *ServiceProviderClusterProperties) IntendedManagementCluster() string {
	if p.Spec != nil {
		return p.Spec.ManagementClusterResourceID
	}
	return ""
}

// ObservedManagementCluster is status.managementClusterResourceID, where Cluster Service
// was seen to put the cluster; empty until placement sync has observed it.
func (p *ServiceProviderClusterProperties) ObservedManagementCluster() string {
	if p.Status != nil {
		return p.Status.ManagementClusterResourceID
	}
	return ""
}
