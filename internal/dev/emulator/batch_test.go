package emulator

import (
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func statusCodes(resp azcosmos.TransactionalBatchResponse) []int32 {
	out := make([]int32, 0, len(resp.OperationResults))
	for _, r := range resp.OperationResults {
		out = append(out, r.StatusCode)
	}
	return out
}

// Problem 3: a transactional batch supports every operation kind and answers
// 200 with per-operation results.
func TestBatchAllOperationKinds(t *testing.T) {
	client := sharedClient(t)
	c := newContainer(t, client, containerSpec{})
	ctx := ctxT(t)
	pk := azcosmos.NewPartitionKeyString("p")
	toReplace := create(t, c, doc{ID: "replace-me", PK: "p"})
	create(t, c, doc{ID: "upsert-me", PK: "p"})
	create(t, c, doc{ID: "read-me", PK: "p", Value: 5})
	create(t, c, doc{ID: "delete-me", PK: "p"})
	create(t, c, doc{ID: "patch-me", PK: "p", Value: 1})

	b := c.NewTransactionalBatch(pk)
	b.CreateItem(mustJSON(t, doc{ID: "new", PK: "p"}), nil)
	etag := toReplace.ETag
	b.ReplaceItem("replace-me", mustJSON(t, doc{ID: "replace-me", PK: "p", Value: 2}), &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &etag})
	b.UpsertItem(mustJSON(t, doc{ID: "upsert-me", PK: "p", Value: 3}), nil)
	b.UpsertItem(mustJSON(t, doc{ID: "upsert-new", PK: "p"}), nil)
	b.ReadItem("read-me", nil)
	b.DeleteItem("delete-me", nil)
	var ops azcosmos.PatchOperations
	ops.AppendIncrement("/value", 10)
	b.PatchItem("patch-me", ops, nil)

	resp, err := c.ExecuteTransactionalBatch(ctx, b, &azcosmos.TransactionalBatchOptions{EnableContentResponseOnWrite: true})
	require.NoError(t, err)
	assert.True(t, resp.Success)
	assert.Equal(t, http.StatusOK, resp.RawResponse.StatusCode)
	assert.Equal(t, []int32{201, 200, 200, 201, 200, 204, 200}, statusCodes(resp))
	for i, r := range resp.OperationResults {
		if r.StatusCode == http.StatusNoContent {
			assert.Empty(t, r.ETag)
			continue
		}
		assert.Regexp(t, quotedEtag, string(r.ETag), "operation %d", i)
		assert.Equal(t, string(r.ETag), decode(t, r.ResourceBody).ETag, "operation %d", i)
	}
	assert.Equal(t, 5, decode(t, resp.OperationResults[4].ResourceBody).Value, "read result")
	assert.Equal(t, 11, decode(t, resp.OperationResults[6].ResourceBody).Value, "patch result")

	for id, want := range map[string]int{"new": 0, "replace-me": 2, "upsert-me": 3, "upsert-new": 0, "patch-me": 11} {
		got, err := c.ReadItem(ctx, pk, id, nil)
		require.NoError(t, err, id)
		assert.Equal(t, want, decode(t, got.Value).Value, id)
	}
	_, err = c.ReadItem(ctx, pk, "delete-me", nil)
	assert.Equal(t, http.StatusNotFound, asCosmosError(t, err).StatusCode)

	// Without EnableContentResponseOnWrite the SDK sends Prefer: return=minimal:
	// results keep status and etag but carry no body, except for reads.
	b = c.NewTransactionalBatch(pk)
	b.UpsertItem(mustJSON(t, doc{ID: "new", PK: "p", Value: 9}), nil)
	resp, err = c.ExecuteTransactionalBatch(ctx, b, nil)
	require.NoError(t, err)
	require.True(t, resp.Success)
	assert.Equal(t, []int32{200}, statusCodes(resp))
	assert.Regexp(t, quotedEtag, string(resp.OperationResults[0].ETag))
	assert.Empty(t, resp.OperationResults[0].ResourceBody)
}

// A failing operation makes the batch answer 207 (Success == false) with the
// failure's own status and 424 for every other operation, and nothing in
// the batch is applied.
func TestBatchIsAtomic(t *testing.T) {
	stale := azcore.ETag(`"00000000-0000-0000-0000-000000000000"`)
	tests := []struct {
		name  string
		build func(b *azcosmos.TransactionalBatch)
		want  []int32
	}{
		{
			name: "replace with a stale etag",
			build: func(b *azcosmos.TransactionalBatch) {
				b.CreateItem(mustJSON(t, doc{ID: "new", PK: "p"}), nil)
				b.UpsertItem(mustJSON(t, doc{ID: "existing", PK: "p", Value: 100}), nil)
				b.ReplaceItem("existing", mustJSON(t, doc{ID: "existing", PK: "p", Value: 200}), &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &stale})
				b.DeleteItem("other", nil)
			},
			want: []int32{424, 424, 412, 424},
		},
		{
			name: "create of an existing item",
			build: func(b *azcosmos.TransactionalBatch) {
				b.CreateItem(mustJSON(t, doc{ID: "new", PK: "p"}), nil)
				b.DeleteItem("other", nil)
				b.CreateItem(mustJSON(t, doc{ID: "existing", PK: "p"}), nil)
			},
			want: []int32{424, 424, 409},
		},
		{
			name: "first operation fails",
			build: func(b *azcosmos.TransactionalBatch) {
				b.ReadItem("missing", nil)
				b.CreateItem(mustJSON(t, doc{ID: "new", PK: "p"}), nil)
			},
			want: []int32{404, 424},
		},
		{
			name: "patch of a missing item",
			build: func(b *azcosmos.TransactionalBatch) {
				b.DeleteItem("existing", nil)
				var ops azcosmos.PatchOperations
				ops.AppendSet("/value", 1)
				b.PatchItem("missing", ops, nil)
			},
			want: []int32{424, 404},
		},
		{
			name: "operation in another partition",
			build: func(b *azcosmos.TransactionalBatch) {
				b.CreateItem(mustJSON(t, doc{ID: "new", PK: "p"}), nil)
				b.CreateItem(mustJSON(t, doc{ID: "stray", PK: "elsewhere"}), nil)
			},
			want: []int32{424, 400},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := sharedClient(t)
			c := newContainer(t, client, containerSpec{})
			ctx := ctxT(t)
			pk := azcosmos.NewPartitionKeyString("p")
			existing := create(t, c, doc{ID: "existing", PK: "p", Value: 1})
			other := create(t, c, doc{ID: "other", PK: "p"})

			b := c.NewTransactionalBatch(pk)
			tt.build(&b)
			resp, err := c.ExecuteTransactionalBatch(ctx, b, nil)
			require.NoError(t, err, "a 207 is not an error")
			assert.False(t, resp.Success)
			assert.Equal(t, http.StatusMultiStatus, resp.RawResponse.StatusCode)
			assert.Equal(t, tt.want, statusCodes(resp))

			// Rolled back: nothing created, changed or deleted.
			_, err = c.ReadItem(ctx, pk, "new", nil)
			assert.Equal(t, http.StatusNotFound, asCosmosError(t, err).StatusCode)
			got, err := c.ReadItem(ctx, pk, "existing", nil)
			require.NoError(t, err)
			assert.Equal(t, existing.ETag, got.ETag)
			assert.Equal(t, 1, decode(t, got.Value).Value)
			got, err = c.ReadItem(ctx, pk, "other", nil)
			require.NoError(t, err)
			assert.Equal(t, other.ETag, got.ETag)
		})
	}
}
