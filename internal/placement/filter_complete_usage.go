package placement

import "github.com/hcpsched/hcpsched/internal/api"

// completeUsageFilter rejects a report that lacks a counted resource every hosted control
// plane consumes, which would count as nothing used and make a busy MC look empty.
type completeUsageFilter struct{ staticFilter }

func (completeUsageFilter) Name() string { return "CompleteUsage" }

func (completeUsageFilter) check(j *judgement) (Reason, string) {
	if r := j.mc.missingUsage; r != "" {
		return ReasonStaleCapacityData, "observedResources.usage has no " + r
	}
	return "", ""
}

// missingUsage names the first counted resource that the report lacks, in both usage and
// requests, where the absence cannot mean zero. Swift NICs can be absent: the pods of a
// control plane without VNet integration request none, so an MC running only such
// clusters reports none, as ARO-HCP's placement reads it. Every other counted resource
// (cpu, memory) is taken by every hosted control plane, so an MC that lists HCPs, ready
// or not, and reports none of it has a broken report. On an MC that lists no HCP absent
// is zero: the agent sums its HCPs' pods, and reports nothing for an empty MC. The
// metrics apply the same rule (MC.Available); NewMC works it out once.
func missingUsage(st *api.SchedulingStatus, m *Model) string {
	if !reportsHCPs(st) {
		return ""
	}
	var usage, requests api.ResourceList
	if st.ObservedResources != nil {
		usage, requests = st.ObservedResources.Usage, st.ObservedResources.Requests
	}
	for i, name := range m.names {
		if i == m.nic {
			continue
		}
		_, inUsage := usage[name]
		_, inRequests := requests[name]
		if !inUsage && !inRequests {
			return name
		}
	}
	return ""
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
