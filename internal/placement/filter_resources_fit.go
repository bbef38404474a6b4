package placement

import "fmt"

// resourcesFitFilter rejects an MC that has less of some counted resource available
// than the cluster costs. An MC that already holds this cluster's reservation passes:
// the reservation is counted in what is available, so the cluster has paid there.
type resourcesFitFilter struct{}

func (resourcesFitFilter) Name() string { return "ResourcesFit" }

func (resourcesFitFilter) check(j *judgement) (Reason, string) {
	t := j.capacity()
	if t.holds {
		return "", ""
	}
	for _, r := range j.e.cfg.Resources {
		need := j.e.cost(r, j.e.cluster.SingleReplica)
		if t.available[r.Name] < need {
			return ReasonInsufficientCapacity, fmt.Sprintf("%s %s available, %s needed", r.Name, formatMilli(t.available[r.Name]), formatMilli(need))
		}
	}
	return "", ""
}
