package placement

import (
	"fmt"

	"github.com/hcpsched/hcpsched/internal/api"
)

// The ServiceProviderCluster's status.placement.conditions[CapacityAvailable] and its
// reasons: what placement says of a cluster that it has placed, or why not yet.
const (
	ConditionCapacityAvailable          = "CapacityAvailable"
	ConditionReasonAvailable            = "Available"
	ConditionReasonInsufficientCapacity = "InsufficientCapacity"
	ConditionReasonNoEligible           = "NoEligibleManagementCluster"
	ConditionReasonEvaluationIncomplete = "EvaluationIncomplete"
	// ConditionReasonClusterServiceIDUnmappable: the cluster has a clusterServiceID
	// Cluster Service does not resolve; hcpsched leaves it unplaced for good (until that
	// ID changes), PendingCleanup releases its reservations, and the metrics count it as
	// placement="unmappable".
	ConditionReasonClusterServiceIDUnmappable = "ClusterServiceIDUnmappable"
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

// UnmappableMessage is the condition message that records href as unmappable. It names
// the href, so that a cluster whose clusterServiceID changes is looked at again.
func UnmappableMessage(href string) string {
	return fmt.Sprintf("clusterServiceID %s does not resolve to a Cluster Service cluster (aro_hcp or clusters_mgmt); hcpsched neither places nor adopts it", href)
}

// UnmappableRecorded: the SPC already says that the cluster's current clusterServiceID
// cannot be mapped, so there is nothing to ask Cluster Service again.
func UnmappableRecorded(c *api.Cluster, spc *api.ServiceProviderCluster) bool {
	href := c.Properties.ServiceProvider().ClusterServiceID
	if href == "" || spc.Properties.Status == nil || spc.Properties.Status.Placement == nil {
		return false
	}
	cond := api.FindCondition(spc.Properties.Status.Placement.Conditions, ConditionCapacityAvailable)
	return cond != nil && cond.Reason == ConditionReasonClusterServiceIDUnmappable && cond.Message == UnmappableMessage(href)
}
