package placement

import (
	"strings"
	"time"
)

// Decide places one cluster on one of mcs, which were built by this model (NewMC). It
// never fails: whatever it cannot judge becomes a reason. Each MC goes through the
// filters (filter.go), the first rejection being its reason; what passes is scored
// (score.go), and one MC is chosen (choose.go), unless the cluster already holds a
// reservation on one that passes. Decide reads ready-made numbers only: it allocates
// the verdicts and nothing per MC.
func (m *Model) Decide(cluster Cluster, mcs []*MC, now time.Time) Decision {
	j := m.judgementFor(cluster, now)
	d := Decision{mcs: mcs, verdicts: make([]verdict, len(mcs)), probe: j}
	if len(mcs) == 0 {
		d.Outcome = OutcomeNoManagementClusters
		return d
	}
	reserved := -1
	for i, mc := range mcs {
		v := &d.verdicts[i]
		j.mc = mc
		j.judge(v)
		if v.reason != 0 {
			continue
		}
		holds := mc.holds(j.key, j.hash)
		if holds && (reserved < 0 || mc.key < mcs[reserved].key) {
			reserved = i
		}
		v.score = m.score(mc, j.cost, holds)
	}
	if reserved >= 0 {
		// A crash between reserving and recording left this reservation: reuse it rather
		// than take a second one elsewhere.
		d.Outcome, d.Chosen, d.Reused = OutcomePlaced, mcs[reserved], true
		return d
	}
	if i := m.choose(j.hash, mcs, d.verdicts); i >= 0 {
		d.Outcome, d.Chosen = OutcomePlaced, mcs[i]
		return d
	}
	d.Outcome = classify(d.verdicts)
	return d
}

// Decide places one cluster from documents, parsing every candidate first: for tools and
// tests that decide once. The backend decides from MCs it keeps parsed
// (backend/candidates) instead.
func Decide(cluster Cluster, candidates []Candidate, cfg Config, lookup ClusterLookup, now time.Time) Decision {
	m := NewModel(cfg, nil)
	return m.Decide(cluster, m.NewMCs(candidates, lookup), now)
}

// NewMCs parses every candidate (NewMC).
func (m *Model) NewMCs(candidates []Candidate, lookup ClusterLookup) []*MC {
	out := make([]*MC, len(candidates))
	for i, c := range candidates {
		out[i] = m.NewMC(c.ManagementCluster, c.Scheduling, lookup)
	}
	return out
}

// classify names why nothing fits. Missing or stale data wins over exhaustion: capacity
// may exist where the engine could not look.
func classify(verdicts []verdict) Outcome {
	var capacity, data bool
	for _, v := range verdicts {
		switch reasons[v.reason] {
		case ReasonInsufficientCapacity:
			capacity = true
		case ReasonNoSchedulingData, ReasonStaleCapacityData:
			data = true
		}
	}
	switch {
	case data:
		return OutcomeStaleData
	case capacity:
		return OutcomeCapacityExhausted
	default:
		return OutcomeNoEligible
	}
}

func lowerKey(id string) string { return strings.ToLower(id) }

// Fits says whether the cluster passes every filter on mc at now, as a decision would
// judge it there: the question a waiting cluster's wake-up asks of an MC that changed.
func (mc *MC) Fits(cluster Cluster, now time.Time) bool {
	j := mc.model.judgementFor(cluster, now)
	j.mc = mc
	var v verdict
	j.judge(&v)
	return v.reason == 0
}
