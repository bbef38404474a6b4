package placement_test

import (
	"testing"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

func TestCompleteUsageFilter(t *testing.T) {
	missing := "observedResources.usage has no cpu"
	cpuCeiling := api.ResourceList{"cpu": "64"}
	checkFilter(t, placement.FilterCompleteUsage, []filterCase{
		{name: "usage of the counted resource while HCPs run", spec: mcSpec{usage: "9", readyIDs: []string{otherCluster(1)}}},
		{name: "no swift NICs while HCPs run: clusters without VNet integration take none", spec: mcSpec{rawUsage: api.ResourceList{"cpu": "3"}, readyIDs: []string{otherCluster(1)}}},
		{name: "no cpu while HCPs are ready", spec: mcSpec{extraCeiling: cpuCeiling, rawUsage: api.ResourceList{api.SwiftNIC: "3"}, readyIDs: []string{otherCluster(1)}}, cfg: withCPU(),
			wantReason: placement.ReasonStaleCapacityData, wantDetail: missing},
		{name: "no cpu while HCPs are not ready", spec: mcSpec{extraCeiling: cpuCeiling, rawUsage: api.ResourceList{}, notReadyIDs: []string{otherCluster(2)}}, cfg: withCPU(),
			wantReason: placement.ReasonStaleCapacityData, wantDetail: missing},
		{name: "cpu requested but not yet used counts: requests are in the report", cfg: withCPU(),
			spec: mcSpec{extraCeiling: cpuCeiling, readyIDs: []string{otherCluster(1)}},
			mutate: func(c *placement.Candidate) {
				c.Scheduling.Properties.Status.ObservedResources.Requests = api.ResourceList{"cpu": "2"}
			}},
		{name: "no usage at all on an MC that reports no HCP, as the agent reports an empty MC", spec: mcSpec{rawUsage: api.ResourceList{}}},
		{name: "empty entries are no HCP", spec: mcSpec{rawUsage: api.ResourceList{}, readyIDs: []string{""}, notReadyIDs: []string{""}}},
		{name: "reservations are not reported HCPs", spec: mcSpec{rawUsage: api.ResourceList{}, pending: []string{otherCluster(3)}}},
		{name: "whether the usage counts is another filter's business", spec: mcSpec{rawUsage: api.ResourceList{api.SwiftNIC: "lots"}, readyIDs: []string{otherCluster(1)}}},
	})
}
