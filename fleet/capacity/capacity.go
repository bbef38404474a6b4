// Package capacity computes what a management cluster holds: what its capacity report
// says it has now (observed) and what it could hold with every worker pool at its maximum
// size (the scale ceiling). Both are pure functions of their inputs.
package capacity

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/fleet/agentpools"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// Resources are the resources placement counts; every other resource in a report is
// ignored.
var Resources = []string{"cpu", "memory", api.SwiftNIC}

// Observed is what a capacity report says the management cluster has and uses now.
type Observed struct {
	// Capacity is the allocatable of the ready worker nodes.
	Capacity api.ResourceList
	Usage    api.ResourceList
	Requests api.ResourceList
}

// Observe reads the scheduling resources out of a capacity report. The report's node
// entries are per VM size and already sum the allocatable of that size's ready nodes, so
// capacity adds them up; sizes without a ready node contribute nothing. Every quantity it
// returns is one placement can count (placement.ParseQuantity); a report with any other
// is an error, so that a broken agent leaves the last good figures to go stale rather
// than be mirrored.
func Observe(report *api.CapacityReport) (Observed, error) {
	sum := list{}
	for _, n := range report.Status.Nodes {
		if n.Ready <= 0 {
			continue
		}
		allocatable, err := allocatableOf(n)
		if err != nil {
			return Observed{}, err
		}
		for r, q := range allocatable {
			sum.add(r, q)
		}
	}
	capacity, err := sum.resourceList()
	if err != nil {
		return Observed{}, fmt.Errorf("capacity: %w", err)
	}
	usage, err := filter(report.Status.Usage)
	if err != nil {
		return Observed{}, fmt.Errorf("usage: %w", err)
	}
	requests, err := filter(report.Status.Requested)
	if err != nil {
		return Observed{}, fmt.Errorf("requested: %w", err)
	}
	return Observed{Capacity: capacity, Usage: usage, Requests: requests}, nil
}

