package placement

// The ServiceProviderCluster's status.placement.conditions[CapacityAvailable] and its
// reasons: what placement says of a cluster that it has placed, or why not yet.
const (
	ConditionCapacityAvailable          = "CapacityAvailable"
	ConditionReasonAvailable            = "Available"
	ConditionReasonInsufficientCapacity = "InsufficientCapacity"
	ConditionReasonNoEligible           = "NoEligibleManagementCluster"
	ConditionReasonEvaluationIncomplete = "EvaluationIncomplete"
)

// ConditionReason maps an unsuccessful outcome to the SPC condition's reason.
func (o Outcome) ConditionReason() string {
	switch o {
	case OutcomePlaced:
		return ConditionReasonAvailable
	case OutcomeCapacityExhausted:
		return ConditionReasonInsufficientCapacity
	case OutcomeStaleData:
		return ConditionReasonEvaluationIncomplete
	default:
		return ConditionReasonNoEligible
	}
}
