package emulator

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/require"
)

// Point-operation latency through the real SDK, one request at a time.
func BenchmarkPointRead(b *testing.B) {
	c := newContainer(b, sharedClient(b), containerSpec{})
	create(b, c, doc{ID: "a", PK: "p", ResourceType: "t", ResourceID: "/subscriptions/s/x"})
	pk := azcosmos.NewPartitionKeyString("p")
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.ReadItem(ctx, pk, "a", nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCreate(b *testing.B) {
	c := newContainer(b, sharedClient(b), containerSpec{})
	pk := azcosmos.NewPartitionKeyString("p")
	ctx := context.Background()
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = mustJSON(b, doc{ID: fmt.Sprintf("d%d", i), PK: "p", ResourceType: "t", ResourceID: "/subscriptions/s/x"})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.CreateItem(ctx, pk, bodies[i], nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReplace(b *testing.B) {
	c := newContainer(b, sharedClient(b), containerSpec{})
	create(b, c, doc{ID: "a", PK: "p"})
	pk := azcosmos.NewPartitionKeyString("p")
	ctx := context.Background()
	body := mustJSON(b, doc{ID: "a", PK: "p", ResourceType: "t", ResourceID: "/subscriptions/s/x", Value: 1})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.ReplaceItem(ctx, pk, "a", body, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// Change-feed throughput: draining a backlog of 5,000 changes in pages of
// 1,000, from the beginning until the 304, reported as changes per second.
func BenchmarkChangeFeedBacklog(b *testing.B) {
	const backlog, pageSize = 5000, 1000
	c := newContainer(b, sharedClient(b), containerSpec{})
	ctx := context.Background()
	for start := 0; start < backlog; start += 100 {
		pk := fmt.Sprintf("p%d", start/100)
		batch := c.NewTransactionalBatch(azcosmos.NewPartitionKeyString(pk))
		for i := start; i < start+100; i++ {
			batch.CreateItem(mustJSON(b, doc{ID: fmt.Sprintf("d%d", i), PK: pk, ResourceType: "t", ResourceID: "/subscriptions/s/x"}), nil)
		}
		resp, err := c.ExecuteTransactionalBatch(ctx, batch, nil)
		require.NoError(b, err)
		require.True(b, resp.Success)
	}

	b.ResetTimer()
	started := time.Now()
	for i := 0; i < b.N; i++ {
		opts := azcosmos.ChangeFeedOptions{MaxItemCount: pageSize, FeedRange: &fullRange}
		seen := 0
		for {
			resp, err := c.ReadChangeFeed(ctx, &opts)
			if err != nil {
				b.Fatal(err)
			}
			if resp.RawResponse.StatusCode == http.StatusNotModified {
				break
			}
			seen += len(resp.Items)
			cont := resp.ContinuationToken
			opts.Continuation = &cont
		}
		if seen != backlog {
			b.Fatalf("read %d changes, want %d", seen, backlog)
		}
	}
	b.ReportMetric(float64(backlog*b.N)/time.Since(started).Seconds(), "changes/s")
}

// A partition-scoped query page, for comparison with point reads.
func BenchmarkQueryPartitionPage(b *testing.B) {
	c := newContainer(b, sharedClient(b), containerSpec{})
	for i := 0; i < 200; i++ {
		create(b, c, doc{ID: fmt.Sprintf("d%d", i), PK: []string{"a", "b"}[i%2], ResourceType: "t"})
	}
	pk := azcosmos.NewPartitionKeyString("a")
	opts := &azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@t", Value: "T"}}}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pager := c.NewQueryItemsPager("SELECT * FROM c WHERE STRINGEQUALS(c.resourceType, @t, true)", pk, opts)
		page, err := pager.NextPage(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(page.Items) != 100 {
			b.Fatalf("got %d items", len(page.Items))
		}
	}
}
