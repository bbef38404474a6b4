package placement

import "github.com/hcpsched/hcpsched/internal/api"

// schedulableFilter rejects a cordoned MC: one whose scheduling policy is not
// Schedulable.
type schedulableFilter struct{ staticFilter }

func (schedulableFilter) Name() string { return "Schedulable" }

func (schedulableFilter) check(j *judgement) (Reason, string) {
	if spec := j.mc.ManagementCluster.Properties.Spec; spec == nil || spec.SchedulingPolicy != api.Schedulable {
		return ReasonUnschedulable, "cordoned"
	}
	return "", ""
}
