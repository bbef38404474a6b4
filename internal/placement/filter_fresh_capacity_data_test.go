package placement_test

import (
	"math"
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
		// 2^64 ns (about 584.5 years) either side of now is now again in wrapped Unix
		// nanoseconds; such a report must not read as just taken.
		{name: "dated 2^64 ns ahead", mutate: reportedAt(wrapAround),
			wantReason: placement.ReasonStaleCapacityData, wantDetail: "observedResources.lastReportedAt " + wrapAround.UTC().Format(time.RFC3339) + " is in the future"},
		{name: "dated 2^64 ns ago", mutate: reportedAt(wrapAroundAgo),
			wantReason: placement.ReasonStaleCapacityData, wantDetail: "capacity report older than 5m0s"},
		{name: "dated before 1970", mutate: reportedAt(time.Date(1969, 12, 31, 23, 59, 0, 0, time.UTC)),
			wantReason: placement.ReasonStaleCapacityData, wantDetail: "capacity report older than 5m0s"},
		{name: "dated after 2262, where Unix nanoseconds end", mutate: reportedAt(time.Date(2263, 1, 1, 0, 0, 0, 0, time.UTC)),
			wantReason: placement.ReasonStaleCapacityData, wantDetail: "observedResources.lastReportedAt 2263-01-01T00:00:00Z is in the future"},
		{name: "capacity is another filter's business", spec: mcSpec{usage: "300"}},
	})
}

// wrapAround and wrapAroundAgo lie 2^64 ns from now.
var (
	wrapAround    = now.Add(math.MaxInt64).Add(math.MaxInt64).Add(2)
	wrapAroundAgo = now.Add(math.MinInt64).Add(math.MinInt64)
)

func reportedAt(at time.Time) func(*placement.Candidate) {
	return func(c *placement.Candidate) { c.Scheduling.Properties.Status.ObservedResources.LastReportedAt = at }
}
