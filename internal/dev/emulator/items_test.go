package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var quotedEtag = regexp.MustCompile(`^"[0-9a-f-]{36}"$`)

// Problem 1: missing, duplicate and stale-etag operations answer 404, 409
// and 412 with Cosmos's JSON error body, never 500.
func TestItemErrors(t *testing.T) {
	client := sharedClient(t)
	db, c := newDatabaseAndContainer(t, client, containerSpec{})
	pk := azcosmos.NewPartitionKeyString("p")
	existing := create(t, c, doc{ID: "exists", PK: "p"})
	stale := azcore.ETag(`"00000000-0000-0000-0000-000000000000"`)
	var patch azcosmos.PatchOperations
	patch.AppendSet("/value", 1)

	tests := []struct {
		name   string
		call   func(ctx context.Context) error
		status int
		code   string
	}{
		{"read missing", func(ctx context.Context) error {
			_, err := c.ReadItem(ctx, pk, "missing", nil)
			return err
		}, http.StatusNotFound, "NotFound"},
		{"read in another partition", func(ctx context.Context) error {
			_, err := c.ReadItem(ctx, azcosmos.NewPartitionKeyString("other"), "exists", nil)
			return err
		}, http.StatusNotFound, "NotFound"},
		{"replace missing", func(ctx context.Context) error {
			_, err := c.ReplaceItem(ctx, pk, "missing", mustJSON(t, doc{ID: "missing", PK: "p"}), nil)
			return err
		}, http.StatusNotFound, "NotFound"},
		{"delete missing", func(ctx context.Context) error {
			_, err := c.DeleteItem(ctx, pk, "missing", nil)
			return err
		}, http.StatusNotFound, "NotFound"},
		{"patch missing", func(ctx context.Context) error {
			_, err := c.PatchItem(ctx, pk, "missing", patch, nil)
			return err
		}, http.StatusNotFound, "NotFound"},
		{"create existing", func(ctx context.Context) error {
			_, err := c.CreateItem(ctx, pk, mustJSON(t, doc{ID: "exists", PK: "p"}), nil)
			return err
		}, http.StatusConflict, "Conflict"},
		{"replace with stale If-Match", func(ctx context.Context) error {
			_, err := c.ReplaceItem(ctx, pk, "exists", mustJSON(t, doc{ID: "exists", PK: "p", Value: 9}), &azcosmos.ItemOptions{IfMatchEtag: &stale})
			return err
		}, http.StatusPreconditionFailed, "PreconditionFailed"},
		{"delete with stale If-Match", func(ctx context.Context) error {
			_, err := c.DeleteItem(ctx, pk, "exists", &azcosmos.ItemOptions{IfMatchEtag: &stale})
			return err
		}, http.StatusPreconditionFailed, "PreconditionFailed"},
		{"patch with stale If-Match", func(ctx context.Context) error {
			_, err := c.PatchItem(ctx, pk, "exists", patch, &azcosmos.ItemOptions{IfMatchEtag: &stale})
			return err
		}, http.StatusPreconditionFailed, "PreconditionFailed"},
		{"upsert with stale If-Match", func(ctx context.Context) error {
			_, err := c.UpsertItem(ctx, pk, mustJSON(t, doc{ID: "exists", PK: "p"}), &azcosmos.ItemOptions{IfMatchEtag: &stale})
			return err
		}, http.StatusPreconditionFailed, "PreconditionFailed"},
		{"body partition key differs from the header", func(ctx context.Context) error {
			_, err := c.CreateItem(ctx, pk, mustJSON(t, doc{ID: "x", PK: "elsewhere"}), nil)
			return err
		}, http.StatusBadRequest, "BadRequest"},
		{"create database that exists", func(ctx context.Context) error {
			_, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: db.ID()}, nil)
			return err
		}, http.StatusConflict, "Conflict"},
		{"create container that exists", func(ctx context.Context) error {
			_, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{
				ID:                     c.ID(),
				PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
			}, nil)
			return err
		}, http.StatusConflict, "Conflict"},
		{"read from a missing container", func(ctx context.Context) error {
			missing, err := client.NewContainer(db.ID(), "missing")
			require.NoError(t, err)
			_, err = missing.ReadItem(ctx, pk, "exists", nil)
			return err
		}, http.StatusNotFound, "NotFound"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := asCosmosError(t, tt.call(ctxT(t)))
			assert.Equal(t, tt.status, got.StatusCode)
			assert.Equal(t, tt.code, got.Code)
			assert.NotEmpty(t, got.Message)
		})
	}

	// None of the failed writes changed the item.
	resp, err := c.ReadItem(ctxT(t), pk, "exists", nil)
	require.NoError(t, err)
	assert.Equal(t, existing.ETag, resp.ETag)
}

