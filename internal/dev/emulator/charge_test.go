package emulator

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The request-charge model of emulator/lib/charge.js, restated so the test
// checks the emulator against the documented rules rather than against itself.
func modelReadCharge(itemBytes int) float64 {
	return math.Max(1, math.Ceil(float64(itemBytes)/1024))
}

func modelWriteCharge(itemBytes int) float64 {
	return math.Max(570, math.Ceil(570*float64(itemBytes)/1024)) / 100
}

func modelFeedCharge(items int) float64 {
	return 2 + float64(items)
}

// chargeOf parses the x-ms-request-charge header of a raw response.
func chargeOf(t *testing.T, resp *http.Response) float64 {
	t.Helper()
	require.NotNil(t, resp)
	raw := resp.Header.Get("x-ms-request-charge")
	require.NotEmpty(t, raw, "x-ms-request-charge")
	charge, err := strconv.ParseFloat(raw, 64)
	require.NoError(t, err, "x-ms-request-charge %q", raw)
	return charge
}

type paddedDoc struct {
	ID    string `json:"id"`
	PK    string `json:"pk"`
	Pad   string `json:"pad"`
	Value int    `json:"value"`
}

func TestRequestChargeModel(t *testing.T) {
	client := sharedClient(t)
	c := newContainer(t, client, containerSpec{})
	ctx := ctxT(t)
	pk := azcosmos.NewPartitionKeyString("p")
	withBody := &azcosmos.ItemOptions{EnableContentResponseOnWrite: true}

	t.Run("small item", func(t *testing.T) {
		created, err := c.CreateItem(ctx, pk, mustJSON(t, doc{ID: "small", PK: "p"}), nil)
		require.NoError(t, err)
		assert.InDelta(t, 5.7, chargeOf(t, created.RawResponse), 1e-9, "the minimum write charge")
		read, err := c.ReadItem(ctx, pk, "small", nil)
		require.NoError(t, err)
		assert.Less(t, len(read.Value), 1024)
		assert.InDelta(t, 1, chargeOf(t, read.RawResponse), 1e-9, "the minimum read charge")
	})

	// 2,500 bytes of padding plus well under 500 of id, key and system
	// properties: between 2 and 3 KB stored.
	big := paddedDoc{ID: "big", PK: "p", Pad: strings.Repeat("x", 2500)}
	var bigSize int

	t.Run("create", func(t *testing.T) {
		created, err := c.CreateItem(ctx, pk, mustJSON(t, big), withBody)
		require.NoError(t, err)
		bigSize = len(created.Value)
		require.Greater(t, bigSize, 2048)
		require.LessOrEqual(t, bigSize, 3072)
		assert.InDelta(t, modelWriteCharge(bigSize), chargeOf(t, created.RawResponse), 1e-9)
		assert.Greater(t, chargeOf(t, created.RawResponse), 11.4, "more than 2 KB costs more than 2 x 5.7")
	})

	t.Run("point read", func(t *testing.T) {
		read, err := c.ReadItem(ctx, pk, "big", nil)
		require.NoError(t, err)
		require.Equal(t, bigSize, len(read.Value), "the read returns the stored item")
		assert.InDelta(t, 3, chargeOf(t, read.RawResponse), 1e-9, "ceil(KB) of a 2-3 KB item")
		assert.InDelta(t, modelReadCharge(bigSize), chargeOf(t, read.RawResponse), 1e-9)
	})

	t.Run("replace", func(t *testing.T) {
		bigger := big
		bigger.Pad = strings.Repeat("y", 6000)
		replaced, err := c.ReplaceItem(ctx, pk, "big", mustJSON(t, bigger), withBody)
		require.NoError(t, err)
		size := len(replaced.Value)
		require.Greater(t, size, 6000)
		assert.InDelta(t, modelWriteCharge(size), chargeOf(t, replaced.RawResponse), 1e-9)

		read, err := c.ReadItem(ctx, pk, "big", nil)
		require.NoError(t, err)
		assert.InDelta(t, modelReadCharge(size), chargeOf(t, read.RawResponse), 1e-9)
		bigSize = size
	})

	t.Run("query pages", func(t *testing.T) {
		for _, id := range []string{"q1", "q2"} {
			create(t, c, doc{ID: id, PK: "p"})
		}
		tests := []struct {
			name  string
			sql   string
			items int
		}{
			{"every item in the partition", "SELECT * FROM c", 4},
			{"a projection", "SELECT c.id FROM c WHERE STARTSWITH(c.id, 'q')", 2},
			{"nothing", "SELECT * FROM c WHERE c.id = 'none'", 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				pager := c.NewQueryItemsPager(tt.sql, pk, nil)
				require.True(t, pager.More())
				page, err := pager.NextPage(ctxT(t))
				require.NoError(t, err)
				require.Len(t, page.Items, tt.items)
				assert.InDelta(t, modelFeedCharge(tt.items), chargeOf(t, page.RawResponse), 1e-9)
			})
		}
	})

	t.Run("change feed", func(t *testing.T) {
		r := fullRange
		resp, err := c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &r})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.RawResponse.StatusCode)
		assert.InDelta(t, modelFeedCharge(resp.Count), chargeOf(t, resp.RawResponse), 1e-9)

		cont := resp.ContinuationToken
		resp, err = c.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &r, Continuation: &cont})
		require.NoError(t, err)
		require.Equal(t, http.StatusNotModified, resp.RawResponse.StatusCode)
		assert.InDelta(t, 1, chargeOf(t, resp.RawResponse), 1e-9, "nothing new")
	})

	t.Run("transactional batch is the sum of its operations", func(t *testing.T) {
		b := c.NewTransactionalBatch(pk)
		b.CreateItem(mustJSON(t, doc{ID: "batched", PK: "p"}), nil)
		b.ReadItem("small", nil)
		b.DeleteItem("big", nil)
		resp, err := c.ExecuteTransactionalBatch(ctx, b, nil)
		require.NoError(t, err)
		require.True(t, resp.Success)
		want := []float64{5.7, 1, modelWriteCharge(bigSize)}
		require.Len(t, resp.OperationResults, len(want))
		for i, w := range want {
			assert.InDelta(t, w, resp.OperationResults[i].RequestCharge, 1e-4, "operation %d", i)
		}
		assert.InDelta(t, want[0]+want[1]+want[2], chargeOf(t, resp.RawResponse), 1e-9)

		// A failed atomic batch: the failing operation costs what its failure
		// does, the others (424) nothing.
		b = c.NewTransactionalBatch(pk)
		b.CreateItem(mustJSON(t, doc{ID: "another", PK: "p"}), nil)
		b.CreateItem(mustJSON(t, doc{ID: "batched", PK: "p"}), nil)
		resp, err = c.ExecuteTransactionalBatch(ctx, b, nil)
		require.NoError(t, err)
		require.False(t, resp.Success)
		require.Equal(t, []int32{http.StatusFailedDependency, http.StatusConflict}, statusCodes(resp))
		assert.InDelta(t, 0, resp.OperationResults[0].RequestCharge, 1e-9)
		assert.InDelta(t, 1, resp.OperationResults[1].RequestCharge, 1e-9)
		assert.InDelta(t, 1, chargeOf(t, resp.RawResponse), 1e-9)
	})

	t.Run("delete", func(t *testing.T) {
		read, err := c.ReadItem(ctx, pk, "batched", nil)
		require.NoError(t, err)
		deleted, err := c.DeleteItem(ctx, pk, "batched", nil)
		require.NoError(t, err)
		assert.InDelta(t, modelWriteCharge(len(read.Value)), chargeOf(t, deleted.RawResponse), 1e-9)
	})

	t.Run("failures", func(t *testing.T) {
		stale := azcore.ETag(`"00000000-0000-0000-0000-000000000000"`)
		tests := []struct {
			name   string
			call   func() error
			status int
		}{
			{"read missing", func() error {
				_, err := c.ReadItem(ctx, pk, "missing", nil)
				return err
			}, http.StatusNotFound},
			{"create existing", func() error {
				_, err := c.CreateItem(ctx, pk, mustJSON(t, doc{ID: "small", PK: "p"}), nil)
				return err
			}, http.StatusConflict},
			{"replace with a stale etag", func() error {
				_, err := c.ReplaceItem(ctx, pk, "small", mustJSON(t, doc{ID: "small", PK: "p"}), &azcosmos.ItemOptions{IfMatchEtag: &stale})
				return err
			}, http.StatusPreconditionFailed},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var respErr *azcore.ResponseError
				require.ErrorAs(t, tt.call(), &respErr)
				assert.Equal(t, tt.status, respErr.StatusCode)
				assert.InDelta(t, 1, chargeOf(t, respErr.RawResponse), 1e-9)
			})
		}
	})
}
