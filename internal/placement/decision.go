package placement

// Reason says why a filter rejected an MC. They appear in the SPC condition message and
// in docs/placement.md.
type Reason string

const (
	ReasonUnschedulable        Reason = "Unschedulable"
	ReasonNotReady             Reason = "NotReady"
	ReasonNoSchedulingData     Reason = "NoSchedulingData"
	ReasonStaleCapacityData    Reason = "StaleCapacityData"
	ReasonInsufficientCapacity Reason = "InsufficientCapacity"
)

// Outcome classifies one placement attempt, for hcpsched_placement_attempts_total.
type Outcome string

const (
	// OutcomePlaced: an MC was chosen (and, at apply time, reserved and recorded).
	OutcomePlaced Outcome = "placed"
	// OutcomeNoManagementClusters: there is no MC at all in the cache.
	OutcomeNoManagementClusters Outcome = "no_management_clusters"
	// OutcomeNoEligible: every MC was excluded by policy or health (Unschedulable,
	// NotReady), none for capacity or data.
	OutcomeNoEligible Outcome = "no_eligible"
	// OutcomeCapacityExhausted: every MC that could be judged was full; no MC was excluded
	// for missing or stale data.
	OutcomeCapacityExhausted Outcome = "capacity_exhausted"
	// OutcomeStaleData: nothing fits and at least one MC could not be judged because its
	// scheduling data is missing or stale; capacity may exist there.
	OutcomeStaleData Outcome = "stale_data"
	// OutcomeConflict: a write lost an etag race (412): the reservation, to another
	// placement on the same MC (the cluster is decided again from the updated cache), or
	// the SPC record, to another writer of the SPC (the change feed brings it back). Set
	// by the controller.
	OutcomeConflict Outcome = "conflict"
	// OutcomeError: the attempt failed for another reason and is retried with backoff.
	// Set by the controller.
	OutcomeError Outcome = "error"
)

// Outcomes lists every outcome, so that metrics can be initialised to zero.
var Outcomes = []Outcome{OutcomePlaced, OutcomeNoManagementClusters, OutcomeNoEligible, OutcomeCapacityExhausted, OutcomeStaleData, OutcomeConflict, OutcomeError}

// reasons indexes the reasons a compact verdict holds; 0 is none.
var reasons = []Reason{"", ReasonUnschedulable, ReasonNotReady, ReasonNoSchedulingData, ReasonStaleCapacityData, ReasonInsufficientCapacity}

func reasonCode(r Reason) uint8 {
	for i, known := range reasons {
		if known == r {
			return uint8(i)
		}
	}
	panic("placement: reason " + string(r) + " is not in reasons")
}

// verdict is one MC's judgement as a decision keeps it. It holds no pointer, so the
// verdicts of a decision over a thousand MCs are one block the garbage collector never
// scans: scanning pointerful verdicts was a third of a decision's cost.
type verdict struct {
	score float64
	// reason indexes reasons; filter is the index in filters of the filter that
	// rejected the MC, -1 when none did.
	reason uint8
	filter int8
}

// Verdict is the engine's judgement of one MC, as Decision.Verdict gives it.
type Verdict struct {
	// MC is the MC judged.
	MC *MC
	// Reason is empty when the MC is feasible.
	Reason Reason
	// Score ranks feasible MCs; higher is better.
	Score  float64
	detail string
}

// ManagementCluster is the MC's resource ID as stored.
func (v Verdict) ManagementCluster() string { return v.MC.ID() }

// Detail explains the reason in a few words (which resource, how stale).
func (v Verdict) Detail() string { return v.detail }

// Available is what the MC has left of the named counted resource, in milli-units,
// before this cluster; ok is false when its capacity could not be counted.
func (v Verdict) Available(resource string) (available int64, ok bool) {
	if !v.MC.counted {
		return 0, false
	}
	for i, name := range v.MC.model.names {
		if name == resource {
			return v.MC.available[i], true
		}
	}
	return 0, false
}

// Decision is the engine's answer for one cluster.
type Decision struct {
	Outcome Outcome
	// Chosen is the chosen MC, nil when none is: the very MC the decision was given, so
	// that the controller reserves on the scheduling document it was computed from.
	Chosen *MC
	// Reused is true when the cluster already holds a reservation on the chosen MC, so no
	// new reservation is written.
	Reused bool

	mcs      []*MC
	verdicts []verdict
	// probe is the cluster and the clock the MCs were judged for, to explain a rejection
	// when asked.
	probe judgement
}

// Len is how many MCs the decision judged.
func (d Decision) Len() int { return len(d.verdicts) }

// Verdict is the judgement of the i-th MC the decision was given. Its detail is worked
// out now, by asking the filter that rejected the MC again: only what is read pays for
// the formatting.
func (d Decision) Verdict(i int) Verdict {
	v, mc := d.verdicts[i], d.mcs[i]
	out := Verdict{MC: mc, Reason: reasons[v.reason], Score: v.score}
	switch {
	case v.filter < 0:
	case int(v.filter) == mc.rejectAt:
		out.detail = mc.detail
	default:
		j := d.probe
		j.mc, j.shortOf = mc, -1
		_, out.detail = filters[v.filter].check(&j)
		if j.shortOf >= 0 {
			out.detail = shortDetail(mc, j.shortOf, j.cost[j.shortOf])
		}
	}
	return out
}

// Verdicts is every MC's judgement, in the order the MCs were given.
func (d Decision) Verdicts() []Verdict {
	out := make([]Verdict, d.Len())
	for i := range out {
		out[i] = d.Verdict(i)
	}
	return out
}
