package placement

import (
	"fmt"

	"github.com/hcpsched/hcpsched/internal/api"
)

// Model is a configuration made ready for decisions: the counted resources and what
// each kind of hosted control plane costs of each, resolved once from the flags or, in
// phase 2, from ARO-HCP's HCPResourceRequirements document. Every MC is parsed against
// one model (NewMC), and a decision takes MCs of that model.
type Model struct {
	cfg   Config
	names []string
	// nic is the index of swift NICs among the counted resources, -1 when not counted.
	nic int
	// costs[k][i] is what a hosted control plane of kind k costs of resource i, in
	// milli-units.
	costs [kinds][]int64
	// requirements is true when the costs of resources other than swift NICs came from
	// the HCPResourceRequirements document.
	requirements bool
	fallback     FallbackReason
	staleDetail  string
}

// NewModel resolves cfg's costs. requirements is the cached HCPResourceRequirements
// document (nil when there is none); it is read only when cfg.CostSource says so, and a
// document that cannot be used falls back to the flag costs (Costs says why). cfg must
// be valid (Config.Validate).
func NewModel(cfg Config, requirements *api.HCPResourceRequirements) *Model {
	m := &Model{cfg: cfg, nic: -1, staleDetail: fmt.Sprintf("capacity report older than %s", cfg.MaxCapacityAge)}
	var others []string
	for i, r := range cfg.Resources {
		m.names = append(m.names, r.Name)
		if r.Name == api.SwiftNIC {
			m.nic = i
		} else {
			others = append(others, r.Name)
		}
	}
	var fromDoc []int64
	if cfg.CostSource == CostSourceRequirements && len(others) > 0 {
		fromDoc, m.fallback = CostsFromRequirements(requirements, others)
		m.requirements = m.fallback == ""
	}
	for k := range kinds {
		single := kind(k)&2 != 0
		swift := kind(k)&1 != 0
		costs := make([]int64, len(cfg.Resources))
		other := 0
		for i, r := range cfg.Resources {
			flag := r.HA.MilliValue()
			if single {
				flag = r.SingleReplica.MilliValue()
			}
			switch {
			case i == m.nic && !swift:
				// A control plane without VNet integration takes no swift NIC.
				costs[i] = 0
			case i == m.nic:
				costs[i] = flag
			case m.requirements:
				// The document averages every kind of HCP together.
				costs[i] = fromDoc[other]
			default:
				costs[i] = flag
			}
			if i != m.nic {
				other++
			}
		}
		m.costs[k] = costs
	}
	return m
}

// Config is the configuration the model was made from.
func (m *Model) Config() Config { return m.cfg }

// Resources names the counted resources, in the order of every per-resource slice.
func (m *Model) Resources() []string { return m.names }

// Cost is what a cluster's hosted control plane costs of each counted resource, in
// milli-units; the slice is the model's, read it only.
func (m *Model) Cost(c Cluster) []int64 { return m.costs[kindOf(c)] }

// Costs says where the per-HCP costs came from: CostSourceRequirements when the
// HCPResourceRequirements document gave them, else CostSourceFlags, with the reason the
// document was not used when the configuration asked for it.
func (m *Model) Costs() (source string, fallback FallbackReason) {
	if m.requirements {
		return CostSourceRequirements, ""
	}
	return CostSourceFlags, m.fallback
}

func (m *Model) costOf(id string, lookup ClusterLookup) []int64 {
	if lookup != nil {
		if c, ok := lookup(id); ok {
			return m.Cost(c)
		}
	}
	return m.costs[unknownKind]
}
