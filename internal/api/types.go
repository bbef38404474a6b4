package api

import (
	"encoding/json"
	"time"
)

// Resource types as ARO-HCP writes them into the envelope. They are matched
// case-insensitively: some stored documents carry a fully lowercased resourceType.
const (
	ClusterResourceType                     = "Microsoft.RedHatOpenShift/hcpOpenShiftClusters"
	ServiceProviderClusterResourceType      = "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/serviceProviderClusters"
	StampResourceType                       = "microsoft.redhatopenshift/stamps"
	ManagementClusterResourceType           = "microsoft.redhatopenshift/stamps/managementclusters"
	ManagementClusterSchedulingResourceType = "microsoft.redhatopenshift/stamps/managementclusters/scheduling"
	ReadDesireResourceType                  = "microsoft.redhatopenshift/stamps/managementclusters/readdesires"
)

// Condition is a metav1.Condition as ARO-HCP stores it: message is always written, even
// when empty; observedGeneration only when set.
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	ObservedGeneration int64     `json:"observedGeneration,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
	Reason             string    `json:"reason"`
	Message            string    `json:"message"`
	Object
}

func (c *Condition) UnmarshalJSON(b []byte) error { return decodeObject(b, c) }
func (c Condition) MarshalJSON() ([]byte, error)  { return encodeObject(&c) }

// ResourceList maps a resource name (cpu, memory, aro.openshift.io/swift-nic) to a
// Kubernetes quantity string, kept as text so foreign values round-trip unchanged.
type ResourceList map[string]string

// RawProperties is for documents whose properties hcpsched never interprets: only
// cosmosMetadata is typed, everything else passes through.
type RawProperties struct {
	CosmosMetadata *CosmosMetadata `json:"cosmosMetadata,omitempty"`
	Object
}

func (p *RawProperties) UnmarshalJSON(b []byte) error    { return decodeObject(b, p) }
func (p RawProperties) MarshalJSON() ([]byte, error)     { return encodeObject(&p) }
func (p *RawProperties) metadataField() **CosmosMetadata { return &p.CosmosMetadata }

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

// ---- Stamp (Fleet container, partition key = stamp name) ----

type StampProperties struct {
	CosmosMetadata *CosmosMetadata `json:"cosmosMetadata,omitempty"`
	// LegacyResourceID is the transitional properties.resourceId duplicate ARO-HCP still
	// queries on.
	LegacyResourceID string       `json:"resourceId,omitempty"`
	Status           *StampStatus `json:"status,omitempty"`
	Object
}

func (p *StampProperties) UnmarshalJSON(b []byte) error    { return decodeObject(b, p) }
func (p StampProperties) MarshalJSON() ([]byte, error)     { return encodeObject(&p) }
func (p *StampProperties) metadataField() **CosmosMetadata { return &p.CosmosMetadata }

type StampStatus struct {
	Conditions []Condition `json:"conditions,omitempty"`
	Object
}

func (p *StampStatus) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p StampStatus) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type Stamp = Document[StampProperties]

// ---- ManagementCluster (Fleet container, <stamp>/managementclusters/default) ----

// Scheduling policies of a management cluster.
const (
	Schedulable   = "Schedulable"
	Unschedulable = "Unschedulable"
)

type ManagementClusterProperties struct {
	CosmosMetadata   *CosmosMetadata          `json:"cosmosMetadata,omitempty"`
	LegacyResourceID string                   `json:"resourceId,omitempty"`
	Spec             *ManagementClusterSpec   `json:"spec,omitempty"`
	Status           *ManagementClusterStatus `json:"status,omitempty"`
	Object
}

func (p *ManagementClusterProperties) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ManagementClusterProperties) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }
func (p *ManagementClusterProperties) metadataField() **CosmosMetadata {
	return &p.CosmosMetadata
}

type ManagementClusterSpec struct {
	SchedulingPolicy string `json:"schedulingPolicy,omitempty"`
	Object
}

func (p *ManagementClusterSpec) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ManagementClusterSpec) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ManagementClusterStatus struct {
	Conditions                     []Condition `json:"conditions,omitempty"`
	AKSResourceID                  string      `json:"aksResourceID,omitempty"`
	MaestroConsumerName            string      `json:"maestroConsumerName,omitempty"`
	ClusterServiceProvisionShardID string      `json:"clusterServiceProvisionShardID,omitempty"`
	KubeApplierCosmosContainerName string      `json:"kubeApplierCosmosContainerName,omitempty"`
	Object
}

func (p *ManagementClusterStatus) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ManagementClusterStatus) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ManagementCluster = Document[ManagementClusterProperties]

// ---- ManagementClusterScheduling (Fleet container, <mc>/scheduling/default) ----

type ManagementClusterSchedulingProperties struct {
	CosmosMetadata *CosmosMetadata   `json:"cosmosMetadata,omitempty"`
	Status         *SchedulingStatus `json:"status,omitempty"`
	Object
}

func (p *ManagementClusterSchedulingProperties) UnmarshalJSON(b []byte) error {
	return decodeObject(b, p)
}
func (p ManagementClusterSchedulingProperties) MarshalJSON() ([]byte, error) {
	return encodeObject(&p)
}
func (p *ManagementClusterSchedulingProperties) metadataField() **CosmosMetadata {
	return &p.CosmosMetadata
}

// SchedulingStatus keeps ARO-HCP's field order: conditions, observedResources,
// readyResourceIDs, notReadyResourceIDs, scaleCeiling, pendingAssignedClusters.
type SchedulingStatus struct {
	Conditions          []Condition        `json:"conditions,omitempty"`
	ObservedResources   *ObservedResources `json:"observedResources,omitempty"`
	ReadyResourceIDs    []string           `json:"readyResourceIDs,omitempty"`
	NotReadyResourceIDs []string           `json:"notReadyResourceIDs,omitempty"`
	ScaleCeiling        *ScaleCeiling      `json:"scaleCeiling,omitempty"`
	// PendingAssignedClusters are reservations: clusters placed here that the MC has not
	// reported yet. Placement appends; the fleet and the cleanup controller remove.
	PendingAssignedClusters []string `json:"pendingAssignedClusters,omitempty"`
	Object
}

func (p *SchedulingStatus) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p SchedulingStatus) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ObservedResources struct {
	LastReportedAt time.Time    `json:"lastReportedAt,omitzero"`
	Capacity       ResourceList `json:"capacity,omitempty"`
	Usage          ResourceList `json:"usage,omitempty"`
	Requests       ResourceList `json:"requests,omitempty"`
	Object
}

func (p *ObservedResources) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ObservedResources) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ScaleCeiling struct {
	LastReportedAt time.Time    `json:"lastReportedAt,omitzero"`
	Capacity       ResourceList `json:"capacity,omitempty"`
	Object
}

func (p *ScaleCeiling) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ScaleCeiling) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ManagementClusterScheduling = Document[ManagementClusterSchedulingProperties]

// ---- ReadDesire (kube-applier container of an MC, partition key = MC resource ID) ----

type ReadDesireProperties struct {
	CosmosMetadata *CosmosMetadata   `json:"cosmosMetadata,omitempty"`
	Spec           *ReadDesireSpec   `json:"spec,omitempty"`
	Status         *ReadDesireStatus `json:"status,omitempty"`
	Object
}

func (p *ReadDesireProperties) UnmarshalJSON(b []byte) error    { return decodeObject(b, p) }
func (p ReadDesireProperties) MarshalJSON() ([]byte, error)     { return encodeObject(&p) }
func (p *ReadDesireProperties) metadataField() **CosmosMetadata { return &p.CosmosMetadata }

type ReadDesireSpec struct {
	ManagementCluster string      `json:"managementCluster,omitempty"`
	TargetItem        *TargetItem `json:"targetItem,omitempty"`
	Object
}

func (p *ReadDesireSpec) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ReadDesireSpec) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type TargetItem struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Object
}

func (p *TargetItem) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p TargetItem) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ReadDesireStatus struct {
	Conditions []Condition `json:"conditions,omitempty"`
	// KubeContent is the mirrored Kubernetes object, kept as raw JSON; see CapacityReport.
	KubeContent json.RawMessage `json:"kubeContent,omitempty"`
	Object
}

func (p *ReadDesireStatus) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ReadDesireStatus) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ReadDesire = Document[ReadDesireProperties]
