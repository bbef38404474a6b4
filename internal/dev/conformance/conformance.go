// Package conformance is the one behavioural contract of database.Container. Every store
// implementation runs it, so that unit tests on the memory store mean something for Cosmos.
package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// NewContainer returns an empty container, fresh for each call, whose partition key path
// is /partitionKey (as ARO-HCP's containers are).
type NewContainer func(t *testing.T) database.Container

// Run runs the whole suite.
func Run(t *testing.T, newContainer NewContainer) {
	t.Run("CRUD", func(t *testing.T) { testCRUD(t, newContainer(t)) })
	t.Run("ErrorVocabulary", func(t *testing.T) { testErrors(t, newContainer(t)) })
	t.Run("ListByResourceType", func(t *testing.T) { testList(t, newContainer(t)) })
	t.Run("BatchAppliesAll", func(t *testing.T) { testBatch(t, newContainer(t)) })
	t.Run("BatchIsAtomic", func(t *testing.T) { testBatchAtomic(t, newContainer(t)) })
	t.Run("ChangeFeedFromBeginningWithPaging", func(t *testing.T) { testFeedBeginning(t, newContainer(t)) })
	t.Run("ChangeFeedFromNow", func(t *testing.T) { testFeedNow(t, newContainer(t)) })
	t.Run("ChangeFeedFromTime", func(t *testing.T) { testFeedTime(t, newContainer(t)) })
	t.Run("ChangeFeedScopes", func(t *testing.T) { testFeedScopes(t, newContainer(t)) })
	t.Run("ChangeFeedItemsCarryLSN", func(t *testing.T) { testFeedLSN(t, newContainer(t)) })
	t.Run("SoftDeleteAppearsInFeed", func(t *testing.T) { testSoftDelete(t, newContainer(t)) })
	t.Run("TTLExpiry", func(t *testing.T) { testTTL(t, newContainer(t)) })
	t.Run("FixtureRoundTrip", func(t *testing.T) { testFixtures(t, newContainer) })
	t.Run("PatchOperations", func(t *testing.T) { testPatchOperations(t, newContainer(t)) })
	t.Run("PatchGuards", func(t *testing.T) { testPatchGuards(t, newContainer(t)) })
	t.Run("PatchKeepsOtherFieldsOfFixtures", func(t *testing.T) { testPatchFixtures(t, newContainer(t)) })
	t.Run("PatchInChangeFeed", func(t *testing.T) { testPatchFeed(t, newContainer(t)) })
	t.Run("PatchMinimalAnswer", func(t *testing.T) { testPatchMinimal(t, newContainer(t)) })
	t.Run("PatchInBatch", func(t *testing.T) { testPatchInBatch(t, newContainer(t)) })
}

var seq atomic.Int64

// doc builds a small ARO-HCP-shaped document in partition pk.
func doc(pk, resourceType, name string, extra string) (id string, body []byte) {
	rid := fmt.Sprintf("/subscriptions/%s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/%s/%s", pk, strings.TrimPrefix(resourceType, "Microsoft.RedHatOpenShift/"), name)
	id = api.CosmosID(rid)
	body = fmt.Appendf(nil, `{"id":%q,"partitionKey":%q,"resourceID":%q,"resourceType":%q,"properties":{"n":%d%s}}`,
		id, pk, rid, resourceType, seq.Add(1), extra)
	return id, body
}

func field(t *testing.T, body []byte, path ...string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(body, &v))
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func testCRUD(t *testing.T, c database.Container) {
	id, body := doc("sub-a", api.ClusterResourceType, "one", `,"keep":{"deep":[1,"x"]}`)
	created, err := c.Create(ctx(t), "sub-a", body)
	require.NoError(t, err)
	assert.Equal(t, id, created.ID)
	assert.Equal(t, "sub-a", created.PartitionKey)
	assert.NotEmpty(t, created.ETag)
	assert.Equal(t, created.ETag, field(t, created.Body, "_etag"))
	assert.NotNil(t, field(t, created.Body, "_ts"))

	got, err := c.Get(ctx(t), "sub-a", id)
	require.NoError(t, err)
	assert.Equal(t, created.ETag, got.ETag)
	assert.Equal(t, []any{1.0, "x"}, field(t, got.Body, "properties", "keep", "deep"))

	changed := bytes.Replace(got.Body, []byte(`"deep":[1,"x"]`), []byte(`"deep":[2]`), 1)
	replaced, err := c.Replace(ctx(t), "sub-a", id, changed, got.ETag)
	require.NoError(t, err)
	assert.NotEqual(t, got.ETag, replaced.ETag, "every write gets a new etag")
	got, err = c.Get(ctx(t), "sub-a", id)
	require.NoError(t, err)
	assert.Equal(t, replaced.ETag, got.ETag)
	assert.Equal(t, []any{2.0}, field(t, got.Body, "properties", "keep", "deep"))

	require.NoError(t, c.Delete(ctx(t), "sub-a", id, got.ETag))
	_, err = c.Get(ctx(t), "sub-a", id)
	assert.ErrorIs(t, err, database.ErrNotFound)
}

