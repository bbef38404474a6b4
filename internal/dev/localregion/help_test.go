package localregion

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// The sizes --help states follow the code: placement's configuration and the region's
// options, not figures typed into the text.
func TestSizesFollowTheCode(t *testing.T) {
	o := DefaultOptions()
	defaults := Sizes(o)
	assert.Contains(t, defaults, "16 swift NICs per node")
	assert.Contains(t, defaults, "48 swift NICs per management cluster (stamp 1: 16)")
	assert.Regexp(t, `(?m)^  SWIFT HA +3 swift NICs +3 swift NICs, 1500m cpu, 6Gi memory$`, defaults)
	assert.Regexp(t, `(?m)^  SWIFT single-replica +1 swift NIC +1 swift NIC, 500m cpu, 2Gi memory$`, defaults)
	assert.Regexp(t, `(?m)^  non-SWIFT HA +0 swift NICs +1500m cpu, 6Gi memory$`, defaults)
	assert.Regexp(t, `(?m)^  non-SWIFT single-replica +0 swift NICs +500m cpu, 2Gi memory$`, defaults)
	assert.Contains(t, defaults, "Placement's defaults do not count cpu or memory")
	assert.Contains(t, defaults, "28 SWIFT HA, 4 SWIFT single-replica, 7 non-SWIFT HA, 1 non-SWIFT single-replica")

	cfg := placement.DefaultConfig()
	cfg.Resources[0].HA = resource.MustParse("5")
	cfg.Resources = append(cfg.Resources, placement.ResourceCost{Name: "cpu", HA: resource.MustParse("2"), SingleReplica: resource.MustParse("500m")})
	o.Nodes, o.Clusters = 4, 5
	changed := sizes(o, cfg)
	assert.Contains(t, changed, "--placement-resource-costs="+api.SwiftNIC+"=5/1,cpu=2/500m")
	assert.Contains(t, changed, "64 swift NICs per management cluster")
	assert.Regexp(t, `(?m)^  SWIFT HA +5 swift NICs, 2 cpu +3 swift NICs`, changed)
	assert.Regexp(t, `(?m)^  non-SWIFT single-replica +0 swift NICs, 500m cpu +500m cpu`, changed)
	assert.Contains(t, changed, "do not count memory:")
	assert.Contains(t, changed, "4 SWIFT HA, 0 SWIFT single-replica, 1 non-SWIFT HA, 0 non-SWIFT single-replica")
}
