package controllertest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// Edit sets, or unsets, the value at a JSON path of a document. Path is dot-separated;
// a segment in brackets may hold dots: status.[aro.openshift.io/swift-nic].
type Edit struct {
	Path  string
	Value any
	unset bool
}

// Set is the edit that sets path to value (a Go value, as json.Marshal encodes it).
func Set(path string, value any) Edit { return Edit{Path: path, Value: value} }

// Unset is the edit that removes path.
func Unset(path string) Edit { return Edit{Path: path, unset: true} }

// Seed is one document a test stores: an ARO-HCP fixture (see fixtures/arohcp), changed
// by edits, in a container.
type Seed struct {
	Container string
	Fixture   string
	Edits     []Edit
}

// own is the test's own handle on a container of the store, past the data-flow recorder
// and any Option's wrapper: the test's own reads and writes are neither recorded nor
// hooked. Containers other than Resources and Fleet (a management cluster's kube-applier
// container) are reached on the memory store only.
func (k *Kit) own(t testing.TB, container string) database.Container {
	t.Helper()
	switch container {
	case api.ResourcesContainer:
		return k.Resources
	case api.FleetContainer:
		return k.Fleet
	}
	require.NotNil(t, k.Memory, "container %s: only a kit on its own memory store reaches containers beyond Resources and Fleet", container)
	return k.Memory.Container(container)
}

// Put stores seeds straight into the store, past the data-flow recorder and any Option's
// wrapper: the test's own writes are neither recorded nor hooked.
func (k *Kit) Put(t testing.TB, seeds ...Seed) {
	t.Helper()
	for _, s := range seeds {
		body := ApplyEdits(t, arohcp.Get(s.Fixture), s.Edits...)
		var envelope struct {
			PartitionKey string `json:"partitionKey"`
		}
		require.NoError(t, json.Unmarshal(body, &envelope))
		_, err := k.own(t, s.Container).Create(context.Background(), envelope.PartitionKey, body)
		require.NoError(t, err, "seeding %s", s.Fixture)
	}
}

// partitionKey is where a resource lives in a container: the subscription in Resources,
// the stamp in Fleet, and in any other (a management cluster's kube-applier container)
// the management cluster.
func partitionKey(t testing.TB, container string, rid *api.ResourceID) string {
	t.Helper()
	switch container {
	case api.ResourcesContainer:
		pk, err := api.ResourcesPartitionKey(rid)
		require.NoError(t, err)
		return pk
	case api.FleetContainer:
		pk, err := api.FleetPartitionKey(rid)
		require.NoError(t, err)
		return pk
	}
	mc, ok := rid.Ancestor(api.ManagementClusterResourceType)
	require.True(t, ok, "%s in container %s is not under a management cluster", rid, container)
	return api.KubeApplierPartitionKey(mc)
}

// Stored point-reads a document from the store, past every wrapper.
func (k *Kit) Stored(t testing.TB, container string, rid *api.ResourceID) database.Item {
	t.Helper()
	item, err := k.own(t, container).Get(context.Background(), partitionKey(t, container, rid), api.CosmosID(rid.String()))
	require.NoError(t, err, "reading %s from %s", rid, container)
	return item
}

// Exists reports whether a document is stored.
func (k *Kit) Exists(t testing.TB, container string, rid *api.ResourceID) bool {
	t.Helper()
	_, err := k.own(t, container).Get(context.Background(), partitionKey(t, container, rid), api.CosmosID(rid.String()))
	if errors.Is(err, database.ErrNotFound) {
		return false
	}
	require.NoError(t, err)
	return true
}

// ReplaceStored is another writer (the other binary, ARO-HCP) changing a stored document
// the way writers do, If-Match on what it read and one up on instanceVersion; a lost etag
// race is redone from a fresh read.
func (k *Kit) ReplaceStored(t testing.TB, container string, rid *api.ResourceID, edits ...Edit) database.Item {
	t.Helper()
	return replaceStored(t, k.own(t, container), partitionKey(t, container, rid), rid, edits...)
}

// replaceStored is ReplaceStored on a container of any store, for the helpers that play
// another component without a kit.
func replaceStored(t testing.TB, c database.Container, pk string, rid *api.ResourceID, edits ...Edit) database.Item {
	t.Helper()
	for range 100 {
		cur, err := c.Get(context.Background(), pk, api.CosmosID(rid.String()))
		require.NoError(t, err, "reading %s from %s", rid, c.Name())
		d, err := database.DecodeItem[api.RawProperties](cur)
		require.NoError(t, err)
		d.PrepareReplace()
		body, err := api.Encode(d)
		require.NoError(t, err)
		item, err := c.Replace(context.Background(), cur.PartitionKey, cur.ID, ApplyEdits(t, body, edits...), cur.ETag)
		if errors.Is(err, database.ErrPreconditionFailed) {
			continue
		}
		require.NoError(t, err)
		return item
	}
	t.Fatalf("%s kept changing", rid)
	return database.Item{}
}
