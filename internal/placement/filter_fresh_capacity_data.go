package placement

// freshCapacityDataFilter rejects an MC whose capacity data the fleet marks as not
// current, or whose last report is missing, too old, or dated too far ahead to believe.
// Its verdict changes with the clock, so it runs at every decision, on what NewMC read.
type freshCapacityDataFilter struct{}

func (freshCapacityDataFilter) Name() string { return "FreshCapacityData" }
func (freshCapacityDataFilter) static() bool { return false }

func (freshCapacityDataFilter) check(j *judgement) (Reason, string) {
	mc := j.mc
	if mc.conditions != "" {
		return ReasonStaleCapacityData, mc.conditions + " is not True"
	}
	if mc.reportedAt.IsZero() {
		return ReasonStaleCapacityData, "capacity never reported"
	}
	// In Unix nanoseconds: a decision judges a thousand MCs, and time.Time arithmetic
	// was a fifth of its cost. Same rule as ReportedInFuture.
	if mc.reportedNanos-j.nowNanos > int64(ClockSkewAllowance) {
		// Its age would read negative, so it would be fresh for ever. The time is in the
		// message although the condition is rewritten when the message changes: the fleet
		// does not mirror such reports, so it changes only when a foreign writer's does.
		return ReasonStaleCapacityData, mc.futureDetail
	}
	if j.nowNanos-mc.reportedNanos > int64(mc.model.cfg.MaxCapacityAge) {
		// No exact age: the message goes into the SPC condition, which is only rewritten
		// when it changes.
		return ReasonStaleCapacityData, mc.model.staleDetail
	}
	return "", ""
}
