package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var fullRange = azcosmos.FeedRange{MinInclusive: "", MaxExclusive: "FF"}

// feedReader polls the change feed the way a consumer would: the same
// options every time, plus the composite continuation the SDK returned last.
type feedReader struct {
	c            *azcosmos.ContainerClient
	opts         azcosmos.ChangeFeedOptions
	continuation string
}

func newFeedReader(c *azcosmos.ContainerClient, opts azcosmos.ChangeFeedOptions) *feedReader {
	if opts.FeedRange == nil {
		r := fullRange
		opts.FeedRange = &r
	}
	return &feedReader{c: c, opts: opts}
}

type feedPage struct {
	status int
	docs   []doc
}

func (p feedPage) ids() []string {
	out := make([]string, 0, len(p.docs))
	for _, d := range p.docs {
		out = append(out, d.ID)
	}
	return out
}

func (r *feedReader) next(t *testing.T) feedPage {
	t.Helper()
	opts := r.opts
	if r.continuation != "" {
		cont := r.continuation
		opts.Continuation = &cont
	}
	resp, err := r.c.ReadChangeFeed(ctxT(t), &opts)
	require.NoError(t, err)
	require.NotEmpty(t, resp.ContinuationToken, "the SDK returns a composite continuation on every response")
	r.continuation = resp.ContinuationToken
	page := feedPage{status: resp.RawResponse.StatusCode}
	for _, item := range resp.Items {
		page.docs = append(page.docs, decode(t, item))
	}
	require.Equal(t, len(page.docs), resp.Count)
	return page
}

// expectNothingNew asserts a 304, which azcosmos reports as an empty page.
func (r *feedReader) expectNothingNew(t *testing.T) {
	t.Helper()
	page := r.next(t)
	assert.Equal(t, http.StatusNotModified, page.status)
	assert.Empty(t, page.docs)
}

// Problem 5: an incremental feed from the beginning; each document once at
// its latest version, in modification order, with 304 only when nothing is
// new, and the continuation still valid after 304s.
func TestChangeFeedFromBeginning(t *testing.T) {
	client := sharedClient(t)
	c := newContainer(t, client, containerSpec{})
	create(t, c, doc{ID: "a1", PK: "a"})
	b1 := create(t, c, doc{ID: "b1", PK: "b"})
	create(t, c, doc{ID: "a2", PK: "a"})
	_, err := c.ReplaceItem(ctxT(t), azcosmos.NewPartitionKeyString("a"), "a1", mustJSON(t, doc{ID: "a1", PK: "a", Value: 1}), nil)
	require.NoError(t, err)

	feed := newFeedReader(c, azcosmos.ChangeFeedOptions{})
	page := feed.next(t)
	assert.Equal(t, http.StatusOK, page.status)
	assert.Equal(t, []string{"b1", "a2", "a1"}, page.ids(), "latest version only, ordered by last modification")
	assert.Equal(t, 1, page.docs[2].Value)
	for i := 1; i < len(page.docs); i++ {
		assert.Greater(t, page.docs[i].LSN, page.docs[i-1].LSN, "_lsn increases")
	}
	assert.Equal(t, string(b1.ETag), page.docs[0].ETag)

	feed.expectNothingNew(t)
	feed.expectNothingNew(t)

	// An update of a document already seen brings it back.
	_, err = c.ReplaceItem(ctxT(t), azcosmos.NewPartitionKeyString("b"), "b1", mustJSON(t, doc{ID: "b1", PK: "b", Value: 7}), nil)
	require.NoError(t, err)
	page = feed.next(t)
	assert.Equal(t, []string{"b1"}, page.ids())
	assert.Equal(t, 7, page.docs[0].Value)

	feed.expectNothingNew(t)
	create(t, c, doc{ID: "a3", PK: "a"})
	assert.Equal(t, []string{"a3"}, feed.next(t).ids())
	feed.expectNothingNew(t)
}

