package controllertest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
)

func TestHooks(t *testing.T) {
	t.Parallel()
	hooks := &Hooks{}
	k := New(t, WithStore(hooks.Wrap))
	k.Put(t, Seed{Container: api.FleetContainer, Fixture: fixtureMC1})
	fleet := k.Container(api.FleetContainer)
	ctx := context.Background()
	read := func() *api.ManagementCluster {
		d, err := database.Get[api.ManagementClusterProperties](ctx, fleet, "1", mc1.String())
		require.NoError(t, err)
		return d
	}

	// The next replace loses its race: another writer is first.
	hooks.LoseNextReplace(t, k, api.FleetContainer, mc1, Set("properties.status.futureField", "theirs"))
	mine := read().DeepCopy()
	mine.Properties.Spec.SchedulingPolicy = api.Unschedulable
	_, err := database.Replace(ctx, fleet, mine)
	require.ErrorIs(t, err, database.ErrPreconditionFailed)
	hooks.RequireLostRace(t)

	// The hook ran once: the next replace, from a fresh read, goes through.
	mine = read().DeepCopy()
	mine.Properties.Spec.SchedulingPolicy = api.Unschedulable
	_, err = database.Replace(ctx, fleet, mine)
	require.NoError(t, err)
	scheduling, err := api.NewManagementClusterScheduling(mc1)
	require.NoError(t, err)
	_, err = database.Create(ctx, fleet, scheduling)
	require.NoError(t, err)

	replaces, creates := hooks.Writes()
	require.Len(t, replaces, 2)
	assert.ErrorIs(t, replaces[0].Err, database.ErrPreconditionFailed)
	assert.NoError(t, replaces[1].Err)
	assert.Equal(t, api.FleetContainer, replaces[1].Container)
	assert.Equal(t, 1, hooks.SuccessfulReplaces())
	require.Len(t, creates, 1)
	assert.Contains(t, string(creates[0].Body), api.ManagementClusterSchedulingResourceType)
	assert.Equal(t, 2, hooks.PointReads(api.FleetContainer), "the test's two reads; the data-flow recorder's own are not counted")
	assert.Zero(t, hooks.PointReads("Manifests-MC-1"))
}
