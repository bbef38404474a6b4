package controllertest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
)

// A write past the caches is in them once WaitForCaches returns.
func TestWaitForCaches(t *testing.T) {
	t.Parallel()
	k := New(t)
	k.Put(t, Seed{Container: api.FleetContainer, Fixture: fixtureMC1})
	mcs := k.Caches.ManagementClusters()
	k.Start(t)
	stored := k.ReplaceStored(t, api.FleetContainer, mc1, Set("properties.spec.schedulingPolicy", api.Unschedulable))
	k.WaitForCaches(t, Cached(mcs, api.FleetContainer, api.ManagementClusterResourceType))
	cached, err := mcs.Lister().Get(mc1.String())
	require.NoError(t, err)
	assert.Equal(t, stored.ETag, cached.ETag)
	assert.Equal(t, api.Unschedulable, cached.Properties.Spec.SchedulingPolicy)
}