func TestChangeFeedPaging(t *testing.T) {
	client := sharedClient(t)
	c := newContainer(t, client, containerSpec{})
	var want []string
	for i := 0; i < 7; i++ {
		d := doc{ID: fmt.Sprintf("d%d", i), PK: []string{"a", "b", "c"}[i%3]}
		create(t, c, d)
		want = append(want, d.ID)
	}

	feed := newFeedReader(c, azcosmos.ChangeFeedOptions{MaxItemCount: 3})
	var got []string
	var sizes []int
	for {
		page := feed.next(t)
		if page.status == http.StatusNotModified {
			break
		}
		sizes = append(sizes, len(page.docs))
		got = append(got, page.ids()...)
		require.Less(t, len(sizes), 10, "the feed must end in a 304")
	}
	assert.Equal(t, []int{3, 3, 1}, sizes)
	assert.Equal(t, want, got, "every change exactly once, in order")

	_, err := c.UpsertItem(ctxT(t), azcosmos.NewPartitionKeyString("c"), mustJSON(t, doc{ID: "d5", PK: "c", Value: 1}), nil)
	require.NoError(t, err)
	_, err = c.UpsertItem(ctxT(t), azcosmos.NewPartitionKeyString("a"), mustJSON(t, doc{ID: "d0", PK: "a", Value: 1}), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"d5", "d0"}, feed.next(t).ids())
	feed.expectNothingNew(t)
}

// "From now": azcosmos v1.5.0 has no option for it, but honours a composite
// continuation whose range carries "*" (Cosmos's If-None-Match: *).
func TestChangeFeedFromNow(t *testing.T) {
	client := sharedClient(t)
	c := newContainer(t, client, containerSpec{})
	create(t, c, doc{ID: "before", PK: "a"})

	feed := newFeedReader(c, azcosmos.ChangeFeedOptions{})
	feed.continuation = fromNowContinuation()
	feed.expectNothingNew(t)

	create(t, c, doc{ID: "after", PK: "b"})
	assert.Equal(t, []string{"after"}, feed.next(t).ids())
	feed.expectNothingNew(t)
}

// "From a point in time": ChangeFeedOptions.StartFrom becomes
// If-Modified-Since, in whole seconds.
func TestChangeFeedFromTime(t *testing.T) {
	client := sharedClient(t)
	c := newContainer(t, client, containerSpec{})
	create(t, c, doc{ID: "old", PK: "a"})
	read, err := c.ReadItem(ctxT(t), azcosmos.NewPartitionKeyString("a"), "old", nil)
	require.NoError(t, err)
	oldTS := decode(t, read.Value).TS

	// Let the clock reach the next second, so the start time (which the
	// header truncates to seconds) falls after "old".
	assert.Eventually(t, func() bool { return time.Now().Unix() > oldTS }, 3*time.Second, 10*time.Millisecond)
	start := time.Now()
	create(t, c, doc{ID: "new", PK: "b"})

	feed := newFeedReader(c, azcosmos.ChangeFeedOptions{StartFrom: &start})
	assert.Equal(t, []string{"new"}, feed.next(t).ids())
	feed.expectNothingNew(t)

	// A start time before everything reads everything.
	epoch := time.Unix(0, 0)
	assert.Equal(t, []string{"old", "new"}, newFeedReader(c, azcosmos.ChangeFeedOptions{StartFrom: &epoch}).next(t).ids())
}

// Scoped by partition key: azcosmos v1.5.0 needs a FeedRange (or a
// continuation) as well, and the PartitionKey on every call.
func TestChangeFeedScopedByPartitionKey(t *testing.T) {
	client := sharedClient(t)
	c := newContainer(t, client, containerSpec{})
	for _, d := range []doc{{ID: "a1", PK: "a"}, {ID: "b1", PK: "b"}, {ID: "a2", PK: "a"}, {ID: "b2", PK: "b"}} {
		create(t, c, d)
	}
	pkA := azcosmos.NewPartitionKeyString("a")
	feed := newFeedReader(c, azcosmos.ChangeFeedOptions{PartitionKey: &pkA, MaxItemCount: 1})
	assert.Equal(t, []string{"a1"}, feed.next(t).ids())
	assert.Equal(t, []string{"a2"}, feed.next(t).ids())
	feed.expectNothingNew(t)

	_, err := c.UpsertItem(ctxT(t), azcosmos.NewPartitionKeyString("b"), mustJSON(t, doc{ID: "b1", PK: "b", Value: 1}), nil)
	require.NoError(t, err)
	feed.expectNothingNew(t)

	_, err = c.UpsertItem(ctxT(t), pkA, mustJSON(t, doc{ID: "a1", PK: "a", Value: 1}), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"a1"}, feed.next(t).ids())
	feed.expectNothingNew(t)
}