// Every write returns a fresh quoted _etag (body and ETag header) and _ts;
// If-Match with the current etag succeeds on replace, patch and delete.
func TestWritesReturnFreshEtags(t *testing.T) {
	client := sharedClient(t)
	c := newContainer(t, client, containerSpec{})
	ctx := ctxT(t)
	pk := azcosmos.NewPartitionKeyString("p")
	withBody := &azcosmos.ItemOptions{EnableContentResponseOnWrite: true}

	created, err := c.CreateItem(ctx, pk, mustJSON(t, doc{ID: "a", PK: "p"}), withBody)
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, created.RawResponse.StatusCode)
	assert.InDelta(t, 5.7, created.RequestCharge, 1e-4, "a small item's write charge (charge_test.go)")
	createdDoc := decode(t, created.Value)
	assert.Regexp(t, quotedEtag, createdDoc.ETag)
	assert.Equal(t, azcore.ETag(createdDoc.ETag), created.ETag)
	assert.NotZero(t, createdDoc.TS)

	etag := created.ETag
	replaced, err := c.ReplaceItem(ctx, pk, "a", mustJSON(t, doc{ID: "a", PK: "p", Value: 1}),
		&azcosmos.ItemOptions{IfMatchEtag: &etag, EnableContentResponseOnWrite: true})
	require.NoError(t, err)
	assert.NotEqual(t, etag, replaced.ETag)
	assert.Equal(t, 1, decode(t, replaced.Value).Value)
	assert.Equal(t, azcore.ETag(decode(t, replaced.Value).ETag), replaced.ETag)

	etag = replaced.ETag
	var ops azcosmos.PatchOperations
	ops.AppendIncrement("/value", 41)
	patched, err := c.PatchItem(ctx, pk, "a", ops, &azcosmos.ItemOptions{IfMatchEtag: &etag, EnableContentResponseOnWrite: true})
	require.NoError(t, err)
	assert.Equal(t, 42, decode(t, patched.Value).Value)
	assert.NotEqual(t, etag, patched.ETag)

	upserted, err := c.UpsertItem(ctx, pk, mustJSON(t, doc{ID: "a", PK: "p", Value: 7}), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, upserted.RawResponse.StatusCode, "upsert of an existing item")
	assert.Empty(t, upserted.Value, "Prefer: return=minimal (the SDK default) gives no body")
	assert.Regexp(t, quotedEtag, string(upserted.ETag))
	assert.NotEqual(t, patched.ETag, upserted.ETag)

	read, err := c.ReadItem(ctx, pk, "a", nil)
	require.NoError(t, err)
	assert.Equal(t, upserted.ETag, read.ETag)
	assert.Equal(t, 7, decode(t, read.Value).Value)

	etag = read.ETag
	deleted, err := c.DeleteItem(ctx, pk, "a", &azcosmos.ItemOptions{IfMatchEtag: &etag})
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, deleted.RawResponse.StatusCode)
}

func TestPatchItem(t *testing.T) {
	client := sharedClient(t)
	c := newContainer(t, client, containerSpec{})
	pk := azcosmos.NewPartitionKeyString("p")
	create(t, c, doc{ID: "a", PK: "p", Value: 1, ResourceType: "t"})
	withBody := &azcosmos.ItemOptions{EnableContentResponseOnWrite: true}

	t.Run("set, add, remove and increment", func(t *testing.T) {
		var ops azcosmos.PatchOperations
		ops.AppendSet("/resourceID", "/x")
		ops.AppendIncrement("/value", 2)
		ops.AppendRemove("/resourceType")
		ops.AppendAdd("/tags", []string{"b"})
		ops.AppendAdd("/tags/0", "a")
		resp, err := c.PatchItem(ctxT(t), pk, "a", ops, withBody)
		require.NoError(t, err)
		assert.JSONEq(t, `{"id":"a","pk":"p","value":3,"resourceID":"/x","tags":["a","b"]}`, userJSON(t, resp.Value))
	})
	t.Run("condition not met is 412", func(t *testing.T) {
		var ops azcosmos.PatchOperations
		ops.SetCondition("from c where c['value'] = 100")
		ops.AppendSet("/value", 0)
		_, err := c.PatchItem(ctxT(t), pk, "a", ops, nil)
		assert.Equal(t, http.StatusPreconditionFailed, asCosmosError(t, err).StatusCode)
	})
	t.Run("condition met", func(t *testing.T) {
		var ops azcosmos.PatchOperations
		ops.SetCondition("from c where c['value'] = 3 and c.resourceID = '/x'")
		ops.AppendSet("/value", 0)
		_, err := c.PatchItem(ctxT(t), pk, "a", ops, nil)
		require.NoError(t, err)
	})
	t.Run("the partition key cannot be patched", func(t *testing.T) {
		var ops azcosmos.PatchOperations
		ops.AppendSet("/pk", "q")
		_, err := c.PatchItem(ctxT(t), pk, "a", ops, nil)
		assert.Equal(t, http.StatusBadRequest, asCosmosError(t, err).StatusCode)
	})
	t.Run("replace of a missing path fails", func(t *testing.T) {
		var ops azcosmos.PatchOperations
		ops.AppendReplace("/nothing", 1)
		_, err := c.PatchItem(ctxT(t), pk, "a", ops, nil)
		assert.Equal(t, http.StatusBadRequest, asCosmosError(t, err).StatusCode)
	})
}

// userJSON drops Cosmos's system properties from a document.
func userJSON(t *testing.T, b []byte) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for k := range m {
		if len(k) > 0 && k[0] == '_' {
			delete(m, k)
		}
	}
	return string(mustJSON(t, m))
}
