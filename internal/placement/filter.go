package placement

import "time"

// filter is one feasibility check, a small named type in the manner of a kube-scheduler
// filter plugin. Each may assume that the filters before it passed the MC.
type filter interface {
	// Name is how docs/placement.md names the check.
	Name() string
	// static says the check reads only the MC's documents, not the cluster being placed
	// nor the clock: NewMC runs it once per document version and every decision reuses
	// its verdict.
	static() bool
	// check passes the MC (empty reason) or rejects it with a reason and a detail of a
	// few words, which reach the SPC condition message. A static check sees a judgement
	// with only mc set.
	check(j *judgement) (Reason, string)
}

// judgement is one MC as a filter sees it during one decision.
type judgement struct {
	mc *MC
	// key is the lowercased resource ID of the cluster being placed, cost what it costs.
	key  string
	cost []int64
	// hash is keyHash(key), to find the cluster's reservation quickly.
	hash uint64
	// nowNanos is the decision's clock in Unix nanoseconds, for the freshness check.
	nowNanos int64
	// shortOf is set by ResourcesFit: the index of the resource that is short, else -1.
	shortOf int
}

// judgementFor is how cluster is judged at now, to be pointed at each MC in turn.
func (m *Model) judgementFor(cluster Cluster, now time.Time) judgement {
	key := lowerKey(cluster.ResourceID)
	return judgement{key: key, cost: m.Cost(cluster), hash: keyHash(key), nowNanos: unixNanos(now), shortOf: -1}
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

// dynamicFilters are the indices in filters of the checks that are not static.
var dynamicFilters = func() []int {
	var out []int
	for i, f := range filters {
		if !f.static() {
			out = append(out, i)
		}
	}
	return out
}()

// judge runs the filters over j.mc for one decision into v: the static ones' verdict
// was recorded by NewMC, the others run now, in the filters' order.
func (j *judgement) judge(v *verdict) {
	mc := j.mc
	j.shortOf = -1
	v.filter = -1
	for _, i := range dynamicFilters {
		if mc.rejectAt < i {
			break
		}
		if reason, _ := filters[i].check(j); reason != "" {
			v.reason, v.filter = reasonCode(reason), int8(i)
			return
		}
	}
	if mc.rejectAt < len(filters) {
		v.reason, v.filter = mc.reasonCode, int8(mc.rejectAt)
	}
}

type staticFilter struct{}

func (staticFilter) static() bool { return true }
