package informers_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// OnAssume hooks hear of every Assumed write at once, by the document's cache key, and
// the listers already show the write when they do: whoever keeps state derived from the
// listers (the placement snapshot) reads the write it is told of, not the version before.
func TestOnAssumeHearsEveryAssumedWrite(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	factory, err := informers.NewFactory(store, informers.Options{Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	schedulings := informers.NewCaches(factory).ManagementClusterSchedulings()
	lister := schedulings.Lister()
	c := store.Container(api.FleetContainer)
	created, err := database.Create(ctx, c, schedulingDoc("Stamp-1"))
	require.NoError(t, err)

	type heard struct {
		hook, key string
		pending   []string
	}
	var got []heard
	hook := func(name string) func(key string) {
		return func(key string) {
			d, err := lister.Get(key)
			var pending []string
			if assert.NoError(t, err, "the lister holds the document the hook is told of") {
				pending = d.Properties.Status.PendingAssignedClusters
			}
			got = append(got, heard{hook: name, key: key, pending: pending})
		}
	}
	schedulings.OnAssume(hook("first"))

	const cluster = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1"
	reserve := created.DeepCopy()
	reserve.Properties.Status.PendingAssignedClusters = []string{cluster}
	written, err := database.Replace(ctx, c, reserve)
	require.NoError(t, err)
	schedulings.Assume(written)
	key := strings.ToLower(written.ResourceID)
	assert.Equal(t, []heard{{hook: "first", key: key, pending: []string{cluster}}}, got, "told at once, by cache key, after the lister shows the write")

	// A hook registered later hears the writes from then on, after the earlier hooks.
	got = nil
	schedulings.OnAssume(hook("second"))
	release := written.DeepCopy()
	release.Properties.Status.PendingAssignedClusters = nil
	released, err := database.Replace(ctx, c, release)
	require.NoError(t, err)
	schedulings.Assume(released)
	assert.Equal(t, []heard{{hook: "first", key: key}, {hook: "second", key: key}}, got)

	// A document without a resource ID cannot be keyed: nothing is assumed, no hook told.
	got = nil
	anonymous := released.DeepCopy()
	anonymous.ResourceID = ""
	anonymous.Metadata().ResourceID = ""
	schedulings.Assume(anonymous)
	assert.Empty(t, got)
}
