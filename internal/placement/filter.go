package placement

// filter is one feasibility check, a small named type in the manner of a kube-scheduler
// filter plugin. Each may assume that the filters before it passed the MC.
type filter interface {
	// Name is how docs/placement.md names the check.
	Name() string
	// check passes the MC (empty reason) or rejects it with a reason and a detail of a
	// few words, which reach the SPC condition message.
	check(j *judgement) (Reason, string)
}

// filters run in this order, policy and health before data, data before capacity; the
// first rejection is the MC's reason.
var filters = []filter{
	schedulableFilter{},
	readyFilter{},
	schedulingDataFilter{},
	freshCapacityDataFilter{},
	completeUsageFilter{},
	countableQuantitiesFilter{},
	resourcesFitFilter{},
}
