package placement

import "fmt"

// resourcesFitFilter rejects an MC that has less of some counted resource available
// than the cluster costs. An MC that already holds this cluster's reservation passes:
// the reservation is counted in what is available, so the cluster has paid there.
type resourcesFitFilter struct{}

func (resourcesFitFilter) Name() string { return "ResourcesFit" }
func (resourcesFitFilter) static() bool { return false }

func (resourcesFitFilter) check(j *judgement) (Reason, string) {
	if j.shortOf = j.short(); j.shortOf >= 0 {
		// The detail is formatted only when asked for (Verdict.Detail): a decision over a
		// thousand full MCs would otherwise allocate a thousand strings.
		return ReasonInsufficientCapacity, ""
	}
	return "", ""
}

// shortDetail explains which resource is short, and by how much.
func shortDetail(mc *MC, i int, need int64) string {
	return fmt.Sprintf("%s %s available, %s needed", mc.model.names[i], FormatMilli(mc.available[i]), FormatMilli(need))
}

// short is the first counted resource the MC has less of than the cluster costs, -1 when
// the cluster fits (or has paid there already).
func (j *judgement) short() int {
	if j.mc.holds(j.key, j.hash) {
		return -1
	}
	for i, need := range j.cost {
		if j.mc.available[i] < need {
			return i
		}
	}
	return -1
}
