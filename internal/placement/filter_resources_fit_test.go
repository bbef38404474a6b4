package placement_test

import (
	"strings"
	"testing"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

func TestResourcesFitFilter(t *testing.T) {
	singleReplica := swift(func(id string) bool { return strings.Contains(id, "other-1") })
	checkFilter(t, placement.FilterResourcesFit, []filterCase{
		{name: "room to spare", spec: mcSpec{ceiling: "30", usage: "9"}},
		{name: "exactly enough", spec: mcSpec{ceiling: "30", usage: "27"}},
		{name: "an HA HCP does not fit in 2", spec: mcSpec{ceiling: "30", usage: "28"},
			wantReason: placement.ReasonInsufficientCapacity, wantDetail: api.SwiftNIC + " 2 available, 3 needed"},
		{name: "a single-replica HCP fits in 1", spec: mcSpec{ceiling: "4", usage: "3"}, singleReplica: true},
		{name: "nor in 0", spec: mcSpec{ceiling: "3", usage: "3"}, singleReplica: true,
			wantReason: placement.ReasonInsufficientCapacity, wantDetail: api.SwiftNIC + " 0 available, 1 needed"},
		{name: "not-ready HCPs and reservations hold their cost", spec: mcSpec{ceiling: "9", notReadyIDs: []string{otherCluster(2)}, pending: []string{otherCluster(3)}}},
		{name: "one more reservation and nothing is left", spec: mcSpec{ceiling: "9", notReadyIDs: []string{otherCluster(2)}, pending: []string{otherCluster(3), otherCluster(4)}},
			wantReason: placement.ReasonInsufficientCapacity, wantDetail: api.SwiftNIC + " 0 available, 3 needed"},
		{name: "a single-replica reservation holds 1", spec: mcSpec{ceiling: "4", pending: []string{otherCluster(1)}}, lookup: singleReplica},
		{name: "overcommitted reads negative", spec: mcSpec{ceiling: "3", usage: "3", pending: []string{otherCluster(9)}},
			wantReason: placement.ReasonInsufficientCapacity, wantDetail: api.SwiftNIC + " -3 available, 3 needed"},
		{name: "the cluster's own reservation is already paid for", spec: mcSpec{ceiling: "3", pending: []string{strings.ToUpper(clusterID)}}},
		{name: "every counted resource must fit", cfg: withCPU(),
			spec:       mcSpec{ceiling: "100", extraCeiling: api.ResourceList{"cpu": "4"}, extraUsage: api.ResourceList{"cpu": "3500m"}},
			wantReason: placement.ReasonInsufficientCapacity, wantDetail: "cpu 500m available, 2 needed"},
	})
}
