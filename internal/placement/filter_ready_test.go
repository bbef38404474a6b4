package placement_test

import (
	"testing"

	"github.com/hcpsched/hcpsched/internal/placement"
)

func TestReadyFilter(t *testing.T) {
	checkFilter(t, placement.FilterReady, []filterCase{
		{name: "ready with a provision shard"},
		{name: "Ready is False", spec: mcSpec{notReady: true}, wantReason: placement.ReasonNotReady, wantDetail: "Ready is not True"},
		{name: "no Ready condition",
			mutate:     func(c *placement.Candidate) { c.ManagementCluster.Properties.Status.Conditions = nil },
			wantReason: placement.ReasonNotReady, wantDetail: "Ready is not True"},
		{name: "no status",
			mutate:     func(c *placement.Candidate) { c.ManagementCluster.Properties.Status = nil },
			wantReason: placement.ReasonNotReady, wantDetail: "Ready is not True"},
		{name: "ready without a provision shard", spec: mcSpec{noShard: true}, wantReason: placement.ReasonNotReady, wantDetail: "no Cluster Service provision shard"},
		{name: "policy and data are other filters' business", spec: mcSpec{unschedulable: true, noScheduling: true}},
	})
}
