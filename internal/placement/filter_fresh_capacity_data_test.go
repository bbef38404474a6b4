package placement_test

import (
	"testing"
	"time"

	"github.com/hcpsched/hcpsched/internal/placement"
)

func TestFreshCapacityDataFilter(t *testing.T) {
	age := placement.DefaultMaxCapacityAge
	oneMinute := exact()
	oneMinute.MaxCapacityAge = time.Minute
	checkFilter(t, placement.FilterFreshCapacityData, []filterCase{
		{name: "reported now, both conditions True"},
		{name: "capacity data not current", spec: mcSpec{capacityStale: true},
			wantReason: placement.ReasonStaleCapacityData, wantDetail: "CapacityDataCurrent is not True"},
		{name: "scaling data not current", spec: mcSpec{scalingStale: true},
			wantReason: placement.ReasonStaleCapacityData, wantDetail: "ScalingDataCurrent is not True"},
		{name: "no conditions at all",
			mutate:     func(c *placement.Candidate) { c.Scheduling.Properties.Status.Conditions = nil },
			wantReason: placement.ReasonStaleCapacityData, wantDetail: "CapacityDataCurrent is not True"},
		{name: "the conditions are read before the report's date", spec: mcSpec{scalingStale: true, neverReported: true},
			wantReason: placement.ReasonStaleCapacityData, wantDetail: "ScalingDataCurrent is not True"},
		{name: "never reported", spec: mcSpec{neverReported: true},
			wantReason: placement.ReasonStaleCapacityData, wantDetail: "capacity never reported"},
		{name: "exactly the maximum age", spec: mcSpec{reportedAgo: age}},
		{name: "a second past the maximum age", spec: mcSpec{reportedAgo: age + time.Second},
			wantReason: placement.ReasonStaleCapacityData, wantDetail: "capacity report older than 5m0s"},
		{name: "the maximum age is the configured one", spec: mcSpec{reportedAgo: 2 * time.Minute}, cfg: &oneMinute,
			wantReason: placement.ReasonStaleCapacityData, wantDetail: "capacity report older than 1m0s"},
		{name: "ahead by the clock-skew allowance", spec: mcSpec{reportedAgo: -placement.ClockSkewAllowance}},
		{name: "ahead by more than the clock-skew allowance", spec: mcSpec{reportedAgo: -placement.ClockSkewAllowance - time.Second},
			wantReason: placement.ReasonStaleCapacityData, wantDetail: "observedResources.lastReportedAt 2026-11-30T12:01:01Z is in the future"},
		{name: "capacity is another filter's business", spec: mcSpec{usage: "300"}},
	})
}