func testErrors(t *testing.T, c database.Container) {
	id, body := doc("sub-e", api.ClusterResourceType, "e", "")
	created, err := c.Create(ctx(t), "sub-e", body)
	require.NoError(t, err)
	updated, err := c.Replace(ctx(t), "sub-e", id, body, created.ETag)
	require.NoError(t, err)
	missingID, missingBody := doc("sub-e", api.ClusterResourceType, "missing", "")

	tests := []struct {
		name       string
		call       func() error
		want       error
		wantStatus int
	}{
		{"get missing", func() error { _, err := c.Get(ctx(t), "sub-e", missingID); return err }, database.ErrNotFound, http.StatusNotFound},
		{"get from another partition", func() error { _, err := c.Get(ctx(t), "sub-other", id); return err }, database.ErrNotFound, http.StatusNotFound},
		{"create existing", func() error { _, err := c.Create(ctx(t), "sub-e", body); return err }, database.ErrConflict, http.StatusConflict},
		{"replace with stale etag", func() error { _, err := c.Replace(ctx(t), "sub-e", id, body, created.ETag); return err }, database.ErrPreconditionFailed, http.StatusPreconditionFailed},
		{"replace missing", func() error {
			_, err := c.Replace(ctx(t), "sub-e", missingID, missingBody, updated.ETag)
			return err
		}, database.ErrNotFound, http.StatusNotFound},
		{"replace without etag", func() error { _, err := c.Replace(ctx(t), "sub-e", id, body, ""); return err }, database.ErrIfMatchRequired, 0},
		{"delete with stale etag", func() error { return c.Delete(ctx(t), "sub-e", id, created.ETag) }, database.ErrPreconditionFailed, http.StatusPreconditionFailed},
		{"delete missing", func() error { return c.Delete(ctx(t), "sub-e", missingID, "") }, database.ErrNotFound, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.want)
			var opErr *database.OpError
			require.ErrorAs(t, err, &opErr, "errors say which operation failed")
			assert.Equal(t, tt.wantStatus, opErr.StatusCode)
			assert.Contains(t, err.Error(), c.Name())
			for _, other := range []error{database.ErrNotFound, database.ErrConflict, database.ErrPreconditionFailed, database.ErrThrottled} {
				if other != tt.want {
					assert.NotErrorIs(t, err, other)
				}
			}
		})
	}
	got, err := c.Get(ctx(t), "sub-e", id)
	require.NoError(t, err)
	assert.Equal(t, updated.ETag, got.ETag, "failed writes change nothing")
}

func collect(t *testing.T, c database.Container, opts database.ListOptions) []string {
	t.Helper()
	var ids []string
	for item, err := range c.List(ctx(t), opts) {
		require.NoError(t, err)
		ids = append(ids, item.PartitionKey+"/"+item.ID)
	}
	sort.Strings(ids)
	return ids
}

