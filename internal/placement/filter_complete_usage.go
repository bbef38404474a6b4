package placement

import "github.com/hcpsched/hcpsched/internal/api"

// completeUsageFilter rejects a report whose usage lacks a counted resource, which
// would count as nothing used and make a busy MC look empty.
type completeUsageFilter struct{}

func (completeUsageFilter) Name() string { return "CompleteUsage" }

func (completeUsageFilter) check(j *judgement) (Reason, string) {
	if r, missing := missingUsage(j.status, j.e.cfg.Resources); missing {
		return ReasonStaleCapacityData, "observedResources.usage has no " + r
	}
	return "", ""
}

// missingUsage names the first counted resource that observedResources.usage lacks where
// the absence cannot mean zero. The MC's agent sums its HCPs' pods, so on an MC running
// no HCP it reports usage {}: absent is zero there, else a new MC could never be placed
// on. An MC that reports HCPs, ready or not, and no usage of a counted resource has a
// broken report. Capacity, for the metrics, applies the same rule.
func missingUsage(st *api.SchedulingStatus, resources []ResourceCost) (string, bool) {
	if !reportsHCPs(st) {
		return "", false
	}
	var usage api.ResourceList
	if st.ObservedResources != nil {
		usage = st.ObservedResources.Usage
	}
	for _, r := range resources {
		if _, ok := usage[r.Name]; !ok {
			return r.Name, true
		}
	}
	return "", false
}

// reportsHCPs says whether the MC's last mirrored report shows any hosted control plane.
func reportsHCPs(st *api.SchedulingStatus) bool {
	for _, ids := range [][]string{st.ReadyResourceIDs, st.NotReadyResourceIDs} {
		for _, id := range ids {
			if id != "" {
				return true
			}
		}
	}
	return false
}
