package controllers

import (
	"fmt"
	"sync"
	"testing"

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