func testList(t *testing.T, c database.Container) {
	var clustersA, all []string
	for i, pk := range []string{"sub-a", "sub-a", "sub-a", "sub-b", "sub-b"} {
		id, body := doc(pk, api.ClusterResourceType, fmt.Sprintf("c%d", i), "")
		_, err := c.Create(ctx(t), pk, body)
		require.NoError(t, err)
		all = append(all, pk+"/"+id)
		if pk == "sub-a" {
			clustersA = append(clustersA, pk+"/"+id)
		}
	}
	_, other := doc("sub-a", api.ServiceProviderClusterResourceType, "c0/serviceProviderClusters/default", "")
	_, err := c.Create(ctx(t), "sub-a", other)
	require.NoError(t, err)
	sort.Strings(all)
	sort.Strings(clustersA)

	assert.Equal(t, all, collect(t, c, database.ListOptions{ResourceType: api.ClusterResourceType}), "cross-partition")
	assert.Equal(t, all, collect(t, c, database.ListOptions{ResourceType: strings.ToLower(api.ClusterResourceType), PageSize: 2}), "case-insensitive type, paged")
	assert.Equal(t, clustersA, collect(t, c, database.ListOptions{ResourceType: api.ClusterResourceType, PartitionKey: "sub-a", PageSize: 1}), "one partition")
	assert.Len(t, collect(t, c, database.ListOptions{ResourceType: api.ServiceProviderClusterResourceType}), 1)
	assert.Empty(t, collect(t, c, database.ListOptions{ResourceType: api.StampResourceType}))
}

func testBatch(t *testing.T, c database.Container) {
	const pk = "sub-batch"
	keepID, keepBody := doc(pk, api.ClusterResourceType, "keep", "")
	goneID, goneBody := doc(pk, api.ClusterResourceType, "gone", "")
	kept, err := c.Create(ctx(t), pk, keepBody)
	require.NoError(t, err)
	gone, err := c.Create(ctx(t), pk, goneBody)
	require.NoError(t, err)
	newID, newBody := doc(pk, api.ClusterResourceType, "new", "")

	results, err := c.Batch(ctx(t), pk, []database.BatchOperation{
		{Kind: database.BatchCreate, ID: newID, Body: newBody},
		{Kind: database.BatchReplace, ID: keepID, Body: bytes.Replace(keepBody, []byte(`"properties":{`), []byte(`"properties":{"b":true,`), 1), IfMatch: kept.ETag},
		{Kind: database.BatchRead, ID: keepID},
		{Kind: database.BatchDelete, ID: goneID, IfMatch: gone.ETag},
	})
	require.NoError(t, err)
	require.Len(t, results, 4)
	assert.Equal(t, http.StatusCreated, results[0].StatusCode)
	assert.Equal(t, http.StatusOK, results[1].StatusCode)
	assert.Equal(t, http.StatusOK, results[2].StatusCode)
	assert.Equal(t, true, field(t, results[2].Body, "properties", "b"), "a read sees the batch's own earlier write")
	assert.Equal(t, results[1].ETag, results[2].ETag)
	assert.Equal(t, http.StatusNoContent, results[3].StatusCode)

	_, err = c.Get(ctx(t), pk, newID)
	assert.NoError(t, err)
	_, err = c.Get(ctx(t), pk, goneID)
	assert.ErrorIs(t, err, database.ErrNotFound)
}

func testBatchAtomic(t *testing.T, c database.Container) {
	const pk = "sub-atomic"
	existingID, existingBody := doc(pk, api.ClusterResourceType, "existing", "")
	existing, err := c.Create(ctx(t), pk, existingBody)
	require.NoError(t, err)
	stale := existing.ETag
	existing, err = c.Replace(ctx(t), pk, existingID, existingBody, existing.ETag)
	require.NoError(t, err)

	tests := []struct {
		name string
		fail database.BatchOperation
		want error
	}{
		{"stale replace", database.BatchOperation{Kind: database.BatchReplace, ID: existingID, Body: existingBody, IfMatch: stale}, database.ErrPreconditionFailed},
		{"duplicate create", database.BatchOperation{Kind: database.BatchCreate, ID: existingID, Body: existingBody}, database.ErrConflict},
		{"read missing", database.BatchOperation{Kind: database.BatchRead, ID: api.CosmosID("/nope")}, database.ErrNotFound},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newID, newBody := doc(pk, api.ClusterResourceType, fmt.Sprintf("new%d", i), "")
			_, err := c.Batch(ctx(t), pk, []database.BatchOperation{
				{Kind: database.BatchCreate, ID: newID, Body: newBody},
				{Kind: database.BatchReplace, ID: existingID, Body: bytes.Replace(existingBody, []byte(`"properties":{`), []byte(`"properties":{"b":1,`), 1), IfMatch: existing.ETag},
				tt.fail,
			})
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.want)
			var be *database.BatchError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, 2, be.Index, "the failing operation is named")

			_, err = c.Get(ctx(t), pk, newID)
			assert.ErrorIs(t, err, database.ErrNotFound, "the create before the failure was rolled back")
			got, err := c.Get(ctx(t), pk, existingID)
			require.NoError(t, err)
			assert.Equal(t, existing.ETag, got.ETag, "the replace before the failure was rolled back")
			assert.Nil(t, field(t, got.Body, "properties", "b"))
		})
	}
}

