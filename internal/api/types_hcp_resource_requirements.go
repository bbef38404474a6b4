package api

import (
	"strings"
	"time"
)

// ---- HCPResourceRequirements (Fleet container, top-level singleton, partition key = its name) ----

// HCPResourceRequirements identity. ARO-HCP's fleet recomputes the document named
// "default" (the fleet-wide average) every 5 minutes; other names are reserved upstream
// for per-size documents that do not exist yet.
const (
	HCPResourceRequirementsResourceType = "microsoft.redhatopenshift/hcpresourcerequirements"
	HCPResourceRequirementsDefaultName  = "default"
	HCPResourceRequirementsDefaultID    = fleetProvider + "/hcpresourcerequirements/" + HCPResourceRequirementsDefaultName
)

// HCPResourceRequirements condition and its reasons.
const (
	// HCPResourceRequirementsConditionDataCurrent is True when the last computation found
	// at least one MC with a current report and a ready HCP to average over.
	HCPResourceRequirementsConditionDataCurrent = "DataCurrent"
	HCPResourceRequirementsReasonComputed       = "Computed"
	HCPResourceRequirementsReasonNoData         = "NoData"
)

// HCPResourceRequirementsProperties is written by ARO-HCP's fleet only; hcpsched reads it
// for per-HCP costs.
type HCPResourceRequirementsProperties struct {
	CosmosMetadata *CosmosMetadata                `json:"cosmosMetadata,omitempty"`
	Status         *HCPResourceRequirementsStatus `json:"status,omitempty"`
	Object
}

func (p *HCPResourceRequirementsProperties) UnmarshalJSON(b []byte) error {
	return decodeObject(b, p)
}
func (p HCPResourceRequirementsProperties) MarshalJSON() ([]byte, error) {
	return encodeObject(&p)
}
func (p *HCPResourceRequirementsProperties) metadataField() **CosmosMetadata {
	return &p.CosmosMetadata
}

// HCPResourceRequirementsStatus keeps ARO-HCP's field order. The averages are over the
// ready HCPs of every MC with a current report, but their sums also hold the pods of
// not-ready HCPs, mix every kind of HCP (HA and single-replica, SWIFT or not) and are
// rounded down: "4" NICs is an average of 4.5, not what any one HCP costs.
type HCPResourceRequirementsStatus struct {
	Conditions      []Condition  `json:"conditions,omitempty"`
	LastReportedAt  time.Time    `json:"lastReportedAt,omitzero"`
	AverageUsage    ResourceList `json:"averageUsage,omitempty"`
	AverageRequests ResourceList `json:"averageRequests,omitempty"`
	// SampleSize is the number of ready HCPs averaged over. ARO-HCP writes it even when
	// it is 0, so it has no omitempty.
	SampleSize int `json:"sampleSize"`
	Object
}

func (p *HCPResourceRequirementsStatus) UnmarshalJSON(b []byte) error { return decodeObject(b, p) }
func (p HCPResourceRequirementsStatus) MarshalJSON() ([]byte, error)  { return encodeObject(&p) }

type HCPResourceRequirements = Document[HCPResourceRequirementsProperties]

// HCPResourceRequirementsResourceID is /providers/microsoft.redhatopenshift/hcpresourcerequirements/{name},
// lowercased as ARO-HCP builds fleet IDs.
func HCPResourceRequirementsResourceID(name string) *ResourceID {
	return MustParseResourceID(strings.ToLower(fleetProvider + "/hcpresourcerequirements/" + name))
}

// NewHCPResourceRequirements returns the named document ready for Create, for tests and
// the local stack (in production ARO-HCP's fleet writes it). A top-level fleet resource
// is partitioned by its own lowercased name, as ARO-HCP partitions it.
func NewHCPResourceRequirements(name string, status *HCPResourceRequirementsStatus) *HCPResourceRequirements {
	rid := HCPResourceRequirementsResourceID(name)
	return NewDocument(rid, rid.Name(), HCPResourceRequirementsProperties{Status: status})
}
