package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// CapacityReport identity: the cluster-scoped CR an agent on each MC writes every 30 s.
const (
	CapacityReportGroup    = "mgmtagent.aro-hcp.azure.com"
	CapacityReportVersion  = "v1alpha1"
	CapacityReportResource = "capacityreports"
	CapacityReportKind     = "CapacityReport"
	CapacityReportName     = "cluster"
	// CapacityReadDesireName names the ReadDesire that mirrors the report into Cosmos.
	CapacityReadDesireName = "capacity"
	// SwiftNIC is the per-MC scarce resource placement counts.
	SwiftNIC = "aro.openshift.io/swift-nic"
	// CapacityReportConditionReportCurrent is True while the agent's data is fresh.
	CapacityReportConditionReportCurrent = "ReportCurrent"
)

// CapacityReport is the CR mirrored in a capacity ReadDesire's status.kubeContent.
// hcpsched only reads it, so it is a plain type; extra fields the CRD gains are ignored.
type CapacityReport struct {
	APIVersion string                 `json:"apiVersion"`
	Kind       string                 `json:"kind"`
	Metadata   CapacityReportMetadata `json:"metadata"`
	Status     CapacityReportStatus   `json:"status"`
}

type CapacityReportMetadata struct {
	Name string `json:"name"`
}

type CapacityReportStatus struct {
	Conditions          []Condition          `json:"conditions,omitempty"`
	LastReportedAt      time.Time            `json:"lastReportedAt,omitzero"`
	Nodes               []CapacityReportNode `json:"nodes,omitempty"`
	Usage               ResourceList         `json:"usage,omitempty"`
	Requested           ResourceList         `json:"requested,omitempty"`
	HostedControlPlanes HostedControlPlanes  `json:"hostedControlPlanes,omitzero"`
}

type CapacityReportNode struct {
	SKU         string       `json:"sku"`
	Ready       int          `json:"ready"`
	NotReady    int          `json:"notReady"`
	Allocatable ResourceList `json:"allocatable,omitempty"`
}

type HostedControlPlanes struct {
	ReadyResourceIDs    []string `json:"readyResourceIDs,omitempty"`
	NotReadyResourceIDs []string `json:"notReadyResourceIDs,omitempty"`
}

// DecodeCapacityReport reads kubeContent; a missing report is ErrNoCapacityReport, which
// callers treat as "not observed yet", not as a failure.
func DecodeCapacityReport(kubeContent json.RawMessage) (*CapacityReport, error) {
	if len(kubeContent) == 0 || string(kubeContent) == "null" {
		return nil, ErrNoCapacityReport
	}
	var r CapacityReport
	if err := json.Unmarshal(kubeContent, &r); err != nil {
		return nil, fmt.Errorf("decoding capacity report: %w", err)
	}
	if r.Kind != CapacityReportKind {
		return nil, fmt.Errorf("decoding capacity report: kind is %q, want %q", r.Kind, CapacityReportKind)
	}
	return &r, nil
}

// ErrNoCapacityReport means the ReadDesire has no kubeContent yet.
var ErrNoCapacityReport = errors.New("no capacity report mirrored yet")
