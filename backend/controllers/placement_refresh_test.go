package controllers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/placement"
)

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
