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

// Check runs f alone on c, as Decide would when placing cluster.
func Check(f Filter, cluster Cluster, c Candidate, cfg Config, lookup SingleReplicaLookup, now time.Time) (Reason, string) {
	e := evaluation{cluster: cluster, cfg: cfg, lookup: lookup, now: now}
	return f.check(&judgement{e: &e, candidate: c, status: schedulingStatus(c)})
}
