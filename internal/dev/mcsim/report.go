// Package mcsim simulates the capacity agents of management clusters (MCs) for local
// stacks: per MC, worker nodes of one VM size and the hosted control planes (HCPs) that
// the fake Cluster Service has on the MC's provision shard, reported as the CapacityReport
// that kube-applier mirrors into the MC's capacity ReadDesire.
package mcsim

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/internal/api"
)

// Defaults of a simulated management cluster, defined once. The node figures are those of
// a Standard_D16ds_v5 node in ARO-HCP's capacity reports (see the fixture
// constructed/readdesire-capacity-stamp-1.json: 6 ready nodes, 96 swift NICs).
const (
	DefaultVMSize          = "Standard_D16ds_v5"
	DefaultNodes           = 3
	DefaultNodeCPU         = "15820m"
	DefaultNodeMemory      = "58613616Ki"
	DefaultNodePods        = "250"
	DefaultNodeSwiftNICs   = 16
	DefaultHASwiftNICs     = 3
	DefaultSingleSwiftNICs = 1
	// DefaultReplicaCPU and DefaultReplicaMemory are what one control-plane replica
	// requests and uses; an HA HCP has three replicas, a single-replica one has one.
	DefaultReplicaCPU    = "500m"
	DefaultReplicaMemory = "2Gi"
	// DefaultNotReadyDelay is how long a new HCP is reported not ready before it is ready.
	DefaultNotReadyDelay = 5 * time.Second
	// DefaultInterval is how often each MC's report is written in a local stack.
	DefaultInterval = 3 * time.Second
	// RealisticInterval is how often the real agent writes its report.
	RealisticInterval = 30 * time.Second
)

// haReplicas is the control-plane replica count of an HA HCP.
const haReplicas = 3

// Profile is one simulated management cluster's worker nodes.
type Profile struct {
	VMSize string
	// Nodes is the number of ready worker nodes.
	Nodes int
	// NodeAllocatable is one node's allocatable: cpu, memory, pods and swift NICs.
	NodeAllocatable api.ResourceList
}

// DefaultProfile is DefaultNodes nodes of DefaultVMSize.
func DefaultProfile() Profile {
	return Profile{
		VMSize: DefaultVMSize,
		Nodes:  DefaultNodes,
		NodeAllocatable: api.ResourceList{
			"cpu": DefaultNodeCPU, "memory": DefaultNodeMemory, "pods": DefaultNodePods,
			api.SwiftNIC: strconv.Itoa(DefaultNodeSwiftNICs),
		},
	}
}

// HCP is one hosted control plane the MC runs.
type HCP struct {
	// ResourceID is the cluster's ARM resource ID, as the HCP's namespace annotation has it.
	ResourceID    string
	SingleReplica bool
	Ready         bool
}

// SwiftNICs is what the HCP consumes of the MC's swift NICs.
func (h HCP) SwiftNICs() int64 {
	if h.SingleReplica {
		return DefaultSingleSwiftNICs
	}
	return DefaultHASwiftNICs
}

func (h HCP) replicas() int64 {
	if h.SingleReplica {
		return 1
	}
	return haReplicas
}

// BuildReport is the CapacityReport an MC with profile p running hcps writes at now.
// Usage and requests are the sum of the HCPs' costs, ready or not: a starting HCP's pods
// are already scheduled.
func BuildReport(p Profile, hcps []HCP, now time.Time) (*api.CapacityReport, error) {
	allocatable := api.ResourceList{}
	for name, perNode := range p.NodeAllocatable {
		q, err := resource.ParseQuantity(perNode)
		if err != nil {
			return nil, fmt.Errorf("node allocatable %s=%q: %w", name, perNode, err)
		}
		total := resource.Quantity{Format: q.Format}
		for range p.Nodes {
			total.Add(q)
		}
		allocatable[name] = total.String()
	}
	cpuPerReplica, err := resource.ParseQuantity(DefaultReplicaCPU)
	if err != nil {
		return nil, err
	}
	memPerReplica, err := resource.ParseQuantity(DefaultReplicaMemory)
	if err != nil {
		return nil, err
	}
	var nics, replicas int64
	var planes api.HostedControlPlanes
	for _, h := range hcps {
		nics += h.SwiftNICs()
		replicas += h.replicas()
		if h.Ready {
			planes.ReadyResourceIDs = append(planes.ReadyResourceIDs, h.ResourceID)
		} else {
			planes.NotReadyResourceIDs = append(planes.NotReadyResourceIDs, h.ResourceID)
		}
	}
	slices.SortFunc(planes.ReadyResourceIDs, compareFold)
	slices.SortFunc(planes.NotReadyResourceIDs, compareFold)
	cpu := resource.NewMilliQuantity(cpuPerReplica.MilliValue()*replicas, resource.DecimalSI)
	mem := resource.NewQuantity(memPerReplica.Value()*replicas, resource.BinarySI)
	used := api.ResourceList{"cpu": cpu.String(), "memory": mem.String(), api.SwiftNIC: strconv.FormatInt(nics, 10)}
	report := &api.CapacityReport{
		APIVersion: api.CapacityReportGroup + "/" + api.CapacityReportVersion,
		Kind:       api.CapacityReportKind,
		Metadata:   api.CapacityReportMetadata{Name: api.CapacityReportName},
		Status: api.CapacityReportStatus{
			Conditions: []api.Condition{{
				Type: api.CapacityReportConditionReportCurrent, Status: api.ConditionTrue,
				Reason: api.SchedulingReasonDataCollected, LastTransitionTime: now,
			}},
			LastReportedAt: now,
			Nodes: []api.CapacityReportNode{{
				SKU: p.VMSize, Ready: p.Nodes, Allocatable: allocatable,
			}},
			Usage:               used,
			Requested:           maps.Clone(used),
			HostedControlPlanes: planes,
		},
	}
	return report, nil
}

func compareFold(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) }
