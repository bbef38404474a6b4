package api

import (
	"time"
)

// Resource types as ARO-HCP writes them into the envelope. They are matched
// case-insensitively: some stored documents carry a fully lowercased resourceType.
const (
	SubscriptionResourceType                = "Microsoft.Resources/subscriptions"
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
	Type               string    `json:"type" hcpsched:"intern"`
	Status             string    `json:"status" hcpsched:"intern"`
	ObservedGeneration int64     `json:"observedGeneration,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
	Reason             string    `json:"reason" hcpsched:"intern"`
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
