// Package mcsim simulates the capacity agents of management clusters (MCs) for local
// stacks: per MC, worker nodes of one VM size and the hosted control planes (HCPs) that
// the fake Cluster Service has on the MC's provision shard, reported as the CapacityReport
// that kube-applier mirrors into the MC's capacity ReadDesire.
//
// The report is what ARO-HCP's mgmt-agent writes. requested is the sum of the container
// requests of every Running or Pending pod in a namespace that holds a
// HostedControlPlane, ready or not; cpu and memory usage come from metrics-server, which
// knows only running pods; swift-nic usage is the swift-nic requested, NICs being
// discrete. A resource no pod requests has no entry, so an MC without HCP pods writes
// neither map. The HCP lists are sorted in byte order with exact duplicates removed.
//
// Each HCP has one control-plane replica (single replica) or three (HA), and each
// replica's pods request DefaultReplicaCPU, DefaultReplicaMemory and, when the cluster is
// SWIFT (its document has a vnet-integration subnet), DefaultReplicaSwiftNICs: 3 NICs for
// a SWIFT HA HCP, 1 for a SWIFT single-replica one, none for a non-SWIFT one, as
// upstream placement charges them. A running replica uses UsageCPUPercent and
// UsageMemoryPercent of what it requests.
//
// A new HCP ramps up (StartedReplicas): its HostedControlPlane exists before any pod, then
// replica k of R gets its pods once the HCP is older than (k-1)/R of the not-ready delay;
// the newest replica's pods are Pending (requested, not yet used), the others Running.
// Once the delay has passed the HCP is ready and all its replicas run.
package mcsim

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/internal/api"
)

// Defaults of a simulated management cluster, defined once. The node figures are those of
// a Standard_D16ds_v5 node in ARO-HCP's capacity reports (see the fixture
// constructed/readdesire-capacity-stamp-1.json: 6 ready nodes, 96 swift NICs).
const (
	DefaultVMSize        = "Standard_D16ds_v5"
	DefaultNodes         = 3
	DefaultNodeCPU       = "15820m"
	DefaultNodeMemory    = "58613616Ki"
	DefaultNodePods      = "250"
	DefaultNodeSwiftNICs = 16
	// DefaultHASwiftNICs and DefaultSingleSwiftNICs are what a SWIFT HCP's pods request
	// of swift NICs once all its replicas run: DefaultReplicaSwiftNICs per replica.
	DefaultHASwiftNICs     = haReplicas * DefaultReplicaSwiftNICs
	DefaultSingleSwiftNICs = DefaultReplicaSwiftNICs
	// DefaultReplicaCPU, DefaultReplicaMemory and DefaultReplicaSwiftNICs are what the
	// pods of one control-plane replica request; a non-SWIFT replica requests no NIC.
	DefaultReplicaCPU       = "500m"
	DefaultReplicaMemory    = "2Gi"
	DefaultReplicaSwiftNICs = 1
	// UsageCPUPercent and UsageMemoryPercent are how much of its requests a running
	// replica uses, as metrics-server reports it: below requests, as in ARO-HCP's
	// reports (the stamp-1 fixture uses 3617m of 7260m cpu and 21783532Ki of 28416Mi
	// memory, about 50 % and 75 %).
	UsageCPUPercent    = 50
	UsageMemoryPercent = 75
	// DefaultNotReadyDelay is how long a new HCP is reported not ready before it is
	// ready; its replicas start over that time.
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
	// Swift is a cluster with a vnet-integration subnet: its replicas' pods request
	// swift NICs.
	Swift bool
	// Ready is the HostedControlPlane's Available condition; a ready HCP runs all its
	// replicas.
	Ready bool
	// StartedReplicas is, while the HCP is not ready, how many of its replicas have pods
	// (see StartedReplicas): the newest one's are Pending, the others' Running. 0 is the
	// moment the HostedControlPlane exists and no pod does yet.
	StartedReplicas int
}

// Replicas is the HCP's control-plane replica count.
func (h HCP) Replicas() int {
	if h.SingleReplica {
		return 1
	}
	return haReplicas
}

// SwiftNICs is what the HCP's pods request of the MC's swift NICs once all its replicas
// run: none for a non-SWIFT cluster.
func (h HCP) SwiftNICs() int64 {
	if !h.Swift {
		return 0
	}
	return int64(h.Replicas()) * DefaultReplicaSwiftNICs
}

// pods is how many of the HCP's replicas have Pending and Running pods.
func (h HCP) pods() (pending, running int64) {
	if h.Ready {
		return 0, int64(h.Replicas())
	}
	started := int64(min(max(h.StartedReplicas, 0), h.Replicas()))
	if started == 0 {
		return 0, 0
	}
	return 1, started - 1
}

// StartedReplicas is how many of replicas have pods an age after the HCP appeared, when it
// becomes ready after notReadyDelay: none at first, then replica k (from 1) once age
// exceeds (k-1)/replicas of the delay, all of them once the delay has passed.
func StartedReplicas(replicas int, age, notReadyDelay time.Duration) int {
	switch {
	case age <= 0 && notReadyDelay > 0:
		return 0
	case age >= notReadyDelay:
		return replicas
	}
	// ceil(replicas × age / delay); age < delay, so the product stays small.
	n := (int64(replicas)*int64(age) + int64(notReadyDelay) - 1) / int64(notReadyDelay)
	return int(min(n, int64(replicas)))
}

// BuildReport is the CapacityReport an MC with profile p running hcps writes at now.
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
	// podded counts the replicas with pods (Running or Pending), running those with
	// metrics, swift the SWIFT replicas with pods.
	var podded, running, swift int64
	var planes api.HostedControlPlanes
	for _, h := range hcps {
		pending, run := h.pods()
		podded += pending + run
		running += run
		if h.Swift {
			swift += pending + run
		}
		if h.Ready {
			planes.ReadyResourceIDs = append(planes.ReadyResourceIDs, h.ResourceID)
		} else {
			planes.NotReadyResourceIDs = append(planes.NotReadyResourceIDs, h.ResourceID)
		}
	}
	// The agent sorts each list byte-wise and drops exact duplicates only: IDs that
	// differ in case are two entries, as they would be two namespaces' annotations.
	for _, ids := range []*[]string{&planes.ReadyResourceIDs, &planes.NotReadyResourceIDs} {
		slices.Sort(*ids)
		*ids = slices.Compact(*ids)
	}
	requested, usage := api.ResourceList{}, api.ResourceList{}
	if podded > 0 {
		requested["cpu"] = resource.NewMilliQuantity(cpuPerReplica.MilliValue()*podded, resource.DecimalSI).String()
		requested["memory"] = resource.NewQuantity(memPerReplica.Value()*podded, resource.BinarySI).String()
	}
	if running > 0 {
		usage["cpu"] = resource.NewMilliQuantity(cpuPerReplica.MilliValue()*running*UsageCPUPercent/100, resource.DecimalSI).String()
		usage["memory"] = resource.NewQuantity(memPerReplica.Value()*running*UsageMemoryPercent/100, resource.BinarySI).String()
	}
	if swift > 0 {
		requested[api.SwiftNIC] = strconv.FormatInt(swift*DefaultReplicaSwiftNICs, 10)
		usage[api.SwiftNIC] = requested[api.SwiftNIC]
	}
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
			Usage:               usage,
			Requested:           requested,
			HostedControlPlanes: planes,
		},
	}
	return report, nil
}