// drain reads pages until the feed reports nothing new, returning ids in feed order and
// the continuation to resume from.
func drain(t *testing.T, c database.Container, opts database.ChangeFeedOptions) ([]string, string) {
	t.Helper()
	var ids []string
	for range 1000 {
		page, err := c.ChangeFeed(ctx(t), opts)
		require.NoError(t, err)
		require.NotEmpty(t, page.Continuation, "every page, even an empty one, can be resumed")
		if opts.MaxItemCount > 0 {
			require.LessOrEqual(t, len(page.Items), opts.MaxItemCount)
		}
		opts.Continuation = page.Continuation
		if page.NotModified {
			require.Empty(t, page.Items)
			return ids, opts.Continuation
		}
		require.NotEmpty(t, page.Items, "a modified page carries items")
		for _, it := range page.Items {
			ids = append(ids, it.ID)
		}
	}
	t.Fatal("change feed never reported NotModified")
	return nil, ""
}

func create(t *testing.T, c database.Container, pk, name string) database.Item {
	t.Helper()
	_, body := doc(pk, api.ClusterResourceType, name, "")
	item, err := c.Create(ctx(t), pk, body)
	require.NoError(t, err)
	return item
}

func testFeedBeginning(t *testing.T, c database.Container) {
	var want []string
	for i := range 5 {
		want = append(want, create(t, c, "sub-f", fmt.Sprintf("f%d", i)).ID)
	}
	got, cont := drain(t, c, database.ChangeFeedOptions{Start: database.FromBeginning, MaxItemCount: 2})
	assert.Equal(t, want, got, "each document once, oldest change first, across pages")

	again, cont := drain(t, c, database.ChangeFeedOptions{Continuation: cont, MaxItemCount: 2})
	assert.Empty(t, again, "resuming at the end yields nothing")

	// An update moves a document to the end of the feed; a resumed reader sees it again.
	first, err := c.Get(ctx(t), "sub-f", want[0])
	require.NoError(t, err)
	_, err = c.Replace(ctx(t), "sub-f", want[0], first.Body, first.ETag)
	require.NoError(t, err)
	later := create(t, c, "sub-f", "f-later")
	got, _ = drain(t, c, database.ChangeFeedOptions{Continuation: cont, MaxItemCount: 1})
	assert.Equal(t, []string{want[0], later.ID}, got)

	all, _ := drain(t, c, database.ChangeFeedOptions{Start: database.FromBeginning})
	assert.Equal(t, append(append([]string{}, want[1:]...), want[0], later.ID), all, "latest version only, in change order")
}

// nextSecond waits, by polling the clock rather than sleeping blindly, until the wall
// clock has moved past the second of the given item's _ts: Cosmos positions feeds by
// second.
func nextSecond(t *testing.T, item database.Item) time.Time {
	t.Helper()
	ts := int64(field(t, item.Body, "_ts").(float64))
	require.Eventually(t, func() bool { return time.Now().Unix() > ts }, 5*time.Second, 20*time.Millisecond)
	return time.Now()
}

func testFeedNow(t *testing.T, c database.Container) {
	old := create(t, c, "sub-n", "old")
	nextSecond(t, old)
	page, err := c.ChangeFeed(ctx(t), database.ChangeFeedOptions{Start: database.FromNow})
	require.NoError(t, err)
	assert.True(t, page.NotModified, "existing documents are skipped")
	fresh := create(t, c, "sub-n", "new")
	got, _ := drain(t, c, database.ChangeFeedOptions{Continuation: page.Continuation})
	assert.Equal(t, []string{fresh.ID}, got)
}

