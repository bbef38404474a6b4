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

// Verdict is the engine's judgement of one MC.
type Verdict struct {
	// MC is the MC judged.
	MC *MC
	// Reason is empty when the MC is feasible.
	Reason Reason
	// Score ranks feasible MCs; higher is better.
	Score float64
	// detail explains a static rejection; short is 1 + the index of the resource an MC
	// that does not fit is short of (0: none), need what the cluster needs of it.
	detail string
	short  int
	need   int64
}

// ManagementCluster is the MC's resource ID as stored.
func (v Verdict) ManagementCluster() string { return v.MC.ID() }

// Detail explains the reason in a few words (which resource, how stale).
func (v Verdict) Detail() string {
	if v.short > 0 {
		return shortDetail(v.MC, v.short-1, v.need)
	}
	return v.detail
}

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
	Reused   bool
	Verdicts []Verdict
}
