package scenario

import (
	"slices"
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

// A lone backend replica owns every key: it runs unsharded, as an elected leader would,
// so the bench's one-replica figures carry no lease requests.
func TestBackendArgsShardOnlyWithSeveralReplicas(t *testing.T) {
	for _, tt := range []struct {
		backends int
		sharded  bool
	}{{1, false}, {2, true}} {
		o := DefaultOptions()
		o.Backends = tt.backends
		args := backendArgs(o, "http://127.0.0.1:1", "key", "http://127.0.0.1:2", "127.0.0.1:0")
		assert.Equal(t, !tt.sharded, slices.Contains(args, "--shards=0"), "%d backends", tt.backends)
		assert.Contains(t, args, "--leader-elect=false")
	}
}