func testFeedTime(t *testing.T, c database.Container) {
	old := create(t, c, "sub-t", "old")
	start := nextSecond(t, old)
	fresh := create(t, c, "sub-t", "new")
	got, _ := drain(t, c, database.ChangeFeedOptions{Start: database.FromTime, StartTime: start})
	assert.Equal(t, []string{fresh.ID}, got)
}

func testFeedScopes(t *testing.T, c database.Container) {
	a1 := create(t, c, "sub-x", "a1")
	b1 := create(t, c, "sub-y", "b1")
	a2 := create(t, c, "sub-x", "a2")

	got, cont := drain(t, c, database.ChangeFeedOptions{PartitionKey: "sub-x"})
	assert.Equal(t, []string{a1.ID, a2.ID}, got, "a partition-scoped feed sees only its partition")
	create(t, c, "sub-y", "b2")
	got, _ = drain(t, c, database.ChangeFeedOptions{PartitionKey: "sub-x", Continuation: cont})
	assert.Empty(t, got, "other partitions' writes do not wake a scoped reader")

	ranges, err := c.FeedRanges(ctx(t))
	require.NoError(t, err)
	require.NotEmpty(t, ranges)
	var union []string
	for _, r := range ranges {
		ids, _ := drain(t, c, database.ChangeFeedOptions{FeedRange: &r})
		union = append(union, ids...)
	}
	assert.ElementsMatch(t, []string{a1.ID, b1.ID, a2.ID, api.CosmosID("/subscriptions/sub-y/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/b2")}, union, "feed ranges cover the container")

	_, err = c.ChangeFeed(ctx(t), database.ChangeFeedOptions{PartitionKey: "sub-x", FeedRange: &ranges[0]})
	assert.Error(t, err, "a feed is scoped by a partition or a range, not both")
}

// feedItems reads pages until the feed reports nothing new, returning the items.
func feedItems(t *testing.T, c database.Container, opts database.ChangeFeedOptions) ([]database.Item, string) {
	t.Helper()
	var items []database.Item
	for range 1000 {
		page, err := c.ChangeFeed(ctx(t), opts)
		require.NoError(t, err)
		opts.Continuation = page.Continuation
		if page.NotModified {
			return items, opts.Continuation
		}
		items = append(items, page.Items...)
	}
	t.Fatal("change feed never reported NotModified")
	return nil, ""
}

func lsnOf(t *testing.T, item database.Item) float64 {
	t.Helper()
	lsn, ok := field(t, item.Body, "_lsn").(float64)
	require.True(t, ok, "feed item %s carries a numeric _lsn", item.ID)
	return lsn
}

// Change-feed items carry Cosmos's _lsn, the partition's write sequence number, which
// orders versions of a document where _ts (whole seconds) cannot. Informers rely on it.
func testFeedLSN(t *testing.T, c database.Container) {
	a := create(t, c, "sub-l", "a")
	b := create(t, c, "sub-l", "b")
	items, cont := feedItems(t, c, database.ChangeFeedOptions{Start: database.FromBeginning})
	require.Len(t, items, 2)
	assert.Less(t, lsnOf(t, items[0]), lsnOf(t, items[1]), "feed order is _lsn order")
	assert.NotNil(t, field(t, items[0].Body, "_ts"))

	// Writing back the very body the feed delivered, its _lsn included, is a new write
	// with a new, higher _lsn.
	require.Equal(t, a.ID, items[0].ID)
	_, err := c.Replace(ctx(t), "sub-l", a.ID, items[0].Body, a.ETag)
	require.NoError(t, err)
	again, _ := feedItems(t, c, database.ChangeFeedOptions{Continuation: cont})
	require.Len(t, again, 1)
	assert.Equal(t, a.ID, again[0].ID)
	assert.Greater(t, lsnOf(t, again[0]), lsnOf(t, items[1]), "a later write of %s has a higher _lsn than %s's earlier one", a.ID, b.ID)
}

