package placement

import (
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
)

// Cluster is what the engine needs to know of the cluster being placed.
type Cluster struct {
	ResourceID    string
	SingleReplica bool
}

// Candidate is one MC as the caches hold it. Scheduling is nil when the MC has no
// scheduling document yet.
type Candidate struct {
	ManagementCluster *api.ManagementCluster
	Scheduling        *api.ManagementClusterScheduling
}

// SingleReplicaLookup says whether a cluster that an MC counts as not ready or reserved
// is single-replica. Clusters it does not know cost as much as an HA one: better to
// under-commit an MC than to overcommit it.
type SingleReplicaLookup func(clusterResourceID string) (singleReplica, known bool)

// Decide places one cluster. It never fails: whatever it cannot judge becomes a reason.
// Each MC goes through the filters (filter.go), the first rejection being its reason;
// what passes is scored (score.go), and one MC is chosen (choose.go), unless the cluster
// already holds a reservation on one that passes.
func Decide(cluster Cluster, candidates []Candidate, cfg Config, lookup SingleReplicaLookup, now time.Time) Decision {
	d := Decision{Verdicts: make([]Verdict, len(candidates))}
	if len(candidates) == 0 {
		d.Outcome = OutcomeNoManagementClusters
		return d
	}
	e := evaluation{cluster: cluster, cfg: cfg, lookup: lookup, now: now}
	// One judgement reused for every MC: the filters take it through an interface, so
	// it lives on the heap, once per decision rather than once per MC.
	j := &judgement{e: &e}
	reserved := -1
	for i, c := range candidates {
		v, holdsReservation := j.judge(c)
		d.Verdicts[i] = v
		if v.Reason == "" && holdsReservation && (reserved < 0 || lowerID(c) < lowerID(candidates[reserved])) {
			reserved = i
		}
	}
	if reserved >= 0 {
		// A crash between reserving and recording left this reservation: reuse it rather
		// than take a second one elsewhere.
		d.Outcome, d.Chosen, d.Reused = OutcomePlaced, &candidates[reserved], true
		return d
	}
	if i := choose(cluster, candidates, d.Verdicts, cfg.Tolerance); i >= 0 {
		d.Outcome, d.Chosen = OutcomePlaced, &candidates[i]
		return d
	}
	d.Outcome = classify(d.Verdicts)
	return d
}

// evaluation is one call of Decide: the cluster being placed and what every MC is judged
// by.
type evaluation struct {
	cluster Cluster
	cfg     Config
	lookup  SingleReplicaLookup
	now     time.Time
}

// judgement is one MC as the filters see it: its documents and, once a filter asks, its
// capacity, counted at most once per MC.
type judgement struct {
	e         *evaluation
	candidate Candidate
	// status is nil when the MC has no scheduling document.
	status  *api.SchedulingStatus
	tallied bool
	tally   tally
}

// judge makes j the judgement of c: it runs the filters over c and scores it when it
// passes. It also reports whether the MC holds a reservation for this cluster.
func (j *judgement) judge(c Candidate) (Verdict, bool) {
	*j = judgement{e: j.e, candidate: c, status: schedulingStatus(c)}
	v := Verdict{ManagementCluster: c.ManagementCluster.ResourceID}
	for _, f := range filters {
		if reason, detail := f.check(j); reason != "" {
			v.Reason, v.Detail = reason, detail
			// Set once the MC's capacity was counted, even when it does not fit.
			v.Available = j.tally.available
			return v, false
		}
	}
	t := j.capacity()
	v.Available = t.available
	// A reservation the cluster holds is already counted in what is available.
	need := int64(0)
	if !t.holds {
		need = j.e.cost(j.e.cfg.Resources[0], j.e.cluster.SingleReplica)
	}
	v.Score = j.e.score(v, j.status, need)
	return v, t.holds
}

// capacity is what the MC has left, counted the first time a filter asks.
func (j *judgement) capacity() tally {
	if !j.tallied {
		j.tally, j.tallied = j.e.tally(j.status), true
	}
	return j.tally
}

func schedulingStatus(c Candidate) *api.SchedulingStatus {
	if c.Scheduling == nil {
		return nil
	}
	return c.Scheduling.Properties.Status
}

func lowerID(c Candidate) string { return strings.ToLower(c.ManagementCluster.ResourceID) }

// classify names why nothing fits. Missing or stale data wins over exhaustion: capacity
// may exist where the engine could not look.
func classify(verdicts []Verdict) Outcome {
	var capacity, data bool
	for _, v := range verdicts {
		switch v.Reason {
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
