package placement_test

import (
	"testing"

	"github.com/hcpsched/hcpsched/internal/placement"
)

func TestSchedulableFilter(t *testing.T) {
	checkFilter(t, placement.FilterSchedulable, []filterCase{
		{name: "schedulable"},
		{name: "cordoned", spec: mcSpec{unschedulable: true}, wantReason: placement.ReasonUnschedulable, wantDetail: "cordoned"},
		{name: "an MC without a spec has no policy: cordoned",
			mutate:     func(c *placement.Candidate) { c.ManagementCluster.Properties.Spec = nil },
			wantReason: placement.ReasonUnschedulable, wantDetail: "cordoned"},
		{name: "a policy it does not know is not Schedulable",
			mutate:     func(c *placement.Candidate) { c.ManagementCluster.Properties.Spec.SchedulingPolicy = "Draining" },
			wantReason: placement.ReasonUnschedulable, wantDetail: "cordoned"},
		{name: "health and data are other filters' business", spec: mcSpec{notReady: true, noScheduling: true}},
	})
}
