package api

import (
	"encoding/json"
	"time"
)

// ---- Stamp (Fleet container, partition key = stamp name) ----

type StampProperties struct {
	CosmosMetadata *CosmosMetadata `json:"cosmosMetadata,omitempty"`
	// LegacyResourceID is the transitional properties.resourceId duplicate ARO-HCP still
	// queries on.
	LegacyResourceID string `json:"resourceId,omitempty"`
	// Spec is empty in every ARO-HCP version so far; it is written as {} on create, as
	// ARO-HCP's own register does.
	Spec   *StampSpec   `json:"spec,omitempty"`
	Status *StampStatus `json:"status,omitempty"`
	Object
}

func (p *StampProperties) UnmarshalJSON(b []byte) error    { return decodeObject(b, p) }
func (p StampProperties) MarshalJSON() ([]byte, error)     { return encodeObject(&p) }
func (p *StampProperties) metadataField() **CosmosMetadata { return &p.CosmosMetadata }

type StampSpec struct {
	Object
}

func (p *StampSpec) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p StampSpec) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

// Stamp approval: registration with downstream services waits for it.
const (
	StampConditionApproved = "Approved"
	// StampReasonAutoApproved is what `register --auto-approve` records.
	StampReasonAutoApproved = "AutoApproved"
)

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
	SchedulingPolicy string `json:"schedulingPolicy,omitempty" hcpsched:"intern"`
	Object
}

func (p *ManagementClusterSpec) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ManagementClusterSpec) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

// ManagementClusterStatus keeps ARO-HCP's field order. Everything but the conditions and
// clusterServiceProvisionShardID is set by `register`; the fleet controllers only read it.
type ManagementClusterStatus struct {
	Conditions                                           []Condition `json:"conditions,omitempty"`
	AKSResourceID                                        string      `json:"aksResourceID,omitempty"`
	PublicDNSZoneResourceID                              string      `json:"publicDNSZoneResourceID,omitempty"`
	HostedClustersSecretsKeyVaultURL                     string      `json:"hostedClustersSecretsKeyVaultURL,omitempty"`
	HostedClustersManagedIdentitiesKeyVaultURL           string      `json:"hostedClustersManagedIdentitiesKeyVaultURL,omitempty"`
	HostedClustersSecretsKeyVaultManagedIdentityClientID string      `json:"hostedClustersSecretsKeyVaultManagedIdentityClientID,omitempty"`
	MaestroConsumerName                                  string      `json:"maestroConsumerName,omitempty"`
	MaestroRESTAPIURL                                    string      `json:"maestroRESTAPIURL,omitempty"`
	MaestroGRPCTarget                                    string      `json:"maestroGRPCTarget,omitempty"`
	// ClusterServiceProvisionShardID is the shard's CS path,
	// /api/aro_hcp/v1alpha1/provision_shards/<id>.
	ClusterServiceProvisionShardID string `json:"clusterServiceProvisionShardID,omitempty"`
	KubeApplierCosmosContainerName string `json:"kubeApplierCosmosContainerName,omitempty"`
	Object
}

func (p *ManagementClusterStatus) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p ManagementClusterStatus) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type ManagementCluster = Document[ManagementClusterProperties]

// ManagementCluster conditions. A condition whose type ends in
// ManagementClusterRegistrationSuffix is a registration with a downstream service (ARO-HCP
// also writes MaestroRegistered); Ready aggregates them.
const (
	ManagementClusterConditionReady                     = "Ready"
	ManagementClusterConditionClustersServiceRegistered = "ClustersServiceRegistered"
	ManagementClusterRegistrationSuffix                 = "Registered"

	// Reasons of registration conditions.
	ManagementClusterReasonRegistered = "Registered"
	// ManagementClusterReasonCheckFailed keeps a registration True after a later check
	// failed: the registration itself still stands.
	ManagementClusterReasonCheckFailed        = "CheckFailed"
	ManagementClusterReasonRegistrationFailed = "RegistrationFailed"

	// Reasons of Ready.
	ManagementClusterReasonAllRegistered          = "AllRegistered"
	ManagementClusterReasonRegistrationIncomplete = "RegistrationIncomplete"
)

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

// ManagementClusterScheduling conditions and their reasons.
const (
	SchedulingConditionCapacityDataCurrent = "CapacityDataCurrent"
	SchedulingConditionScalingDataCurrent  = "ScalingDataCurrent"

	SchedulingReasonDataCollected    = "DataCollected"
	SchedulingReasonReportNotCurrent = "ReportNotCurrent"
	// SchedulingReasonAgentPoolsUnavailable: the MC's agent pools could not be listed.
	SchedulingReasonAgentPoolsUnavailable = "AgentPoolsUnavailable"
	// SchedulingReasonNoWorkerPools: no agent pool carries the worker role label.
	SchedulingReasonNoWorkerPools = "NoWorkerPools"
	// SchedulingReasonUnknownVMSize: a worker pool's per-node capacity is known neither
	// from the capacity report nor from the VM size table.
	SchedulingReasonUnknownVMSize = "UnknownVMSize"
)

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

// NewManagementClusterScheduling returns an MC's scheduling document as ARO-HCP first
// creates it, status {observedResources: {}, scaleCeiling: {}}, ready for Create.
func NewManagementClusterScheduling(mc *ResourceID) (*ManagementClusterScheduling, error) {
	id := SchedulingResourceID(mc)
	pk, err := FleetPartitionKey(id)
	if err != nil {
		return nil, err
	}
	return NewDocument(id, pk, ManagementClusterSchedulingProperties{
		Status: &SchedulingStatus{ObservedResources: &ObservedResources{}, ScaleCeiling: &ScaleCeiling{}},
	}), nil
}