// Scoped by feed range: the ranges ReadFeedRanges returns (one, covering the
// whole container) drive ReadChangeFeed, which addresses the range by its id.
func TestChangeFeedScopedByFeedRange(t *testing.T) {
	client := sharedClient(t)
	db, c := newDatabaseAndContainer(t, client, containerSpec{})
	create(t, c, doc{ID: "a1", PK: "a"})
	create(t, c, doc{ID: "b1", PK: "b"})

	ranges, err := c.ReadFeedRanges(ctxT(t), nil)
	require.NoError(t, err)
	require.Len(t, ranges, 1)
	feed := newFeedReader(c, azcosmos.ChangeFeedOptions{FeedRange: &ranges[0]})
	resp, err := c.ReadChangeFeed(ctxT(t), &feed.opts)
	require.NoError(t, err)
	require.NotNil(t, resp.FeedRange)
	assert.Equal(t, ranges[0], *resp.FeedRange)
	assert.Equal(t, []string{"a1", "b1"}, ids(t, resp.Items))

	// A partition key range that does not exist is gone (410/1002), which
	// makes azcosmos refresh its routing map.
	req, err := http.NewRequest(http.MethodGet, shared.Endpoint+"/dbs/"+db.ID()+"/colls/"+c.ID()+"/docs", nil)
	require.NoError(t, err)
	req.Header.Set("A-IM", "Incremental feed")
	req.Header.Set("x-ms-documentdb-partitionkeyrangeid", "1")
	raw, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw.Body.Close()
	assert.Equal(t, http.StatusGone, raw.StatusCode)
	assert.Equal(t, "1002", raw.Header.Get("x-ms-substatus"))
}

// Deletes: a hard delete never appears (as in Cosmos's latest-version mode);
// a soft delete is a replace and appears like any update.
func TestChangeFeedDeletes(t *testing.T) {
	client := sharedClient(t)
	minusOne := int32(-1)
	c := newContainer(t, client, containerSpec{defaultTTL: &minusOne})
	ctx := ctxT(t)
	pk := azcosmos.NewPartitionKeyString("a")
	create(t, c, doc{ID: "soft", PK: "a"})
	create(t, c, doc{ID: "hard", PK: "a"})
	create(t, c, doc{ID: "gone-before-read", PK: "a"})
	_, err := c.DeleteItem(ctx, pk, "gone-before-read", nil)
	require.NoError(t, err)

	feed := newFeedReader(c, azcosmos.ChangeFeedOptions{})
	assert.Equal(t, []string{"soft", "hard"}, feed.next(t).ids())

	_, err = c.DeleteItem(ctx, pk, "hard", nil)
	require.NoError(t, err)
	feed.expectNothingNew(t)

	deletedAt := time.Now().UTC().Format(time.RFC3339)
	ttl := 3600
	_, err = c.ReplaceItem(ctx, pk, "soft", mustJSON(t, doc{ID: "soft", PK: "a", DeletionTimestamp: &deletedAt, TTL: &ttl}), nil)
	require.NoError(t, err)
	page := feed.next(t)
	require.Equal(t, []string{"soft"}, page.ids())
	require.NotNil(t, page.docs[0].DeletionTimestamp)
	assert.Equal(t, deletedAt, *page.docs[0].DeletionTimestamp)
	require.NotNil(t, page.docs[0].TTL)
	assert.Equal(t, 3600, *page.docs[0].TTL)
	feed.expectNothingNew(t)
}

// fromNowContinuation is a composite continuation token, in azcosmos
// v1.5.0's format, that starts the change feed of the whole container at
// "now". The SDK fills in the container's resource id.
func fromNowContinuation() string {
	token := map[string]any{
		"version":    1,
		"resourceId": "",
		"continuation": []map[string]any{
			{"minInclusive": "", "maxExclusive": "FF", "continuationToken": "*"},
		},
	}
	b, _ := json.Marshal(token)
	return string(b)
}
