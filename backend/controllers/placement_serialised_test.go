package controllers

import (
	"fmt"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// Workers of one process that choose the same MC at once must not all send a write
// guarded by the same etag: all but one would get a 412, a wasted request and a requeue.
// The first reservation is held back until every worker has decided, so that each one
// decided from the scheduling document as it was before any reservation.
func TestWorkersThatChooseOneManagementClusterDoNotRaceEachOther(t *testing.T) {
	hooks := &controllertest.Hooks{}
	w := newWorld(t, controllertest.WithStore(hooks.Wrap))
	mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", "shard-1")
	controllertest.StoreScheduling(t, w.Fleet, mc, 300, 0)
	const workers = 6
	var clusters []*api.ResourceID
	for i := range workers {
		rid := clusterID(fmt.Sprintf("Burst-%d", i))
		controllertest.StoreCluster(t, w.Resources, newCluster(t, rid))
		controllertest.StoreSPC(t, w.Resources, rid)
		clusters = append(clusters, rid)
	}
	p := w.reconciler(t, placementDefinition())
	w.Start(t)

	decisions := func() uint64 {
		var m dto.Metric
		require.NoError(t, w.env.PlacementMetrics.decision.Write(&m))
		return m.GetHistogram().GetSampleCount()
	}
	hooks.BeforeNextReplace(func() {
		assert.Eventually(t, func() bool { return decisions() >= workers }, controllertest.WaitFor, controllertest.Tick,
			"every worker decides before the first reservation is written")
	})
	var wg sync.WaitGroup
	for _, rid := range clusters {
		wg.Go(func() {
			_, err := p.Reconcile(rid.Key())
			assert.NoError(t, err)
		})
	}
	wg.Wait()

	replaces, _ := hooks.Writes()
	for _, r := range replaces {
		assert.NotErrorIs(t, r.Err, database.ErrPreconditionFailed, "a write of %s lost an etag race to a worker of the same process", r.Container)
	}
	assert.Zero(t, w.attempts(placement.OutcomeConflict))
	assert.Equal(t, float64(workers), w.attempts(placement.OutcomePlaced))
	assert.Len(t, getScheduling(t, w.Fleet, mc).Properties.Status.PendingAssignedClusters, workers)
}

// A reservation that loses its etag race to another process (the fleet mirroring a
// capacity report) reads the scheduling document into the cache: the next decision on
// the MC is made from what the store holds, not from the copy the change feed has not
// replaced yet, and it reserves.
func TestLostReservationReadsTheSchedulingDocument(t *testing.T) {
	hooks := &controllertest.Hooks{}
	// The change feed is not polled again during the test: only the read can bring the
	// fleet's write to the cache.
	w := newWorld(t, controllertest.WithStore(hooks.Wrap), controllertest.WithPollInterval(time.Minute))
	mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", "shard-1")
	controllertest.StoreScheduling(t, w.Fleet, mc, 300, 0)
	rid := clusterID("Raced")
	controllertest.StoreCluster(t, w.Resources, newCluster(t, rid))
	controllertest.StoreSPC(t, w.Resources, rid)
	p := w.reconciler(t, placementDefinition())
	w.Start(t)

	// The fleet's mirror of a newer report lands just before the reservation.
	sched := api.SchedulingResourceID(mc)
	hooks.LoseNextReplace(t, w.Kit, api.FleetContainer, sched,
		controllertest.Set("properties.status.observedResources.usage", api.ResourceList{api.SwiftNIC: "7"}))
	_, err := p.Reconcile(rid.Key())
	require.NoError(t, err)
	hooks.RequireLostRace(t)
	assert.Equal(t, 1.0, w.attempts(placement.OutcomeConflict))
	assert.Equal(t, 1, hooks.PointReads(api.FleetContainer), "one read of the scheduling document")

	stored := getScheduling(t, w.Fleet, mc)
	cached, err := w.Caches.ManagementClusterSchedulings().Lister().Get(sched.String())
	require.NoError(t, err)
	assert.Equal(t, stored.ETag, cached.ETag, "the cache holds the stored version at once")

	_, err = p.Reconcile(rid.Key())
	require.NoError(t, err)
	assert.Equal(t, 1.0, w.attempts(placement.OutcomePlaced))
	assert.Equal(t, []string{rid.Key()}, getScheduling(t, w.Fleet, mc).Properties.Status.PendingAssignedClusters)
}
