package docwrite

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

func stored(t *testing.T) (database.Container, *api.ManagementCluster) {
	t.Helper()
	c := memory.New().Container(api.FleetContainer)
	item, err := c.Create(context.Background(), "1", arohcp.Get("constructed/fleet-managementcluster-1-ready-schedulable.json"))
	require.NoError(t, err)
	d, err := database.DecodeItem[api.ManagementClusterProperties](item)
	require.NoError(t, err)
	return c, d
}

func TestReplaceIfChanged(t *testing.T) {
	c, read := stored(t)

	same := read.DeepCopy()
	same.Properties.Spec.SchedulingPolicy = api.Schedulable // the value it already has
	outcome, err := ReplaceIfChanged(t.Context(), c, read, same)
	require.NoError(t, err)
	assert.Equal(t, Unchanged, outcome)

	changed := read.DeepCopy()
	changed.Properties.Spec.SchedulingPolicy = api.Unschedulable
	outcome, err = ReplaceIfChanged(t.Context(), c, read, changed)
	require.NoError(t, err)
	assert.Equal(t, Written, outcome)
	now, err := database.Get[api.ManagementClusterProperties](t.Context(), c, "1", read.ResourceID)
	require.NoError(t, err)
	assert.Equal(t, api.Unschedulable, now.Properties.Spec.SchedulingPolicy)
	assert.Equal(t, read.InstanceVersion()+1, now.InstanceVersion())

	// The same read is stale now.
	again := read.DeepCopy()
	again.Properties.Spec.SchedulingPolicy = "Draining"
	outcome, err = ReplaceIfChanged(t.Context(), c, read, again)
	require.NoError(t, err)
	assert.Equal(t, Conflicted, outcome)
}

type failing struct{ database.Container }

func (failing) Replace(context.Context, string, string, []byte, string) (database.Item, error) {
	return database.Item{}, errors.New("connection reset")
}

func TestReplaceIfChangedReportsOtherErrors(t *testing.T) {
	c, read := stored(t)
	changed := read.DeepCopy()
	changed.Properties.Spec.SchedulingPolicy = api.Unschedulable
	_, err := ReplaceIfChanged(t.Context(), failing{c}, read, changed)
	assert.ErrorContains(t, err, "replacing "+read.ResourceID+": connection reset")
}
