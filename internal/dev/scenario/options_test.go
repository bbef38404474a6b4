package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcpsched/hcpsched/internal/dev/frontend"
)

// The scenario runner and chaos create the kinds `make run` creates: most clusters
// SWIFT, every 5th non-SWIFT, every 8th single-replica.
func TestRunsCreateTheMixOfMakeRun(t *testing.T) {
	for name, o := range map[string]Options{
		"bench": DefaultOptions(), "chaos": DefaultChaosOptions().Options, "short chaos": ShortChaosOptions().Options,
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, frontend.Mix{SingleReplicaEvery: 8, NonSwiftEvery: 5}, o.mix())
			swift := 0
			for n := 1; n <= o.Clusters; n++ {
				if o.mix().Kind(n).Swift {
					swift++
				}
			}
			assert.Equal(t, o.Clusters-o.Clusters/5, swift)
		})
	}
	o := DefaultOptions()
	o.NonSwiftEvery = -1
	assert.ErrorContains(t, o.Validate(), "non-SWIFT")
}