func testSoftDelete(t *testing.T, c database.Container) {
	item := create(t, c, "sub-d", "doomed")
	_, cont := drain(t, c, database.ChangeFeedOptions{})
	deleted, err := database.SoftDelete(ctx(t), c, item, time.Now())
	require.NoError(t, err)
	assert.NotEqual(t, item.ETag, deleted.ETag)

	page, err := c.ChangeFeed(ctx(t), database.ChangeFeedOptions{Continuation: cont})
	require.NoError(t, err)
	require.Len(t, page.Items, 1, "the soft delete travels through the feed")
	d, err := database.DecodeItem[api.RawProperties](page.Items[0])
	require.NoError(t, err)
	assert.True(t, d.IsDeleted())
	assert.Equal(t, api.SoftDeleteTTL, d.TTL)
	assert.Equal(t, int64(2), d.Metadata().InstanceVersion)
	assert.Equal(t, item.ETag, d.Metadata().ETag)
	assert.NotNil(t, field(t, page.Items[0].Body, "properties", "n"), "a soft delete keeps every field")

	_, err = database.SoftDelete(ctx(t), c, item, time.Now())
	assert.ErrorIs(t, err, database.ErrPreconditionFailed, "soft delete is etag-guarded")
}

func testTTL(t *testing.T, c database.Container) {
	id, body := doc("sub-ttl", api.ClusterResourceType, "short", "")
	body = bytes.Replace(body, []byte(`{"id"`), []byte(`{"ttl":1,"id"`), 1)
	_, err := c.Create(ctx(t), "sub-ttl", body)
	require.NoError(t, err)
	keep := create(t, c, "sub-ttl", "long")
	assert.Eventually(t, func() bool {
		_, err := c.Get(ctx(t), "sub-ttl", id)
		return errors.Is(err, database.ErrNotFound)
	}, 10*time.Second, 100*time.Millisecond, "a document with ttl expires")
	assert.Equal(t, []string{"sub-ttl/" + keep.ID}, collect(t, c, database.ListOptions{ResourceType: api.ClusterResourceType}))
}

func tree(t *testing.T, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	require.NoError(t, dec.Decode(&v))
	return arohcp.WithoutSystemProperties(v)
}

// testFixtures stores every real ARO-HCP document, changes the one field hcpsched owns on
// it through the codec, replaces it and reads it back: everything else must be equal.
func testFixtures(t *testing.T, newContainer NewContainer) {
	c := newContainer(t)
	for i, f := range arohcp.All() {
		t.Run(f.Name, func(t *testing.T) {
			original := tree(t, f.Data)
			pk := original["partitionKey"].(string)
			// Two fixtures may be versions of one document; give each its own partition.
			pk = fmt.Sprintf("%s-%d", pk, i)
			body := bytes.Replace(f.Data, fmt.Appendf(nil, "%q", original["partitionKey"]), fmt.Appendf(nil, "%q", pk), 1)
			original = tree(t, body)

			stored, err := c.Create(ctx(t), pk, body)
			require.NoError(t, err)
			assert.Equal(t, original, tree(t, stored.Body), "create stores the document as given")

			changed, change, err := arohcp.ChangeOwnedField(stored.Body)
			require.NoError(t, err)
			d, err := api.Decode[api.RawProperties](changed)
			require.NoError(t, err)
			d.ETag = stored.ETag
			d.PrepareReplace()
			out, err := api.Encode(d)
			require.NoError(t, err)
			_, err = c.Replace(ctx(t), pk, stored.ID, out, stored.ETag)
			require.NoError(t, err)
			got, err := c.Get(ctx(t), pk, stored.ID)
			require.NoError(t, err)

			want := original
			if change != nil {
				set(want, change.Path, change.Value)
			}
			props := want["properties"].(map[string]any)
			meta, _ := props["cosmosMetadata"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
				props["cosmosMetadata"] = meta
			}
			version := int64(1)
			if n, ok := meta["instanceVersion"].(json.Number); ok {
				if v, _ := n.Int64(); v > 0 {
					version = v
				}
			}
			meta["instanceVersion"] = json.Number(fmt.Sprint(version + 1))
			meta["etag"] = stored.ETag
			if _, ok := meta["resourceID"]; !ok {
				meta["resourceID"] = want["resourceID"]
			}
			if _, ok := meta["partitionKey"]; !ok {
				meta["partitionKey"] = pk
			}
			assert.Equal(t, want, tree(t, got.Body))
		})
	}
}

func set(root map[string]any, path []string, value any) {
	m := root
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = value
}
