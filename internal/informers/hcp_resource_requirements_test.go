package informers_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// The requirements document ARO-HCP's fleet writes into the Fleet container reaches its
// lister, beside the other Fleet types the same pump feeds, and follows its updates and
// its soft delete.
func TestHCPResourceRequirementsReachTheirLister(t *testing.T) {
	store := memory.New()
	factory, err := informers.NewFactory(store, informers.Options{PollInterval: pollInterval, RelistPeriod: time.Hour, Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	caches := informers.NewCaches(factory)
	requirements := caches.HCPResourceRequirements()
	assert.Same(t, requirements.SharedIndexInformer, caches.HCPResourceRequirements().SharedIndexInformer, "one informer however often it is asked for")
	schedulings := caches.ManagementClusterSchedulings()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	factory.Start(ctx)
	require.True(t, factory.WaitForCacheSync(ctx))

	c := store.Container(api.FleetContainer)
	const within, tick = 5 * time.Second, 10 * time.Millisecond
	lister := requirements.Lister()

	// Written as ARO-HCP stores it, not through hcpsched's own builder.
	_, err = c.Create(ctx, api.HCPResourceRequirementsDefaultName, arohcp.Get("constructed/fleet-hcpresourcerequirements-default.json"))
	require.NoError(t, err)
	_, err = database.Create(ctx, c, schedulingDoc("1"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := lister.Get(api.HCPResourceRequirementsDefaultID); return err == nil }, within, tick, "create")
	require.Eventually(t, func() bool { return len(schedulings.Lister().List()) == 1 }, within, tick)

	got, err := lister.Get(api.HCPResourceRequirementsDefaultID)
	require.NoError(t, err)
	require.NotNil(t, got.Properties.Status)
	assert.Equal(t, 2, got.Properties.Status.SampleSize)
	assert.Equal(t, "3630m", got.Properties.Status.AverageRequests["cpu"])
	assert.True(t, api.IsConditionTrue(got.Properties.Status.Conditions, api.HCPResourceRequirementsConditionDataCurrent))
	assert.Len(t, lister.List(), 1, "the scheduling document in the same container is not a requirements document")

	// The fleet's next computation found nothing to average.
	update := got.DeepCopy()
	update.Properties.Status.SampleSize = 0
	update.Properties.Status.AverageUsage, update.Properties.Status.AverageRequests = nil, nil
	api.SetCondition(&update.Properties.Status.Conditions, api.Condition{
		Type: api.HCPResourceRequirementsConditionDataCurrent, Status: api.ConditionFalse, Reason: api.HCPResourceRequirementsReasonNoData,
	}, time.Now())
	updated, err := database.Replace(ctx, c, update)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		d, err := lister.Get(api.HCPResourceRequirementsDefaultID)
		return err == nil && d.Properties.Status.SampleSize == 0 && d.Properties.Status.AverageRequests == nil
	}, within, tick, "update")

	item, err := c.Get(ctx, updated.PartitionKey, updated.ID)
	require.NoError(t, err)
	_, err = database.SoftDelete(ctx, c, item, time.Now())
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := lister.Get(api.HCPResourceRequirementsDefaultID); return isNotFound(err) }, within, tick, "soft delete")
}
