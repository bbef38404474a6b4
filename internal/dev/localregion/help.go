package localregion

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/dev/mcsim"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// kinds are the four kinds of cluster, in the order --help lists them.
var kinds = []struct {
	name string
	kind frontend.Kind
}{
	{"SWIFT HA", frontend.Kind{Swift: true}},
	{"SWIFT single-replica", frontend.Kind{Swift: true, SingleReplica: true}},
	{"non-SWIFT HA", frontend.Kind{}},
	{"non-SWIFT single-replica", frontend.Kind{SingleReplica: true}},
}

// Sizes is what --help says of the region's sizes: the simulated management clusters'
// nodes and what each kind of cluster costs. It is generated from the simulator's node
// and pod figures and from placement's default configuration (the backend's, which the
// region runs with), so that it cannot drift from them.
func Sizes(o Options) string { return sizes(o, placement.DefaultConfig()) }

func sizes(o Options, cfg placement.Config) string {
	var b strings.Builder
	node := mcsim.DefaultProfile()
	alloc := node.NodeAllocatable
	fmt.Fprintf(&b, "Management clusters: --nodes=%d worker nodes each (stamp 1: --tight-nodes=%d), every node a\n"+
		"%s with %d swift NICs per node and %s cpu, %s memory, %s pods allocatable:\n"+
		"%d swift NICs per management cluster (stamp 1: %d).\n\n",
		o.Nodes, o.TightNodes, node.VMSize, mcsim.DefaultNodeSwiftNICs, alloc["cpu"], alloc["memory"], alloc["pods"],
		o.Nodes*mcsim.DefaultNodeSwiftNICs, o.TightNodes*mcsim.DefaultNodeSwiftNICs)

	model := placement.NewModel(cfg, nil)
	costs := make([]string, len(cfg.Resources))
	for i, r := range cfg.Resources {
		costs[i] = fmt.Sprintf("%s=%s/%s", r.Name, r.HA.String(), r.SingleReplica.String())
	}
	fmt.Fprintf(&b, "What each kind of cluster costs: what placement counts with the backend's defaults\n"+
		"(--placement-resource-costs=%s), and what its pods request on a simulated\n"+
		"management cluster once all its replicas run:\n", strings.Join(costs, ","))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  kind\tplacement counts\tpods request")
	for _, k := range kinds {
		cost := model.Cost(placement.Cluster{Swift: k.kind.Swift, SingleReplica: k.kind.SingleReplica})
		counted := make([]string, len(cost))
		for i, milli := range cost {
			counted[i] = amount(resource.NewMilliQuantity(milli, resource.DecimalSI), model.Resources()[i])
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", k.name, strings.Join(counted, ", "), requests(k.kind))
	}
	_ = tw.Flush()
	var uncounted []string
	for _, name := range []string{"cpu", "memory"} {
		if !slices.Contains(model.Resources(), name) {
			uncounted = append(uncounted, name)
		}
	}
	if len(uncounted) > 0 {
		fmt.Fprintf(&b, "Placement's defaults do not count %s: they cost nothing unless the backend's\n"+
			"--placement-resource-costs adds them.\n", strings.Join(uncounted, " or "))
	}

	mix := map[frontend.Kind]int{}
	for n := 1; n <= o.Clusters; n++ {
		mix[o.Mix().Kind(n)]++
	}
	var counts []string
	for _, k := range kinds {
		counts = append(counts, fmt.Sprintf("%d %s", mix[k.kind], k.name))
	}
	fmt.Fprintf(&b, "The clusters (--clusters=%d, --non-swift-every=%d, --single-replica-every=%d):\n%s.\n",
		o.Clusters, o.NonSwiftEvery, o.SingleReplicaEvery, strings.Join(counts, ", "))
	return b.String()
}

// requests is what the pods of a running hosted control plane of kind k request on a
// simulated MC (package mcsim): its replicas' cpu and memory, and swift NICs when SWIFT.
func requests(k frontend.Kind) string {
	hcp := mcsim.HCP{Swift: k.Swift, SingleReplica: k.SingleReplica}
	replicas := int64(hcp.Replicas())
	cpu := resource.MustParse(mcsim.DefaultReplicaCPU)
	memory := resource.MustParse(mcsim.DefaultReplicaMemory)
	var out []string
	if nics := hcp.SwiftNICs(); nics > 0 {
		out = append(out, amount(resource.NewQuantity(nics, resource.DecimalSI), api.SwiftNIC))
	}
	out = append(out,
		amount(resource.NewMilliQuantity(cpu.MilliValue()*replicas, resource.DecimalSI), "cpu"),
		amount(resource.NewQuantity(memory.Value()*replicas, resource.BinarySI), "memory"))
	return strings.Join(out, ", ")
}

// amount writes a quantity of a resource: "3 swift NICs", "1 swift NIC", "1500m cpu".
func amount(q *resource.Quantity, name string) string {
	if name == api.SwiftNIC {
		return fmt.Sprintf("%s swift %s", q.String(), plural(int(q.Value()), "NIC", "NICs"))
	}
	return q.String() + " " + name
}
