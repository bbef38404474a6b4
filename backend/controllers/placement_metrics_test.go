package controllers

import (
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// latencySamples reads backend_placement_latency_seconds: how many clusters it observed
// and the sum of their latencies.
func latencySamples(t *testing.T, m *PlacementMetrics) (uint64, float64) {
	t.Helper()
	var out dto.Metric
	require.NoError(t, m.latency.Write(&out))
	return out.GetHistogram().GetSampleCount(), out.GetHistogram().GetSampleSum()
}

// The placement latency histogram observes each cluster this process places once, from
// the cluster's creation to the placement write: not the attempts that lost a race, not
// a reconcile of a cluster already placed, and not a cluster without a creation time. A
// cluster whose intent was withdrawn (its MC vanished before the create) is placed, and
// observed, again.
func TestPlacementLatency(t *testing.T) {
	const age = 90 * time.Second
	tests := []struct {
		name string
		// placed says the SPC already has an intent (a replay of a placed cluster).
		placed bool
		// contended makes the first placement write lose to another writer of the SPC.
		contended bool
		// noCreatedAt stores the cluster without systemData.createdAt.
		noCreatedAt bool
		// replacing leaves the SPC as a withdrawn intent does: no intent, CapacityAvailable
		// False/Replacing. Placing it again is a placement, observed from the creation.
		replacing bool
		wantCount uint64
	}{
		{name: "placed once", wantCount: 1},
		{name: "placed after losing the SPC write once", contended: true, wantCount: 1},
		{name: "already placed", placed: true, wantCount: 0},
		{name: "no creation time", noCreatedAt: true, wantCount: 0},
		{name: "placed again after its management cluster vanished", replacing: true, wantCount: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			now := time.Now().UTC()
			w.env.Now = func() time.Time { return now }
			var contended *contendedContainer
			if tt.contended {
				contended = w.contend()
			}
			mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
			controllertest.StoreScheduling(t, w.Fleet, mc, 30, 0)
			rid := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("Timed"), func(c *api.Cluster) {
				if tt.noCreatedAt {
					c.Properties.SystemData = nil
					return
				}
				c.Properties.SystemData.CreatedAt = now.Add(-age)
			}))
			controllertest.StoreSPC(t, w.Resources, rid, func(s *api.ServiceProviderCluster) {
				if tt.placed {
					s.Properties.Spec.ManagementClusterResourceID = mc.String()
				}
				if tt.replacing {
					setCapacityCondition(s, api.ConditionFalse, ReasonReplacing, "placing again", now)
				}
			})
			p := w.reconciler(t, placementDefinition())
			w.Start(t)

			_, err := p.Reconcile(rid.Key())
			require.NoError(t, err)
			if tt.contended {
				// The other writer's SPC reaches the cache; the next look places the cluster.
				replaced, _ := contended.conflicts(spcItemID(rid))
				require.Equal(t, 1, replaced, "the first placement write lost")
				n, _ := latencySamples(t, w.env.PlacementMetrics)
				require.Zero(t, n, "an attempt that lost the write observes nothing")
				stored := controllertest.GetSPC(t, w.Resources, rid)
				require.Eventually(t, func() bool {
					cached, err := w.Caches.ServiceProviderClusters().Lister().Get(stored.ResourceID)
					return err == nil && cached.ETag == stored.ETag
				}, waitFor, tick)
				res, err := p.Reconcile(rid.Key())
				require.NoError(t, err)
				require.Equal(t, controller.Result{}, res)
			}
			if !tt.placed {
				require.Equal(t, mc.String(), controllertest.GetSPC(t, w.Resources, rid).Properties.IntendedManagementCluster(), "placed")
			}
			// A second look at a placed cluster is a replay: nothing more is observed.
			_, err = p.Reconcile(rid.Key())
			require.NoError(t, err)

			n, sum := latencySamples(t, w.env.PlacementMetrics)
			assert.Equal(t, tt.wantCount, n)
			if tt.wantCount == 1 {
				assert.InDelta(t, age.Seconds(), sum, 1e-3, "from systemData.createdAt to the placement time")
				assert.Equal(t, 1.0, w.attempts(placement.OutcomePlaced))
			}
		})
	}
}

// The buckets cover a placement within 10 ms of the create up to one an hour late, each
// bound an honest step above the last.
func TestPlacementLatencyBuckets(t *testing.T) {
	buckets := placementLatencyBuckets()
	require.NotEmpty(t, buckets)
	assert.InDelta(t, 0.01, buckets[0], 1e-12)
	assert.GreaterOrEqual(t, buckets[len(buckets)-1], time.Hour.Seconds())
	for i := 1; i < len(buckets); i++ {
		assert.Greater(t, buckets[i], buckets[i-1])
		assert.LessOrEqual(t, buckets[i]/buckets[i-1], 3.0, "no bucket more than 3x the one below (%v)", buckets)
	}
}
