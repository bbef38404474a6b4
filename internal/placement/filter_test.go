package placement_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/internal/placement"
)

// filterCase is one row of a filter's table: an MC, the cluster being placed, and what
// the filter alone says of the MC.
type filterCase struct {
	name string
	spec mcSpec
	// mutate changes the candidate after it is built, for documents mcSpec cannot say.
	mutate func(*placement.Candidate)
	// singleReplica places a single-replica cluster instead of an HA one.
	singleReplica bool
	// cfg is exact() unless set.
	cfg        *placement.Config
	lookup     placement.ClusterLookup
	wantReason placement.Reason
	wantDetail string
}

// checkFilter runs f alone over every case.
func checkFilter(t *testing.T, f placement.Filter, cases []filterCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if tt.spec.stamp == "" {
				tt.spec.stamp = "1"
			}
			c := candidate(tt.spec)
			if tt.mutate != nil {
				tt.mutate(&c)
			}
			cfg := exact()
			if tt.cfg != nil {
				cfg = *tt.cfg
			}
			reason, detail := placement.Check(f, placement.Cluster{ResourceID: clusterID, Swift: true, SingleReplica: tt.singleReplica}, c, cfg, tt.lookup, now)
			assert.Equal(t, tt.wantReason, reason)
			assert.Equal(t, tt.wantDetail, detail)
		})
	}
}

// withCPU counts cpu as a second resource, 2 for an HA HCP and 1 for a single-replica one.
func withCPU() *placement.Config {
	cfg := exact()
	cfg.Resources = append(cfg.Resources, placement.ResourceCost{Name: "cpu", HA: resource.MustParse("2"), SingleReplica: resource.MustParse("1")})
	return &cfg
}

func TestFilterNamesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range placement.Filters() {
		require.NotEmpty(t, f.Name())
		assert.False(t, seen[f.Name()], "%s is named twice", f.Name())
		seen[f.Name()] = true
	}
}
