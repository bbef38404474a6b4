package api

import "time"

// ---- HCPOpenShiftCluster (Resources container, partition key = subscription) ----

type ClusterProperties struct {
	CosmosMetadata            *CosmosMetadata                   `json:"cosmosMetadata,omitempty"`
	SystemData                *SystemData                       `json:"systemData,omitempty"`
	CustomerProperties        *ClusterCustomerProperties        `json:"customerProperties,omitempty"`
	ServiceProviderProperties *ClusterServiceProviderProperties `json:"serviceProviderProperties,omitempty"`
	Identity                  *ClusterIdentity                  `json:"identity,omitempty"`
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

type ClusterCustomerProperties struct {
	Platform *ClusterPlatform `json:"platform,omitempty"`
	Object
}

func (p *ClusterCustomerProperties) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ClusterCustomerProperties) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ClusterPlatform struct {
	ManagedResourceGroup string `json:"managedResourceGroup,omitempty"`
	Object
}

func (p *ClusterPlatform) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ClusterPlatform) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

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
	ProvisioningState       string                `json:"provisioningState,omitempty"`
	PendingClusterServiceID string                `json:"pendingClusterServiceID,omitempty"`
	ClusterServiceID        string                `json:"clusterServiceID,omitempty"`
	ExperimentalFeatures    *ExperimentalFeatures `json:"experimentalFeatures,omitempty"`
	DeletionTimestamp       *time.Time            `json:"deletionTimestamp,omitempty"`
	Object
}

func (p *ClusterServiceProviderProperties) UnmarshalJSON(b []byte) error {
	return decodeObject(b, p)
}
func (p ClusterServiceProviderProperties) MarshalJSON() ([]byte, error) { return encodeObject(&p) }

type ExperimentalFeatures struct {
	SingleReplica string `json:"singleReplica,omitempty"`
	Object
}

func (p *ExperimentalFeatures) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ExperimentalFeatures) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ClusterIdentity struct {
	TenantID string `json:"tenantId,omitempty"`
	Object
}

func (p *ClusterIdentity) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ClusterIdentity) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type Cluster = Document[ClusterProperties]

// ClusterDeleting reports whether a cluster is on its way out. The frontend marks a
// DELETE with serviceProviderProperties.deletionTimestamp and provisioningState
// Deleting; a soft-deleted document (deletionTimestamp on the envelope) is one too.
// Nothing should be created or reserved for such a cluster.
func ClusterDeleting(c *Cluster) bool {
	p := c.Properties.ServiceProvider()
	return c.IsDeleted() || p.DeletionTimestamp != nil || p.ProvisioningState == ProvisioningStateDeleting
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
	ManagementClusterResourceID    string    `json:"managementClusterResourceID,omitempty"`
	ManagementClusterPlacementTime time.Time `json:"managementClusterPlacementTime,omitzero"`
	Object
}

func (p *ServiceProviderClusterSpec) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ServiceProviderClusterSpec) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ServiceProviderClusterStatus struct {
	// ManagementClusterResourceID is where Cluster Service actually put the cluster,
	// written only by placement sync. It is never copied into spec.
	ManagementClusterResourceID string           `json:"managementClusterResourceID,omitempty"`
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
