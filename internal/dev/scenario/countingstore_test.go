package scenario

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
)

// The counting store counts every request, Patch included, by operation, status,
// container and the controller its ctx names, as the Cosmos client's policy does.
func TestCountingStoreCountsByControllerAndOperation(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, err := newCountingStore(memory.New(), reg)
	require.NoError(t, err)
	placement := database.WithCaller(context.Background(), "PlacementController")
	sync := database.WithCaller(context.Background(), "ManagementClusterPlacementSyncController")
	fleet, resources := s.Container("Fleet"), s.Container("Resources")

	created, err := fleet.Create(context.Background(), "p", []byte(`{"id":"a","partitionKey":"p","resourceType":"t"}`))
	require.NoError(t, err)
	_, err = fleet.Replace(placement, "p", "a", []byte(`{"id":"a","partitionKey":"p","resourceType":"t"}`), created.ETag)
	require.NoError(t, err)
	_, err = fleet.Replace(placement, "p", "a", []byte(`{"id":"a","partitionKey":"p","resourceType":"t"}`), created.ETag)
	require.ErrorIs(t, err, database.ErrPreconditionFailed)
	set := []database.PatchOperation{{Kind: database.PatchSet, Path: "/x", Value: []byte(`1`)}}
	_, err = fleet.Patch(sync, "p", "a", set, database.PatchOptions{})
	require.NoError(t, err)
	_, err = fleet.Patch(sync, "p", "a", set, database.PatchOptions{IfMatch: created.ETag})
	require.ErrorIs(t, err, database.ErrPreconditionFailed)
	_, err = resources.Patch(sync, "p", "missing", set, database.PatchOptions{})
	require.ErrorIs(t, err, database.ErrNotFound)
	_, err = resources.Get(context.Background(), "p", "missing")
	require.True(t, errors.Is(err, database.ErrNotFound))

	families, err := reg.Gather()
	require.NoError(t, err)
	c := countersOf(families)
	assert.Equal(t, map[string]float64{
		"none create":                 1,
		"none read":                   1,
		"PlacementController replace": 2,
		"ManagementClusterPlacementSyncController patch": 3,
	}, c.requestsByController)
	assert.Equal(t, map[string]float64{"PlacementController": 1, "ManagementClusterPlacementSyncController": 1}, c.conflictsByController)
	assert.Equal(t, map[string]float64{"create": 1, "read": 1, "replace": 2, "patch": 3}, c.byOperation)
	assert.Equal(t, map[string]float64{"200": 2, "201": 1, "404": 2, "412": 2}, c.byStatus)
	assert.Equal(t, 7.0, c.requests)

	containers := map[string]float64{}
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "cosmos_container" {
					containers[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	assert.Equal(t, map[string]float64{"Fleet": 5, "Resources": 2}, containers)
}
