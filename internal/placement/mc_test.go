package placement_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// The documents are written by other programs, so every countable quantity may reach
// math.MaxInt64 milli-units: charging the listed clusters on top must leave an MC more
// overcommitted, never wrap round to an MC with room for anything.
func TestAvailableDoesNotWrapRound(t *testing.T) {
	const most = "9223372036854775807m" // math.MaxInt64 milli-units, the most ParseQuantity accepts
	huge := exact()
	huge.Resources = append(huge.Resources, placement.ResourceCost{Name: "cpu", HA: resource.MustParse(most), SingleReplica: resource.MustParse(most)})
	tests := []struct {
		name    string
		cfg     placement.Config
		report  report
		cluster placement.Cluster
	}{
		{name: "the most usage the engine counts, and a not-ready cluster on top",
			cfg:     exact(),
			report:  report{ceiling: nicList("0"), usage: nicList(most), notReady: []string{hcp("starting")}},
			cluster: placement.Cluster{ResourceID: clusterID},
		},
		{name: "a per-HCP cost that large, charged twice",
			cfg:     huge,
			report:  report{ceiling: api.ResourceList{api.SwiftNIC: "30", "cpu": "0"}, pending: []string{hcp("a"), hcp("b")}},
			cluster: placement.Cluster{ResourceID: clusterID, Swift: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := placement.NewModel(tt.cfg, nil)
			c := reportCandidate("1", tt.report)
			for i, a := range available(t, m, c, nil) {
				ceiling, err := placement.ParseQuantity(tt.report.ceiling[m.Resources()[i]])
				require.NoError(t, err)
				assert.LessOrEqual(t, a, ceiling.MilliValue(), "%s: nothing is left beyond the ceiling", m.Resources()[i])
			}
			d := m.Decide(tt.cluster, m.NewMCs([]placement.Candidate{c}, nil), now)
			assert.Equal(t, placement.ReasonInsufficientCapacity, d.Verdict(0).Reason, d.Message())
			assert.Equal(t, placement.OutcomeCapacityExhausted, d.Outcome)
		})
	}
}
