package placement

import (
	"fmt"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
)

// freshCapacityDataFilter rejects an MC whose capacity data the fleet marks as not
// current, or whose last report is missing, too old, or dated too far ahead to believe.
type freshCapacityDataFilter struct{}

func (freshCapacityDataFilter) Name() string { return "FreshCapacityData" }

func (freshCapacityDataFilter) check(j *judgement) (Reason, string) {
	st := j.status
	for _, cond := range []string{api.SchedulingConditionCapacityDataCurrent, api.SchedulingConditionScalingDataCurrent} {
		if !api.IsConditionTrue(st.Conditions, cond) {
			return ReasonStaleCapacityData, cond + " is not True"
		}
	}
	reported := st.ObservedResources.LastReportedAt
	if reported.IsZero() {
		return ReasonStaleCapacityData, "capacity never reported"
	}
	if ReportedInFuture(reported, j.e.now) {
		// Its age would read negative, so it would be fresh for ever. The time is in the
		// message although the condition is rewritten when the message changes: the fleet
		// does not mirror such reports, so it changes only when a foreign writer's does.
		return ReasonStaleCapacityData, fmt.Sprintf("observedResources.lastReportedAt %s is in the future", reported.UTC().Format(time.RFC3339))
	}
	if j.e.now.Sub(reported) > j.e.cfg.MaxCapacityAge {
		// No exact age: the message goes into the SPC condition, which is only rewritten
		// when it changes.
		return ReasonStaleCapacityData, fmt.Sprintf("capacity report older than %s", j.e.cfg.MaxCapacityAge)
	}
	return "", ""
}
