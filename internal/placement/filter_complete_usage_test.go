package placement_test

import (
	"testing"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

func TestCompleteUsageFilter(t *testing.T) {
	missing := "observedResources.usage has no " + api.SwiftNIC
	checkFilter(t, placement.FilterCompleteUsage, []filterCase{
		{name: "usage of the counted resource while HCPs run", spec: mcSpec{usage: "9", readyIDs: []string{otherCluster(1)}}},
		{name: "no usage of it while HCPs are ready", spec: mcSpec{rawUsage: api.ResourceList{"cpu": "3"}, readyIDs: []string{otherCluster(1)}},
			wantReason: placement.ReasonStaleCapacityData, wantDetail: missing},
		{name: "no usage of it while HCPs are not ready", spec: mcSpec{rawUsage: api.ResourceList{}, notReadyIDs: []string{otherCluster(2)}},
			wantReason: placement.ReasonStaleCapacityData, wantDetail: missing},
		{name: "no usage at all on an MC that reports no HCP, as the agent reports an empty MC", spec: mcSpec{rawUsage: api.ResourceList{}}},
		{name: "empty entries are no HCP", spec: mcSpec{rawUsage: api.ResourceList{}, readyIDs: []string{""}, notReadyIDs: []string{""}}},
		{name: "reservations are not reported HCPs", spec: mcSpec{rawUsage: api.ResourceList{}, pending: []string{otherCluster(3)}}},
		{name: "no usage of a second counted resource", spec: mcSpec{readyIDs: []string{otherCluster(1)}}, cfg: withCPU(),
			wantReason: placement.ReasonStaleCapacityData, wantDetail: "observedResources.usage has no cpu"},
		{name: "whether the usage counts is another filter's business", spec: mcSpec{rawUsage: api.ResourceList{api.SwiftNIC: "lots"}, readyIDs: []string{otherCluster(1)}}},
	})
}
