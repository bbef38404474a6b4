package placement

import "time"

// Filter lets the external tests name the engine's filters and run each alone.
type Filter = filter

// Filters lists the filters in the order Decide runs them.
func Filters() []Filter { return append([]Filter(nil), filters...) }

// The filters, each tested on its own.
var (
	FilterSchedulable         Filter = schedulableFilter{}
	FilterReady               Filter = readyFilter{}
	FilterSchedulingData      Filter = schedulingDataFilter{}
	FilterFreshCapacityData   Filter = freshCapacityDataFilter{}
	FilterCompleteUsage       Filter = completeUsageFilter{}
	FilterCountableQuantities Filter = countableQuantitiesFilter{}
	FilterResourcesFit        Filter = resourcesFitFilter{}
)

// Check runs f alone on c, as Decide would when placing cluster, and gives its reason and
// detail.
func Check(f Filter, cluster Cluster, c Candidate, cfg Config, lookup ClusterLookup, now time.Time) (Reason, string) {
	m := NewModel(cfg, nil)
	mc := m.NewMC(c.ManagementCluster, c.Scheduling, lookup)
	j := m.judgementFor(cluster, now)
	j.mc = mc
	reason, detail := f.check(&j)
	if j.shortOf >= 0 {
		detail = shortDetail(mc, j.shortOf, j.cost[j.shortOf])
	}
	return reason, detail
}