// filter keeps the scheduling resources, spelled as the report spelled them.
func filter(in api.ResourceList) (api.ResourceList, error) {
	if _, err := parse(in); err != nil {
		return nil, err
	}
	out := api.ResourceList{}
	for _, r := range Resources {
		if v, ok := in[r]; ok {
			out[r] = v
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// Ceiling is the most a management cluster can hold once its worker pools have scaled out.
type Ceiling struct {
	Capacity api.ResourceList
	// WorkerPools counts the pools labelled as workers.
	WorkerPools int
	// Unresolved names, per worker pool VM size, the resources whose per-node amount is
	// known neither from the report nor from the VM size table ("Standard_X: swift-nic").
	// Those pools add nothing for those resources, so the ceiling is a lower bound.
	Unresolved []string
}

// ComputeCeiling sums, over the worker pools, the per-node amount of each resource times
// the pool's maximum node count. The per-node amount comes from the capacity report
// (allocatable ÷ ready nodes of that VM size) when the report has ready nodes of that size;
// what the report does not give comes from the VM size table, except the swift NIC count,
// which the pool's NICSecondaryCountTag overrides. report may be nil.
func ComputeCeiling(report *api.CapacityReport, pools []agentpools.Pool, sizes VMSizes) (Ceiling, error) {
	var c Ceiling
	sum := list{}
	unresolved := map[string]bool{}
	for _, p := range pools {
		if !p.IsWorker() {
			continue
		}
		c.WorkerPools++
		perNode, err := perNode(report, p, sizes)
		if err != nil {
			return Ceiling{}, err
		}
		for _, r := range Resources {
			q, ok := perNode[r]
			if !ok {
				unresolved[p.VMSize+": "+r] = true
				continue
			}
			total, err := times(q, p.MaxNodes())
			if err != nil {
				return Ceiling{}, fmt.Errorf("worker pool %q (%s): %s: %w", p.Name, p.VMSize, r, err)
			}
			sum.add(r, total)
		}
	}
	capacity, err := sum.resourceList()
	if err != nil {
		return Ceiling{}, err
	}
	c.Capacity = capacity
	for u := range unresolved {
		c.Unresolved = append(c.Unresolved, u)
	}
	slices.Sort(c.Unresolved)
	return c, nil
}

func perNode(report *api.CapacityReport, p agentpools.Pool, sizes VMSizes) (map[string]resource.Quantity, error) {
	out := map[string]resource.Quantity{}
	if n, ok := readyNodesOf(report, p.VMSize); ok {
		allocatable, err := allocatableOf(n)
		if err != nil {
			return nil, err
		}
		for r, q := range allocatable {
			out[r] = divide(r, q, int64(n.Ready))
		}
	}
	// The tag is what the pool was built with; a VM size's NIC limit may be higher.
	if _, observed := out[api.SwiftNIC]; !observed {
		if nics, ok := p.SecondaryNICs(); ok {
			out[api.SwiftNIC] = *resource.NewQuantity(nics, resource.DecimalSI)
		}
	}
	entry, _ := sizes.Lookup(p.VMSize)
	table, err := parse(entry)
	if err != nil {
		return nil, fmt.Errorf("VM size table: %s: %w", p.VMSize, err)
	}
	for r, q := range table {
		if _, known := out[r]; !known {
			out[r] = q
		}
	}
	return out, nil
}

// parse reads the scheduling resources of a resource list. It parses as placement does:
// bounded in size and time, which keeps the arithmetic here in int64 range, and never
// negative.
func parse(l api.ResourceList) (map[string]resource.Quantity, error) {
	out := map[string]resource.Quantity{}
	for _, r := range Resources {
		v, ok := l[r]
		if !ok {
			continue
		}
		q, err := placement.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r, err)
		}
		out[r] = q
	}
	return out, nil
}

// allocatableOf parses the scheduling resources of a report's node entry.
func allocatableOf(n api.CapacityReportNode) (map[string]resource.Quantity, error) {
	out, err := parse(n.Allocatable)
	if err != nil {
		return nil, fmt.Errorf("allocatable of %s nodes: %w", n.SKU, err)
	}
	return out, nil
}

// readyNodesOf returns the report's entry for a VM size if it has ready nodes.
func readyNodesOf(report *api.CapacityReport, vmSize string) (api.CapacityReportNode, bool) {
	if report == nil {
		return api.CapacityReportNode{}, false
	}
	for _, n := range report.Status.Nodes {
		if strings.EqualFold(n.SKU, vmSize) && n.Ready > 0 {
			return n, true
		}
	}
	return api.CapacityReportNode{}, false
}

// divide splits a total over n nodes, rounding down: memory to whole Ki so it keeps a
// binary suffix, CPU to millicores, NICs to whole NICs (a NIC does not split).
func divide(r string, q resource.Quantity, n int64) resource.Quantity {
	switch {
	case r == api.SwiftNIC:
		return *resource.NewQuantity(q.MilliValue()/n/1000, resource.DecimalSI)
	case q.Format == resource.BinarySI:
		return *resource.NewQuantity(q.Value()/n/1024*1024, resource.BinarySI)
	default:
		return *resource.NewMilliQuantity(q.MilliValue()/n, q.Format)
	}
}

// times multiplies a per-node amount by a node count. A product beyond int64 is an error:
// plain multiplication would wrap to a negative ceiling.
func times(q resource.Quantity, n int64) (resource.Quantity, error) {
	if n < 0 {
		return resource.Quantity{}, fmt.Errorf("negative node count %d", n)
	}
	perUnit := int64(1000) // the product is counted in milli-units, or bytes for BinarySI
	if q.Format == resource.BinarySI {
		perUnit = 1
	}
	// Value first: MilliValue itself wraps for amounts beyond int64 milli-units, which a
	// pool's NIC tag can ask for.
	if n > 0 && q.Value() > math.MaxInt64/perUnit/n {
		return resource.Quantity{}, fmt.Errorf("%s times %d nodes is beyond int64", q.String(), n)
	}
	if q.Format == resource.BinarySI {
		return *resource.NewQuantity(q.Value()*n, resource.BinarySI), nil
	}
	return *resource.NewMilliQuantity(q.MilliValue()*n, q.Format), nil
}

// list sums quantities per resource.
type list map[string]resource.Quantity

func (l list) add(r string, q resource.Quantity) {
	sum, ok := l[r]
	if !ok {
		l[r] = q.DeepCopy()
		return
	}
	sum.Add(q)
	l[r] = sum
}

// resourceList spells the sums; a sum placement could not count is an error.
func (l list) resourceList() (api.ResourceList, error) {
	if len(l) == 0 {
		return nil, nil
	}
	out := api.ResourceList{}
	for r, q := range l {
		s := q.String()
		if _, err := placement.ParseQuantity(s); err != nil {
			return nil, fmt.Errorf("sum of %s: %w", r, err)
		}
		out[r] = s
	}
	return out, nil
}
