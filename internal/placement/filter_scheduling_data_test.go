package placement_test

import (
	"testing"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

func TestSchedulingDataFilter(t *testing.T) {
	checkFilter(t, placement.FilterSchedulingData, []filterCase{
		{name: "a scheduling document with a ceiling for every counted resource"},
		{name: "no scheduling document", spec: mcSpec{noScheduling: true}, wantReason: placement.ReasonNoSchedulingData, wantDetail: "no scheduling document"},
		{name: "a scheduling document without status",
			mutate:     func(c *placement.Candidate) { c.Scheduling.Properties.Status = nil },
			wantReason: placement.ReasonNoSchedulingData, wantDetail: "no scheduling document"},
		{name: "no observed resources",
			mutate:     func(c *placement.Candidate) { c.Scheduling.Properties.Status.ObservedResources = nil },
			wantReason: placement.ReasonNoSchedulingData, wantDetail: "no scheduling document"},
		{name: "no scale ceiling",
			mutate:     func(c *placement.Candidate) { c.Scheduling.Properties.Status.ScaleCeiling = nil },
			wantReason: placement.ReasonNoSchedulingData, wantDetail: "no scheduling document"},
		{name: "no ceiling for the counted resource", spec: mcSpec{noCeiling: true},
			wantReason: placement.ReasonNoSchedulingData, wantDetail: "no scale ceiling for " + api.SwiftNIC},
		{name: "no ceiling for a second counted resource", cfg: withCPU(),
			wantReason: placement.ReasonNoSchedulingData, wantDetail: "no scale ceiling for cpu"},
		{name: "whether the ceiling counts is another filter's business", spec: mcSpec{badQuantity: true}},
		{name: "and so is how fresh the data is", spec: mcSpec{capacityStale: true, neverReported: true}},
	})
}
