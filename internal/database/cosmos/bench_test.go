package cosmos_test

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/cosmostest"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// The store's own CPU per request, through its whole pipeline (azcosmos, net/http and the
// store's policies) against the project emulator, which runs in a process of its own:
// what every controller pays for a request before it does anything of its own. The
// figure is this process's CPU (user + system), not the wall time the benchmark reports.

const benchFixture = "hcpcluster-accepted-with-tags.json"

// BenchmarkPatch is one If-Match patch of a real ARO-HCP cluster document, answered with
// its new etag alone (PatchOptions.Minimal), as docwrite sends every write; 20 at a time,
// about as many as the backend's workers keep in flight, so that the CPU per request is
// not the scheduler's spinning between one request and the next.
func BenchmarkPatch(b *testing.B) {
	c := benchContainer(b)
	var n atomic.Int64
	b.SetParallelism(10)
	start := cpuTime(b)
	b.RunParallel(func(pb *testing.PB) {
		pk, body := fixtureCopy(b, fmt.Sprintf("patched-%d", n.Add(1)))
		item, err := c.Create(context.Background(), pk, body)
		if err != nil {
			b.Error(err)
			return
		}
		etag := item.ETag
		for i := 0; pb.Next(); i++ {
			// A field ARO-HCP writes, in the shape it writes it.
			ops := []database.PatchOperation{{Kind: database.PatchSet, Path: "/properties/serviceProviderProperties/clusterServiceID",
				Value: fmt.Appendf(nil, "%q", fmt.Sprintf("/api/aro_hcp/v1alpha1/clusters/bench%d", i))}}
			out, err := c.Patch(context.Background(), pk, item.ID, ops, database.PatchOptions{IfMatch: etag, Minimal: true})
			if err != nil {
				b.Error(err)
				return
			}
			etag = out.ETag
		}
	})
	b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkChangeFeed drains the change feed of 500 real ARO-HCP cluster documents from
// the beginning, in the pages the informers ask for.
func BenchmarkChangeFeed(b *testing.B) {
	const documents = 500
	c := benchContainer(b)
	for i := range documents {
		pk, body := fixtureCopy(b, fmt.Sprintf("fed-%d", i))
		_, err := c.Create(b.Context(), pk, body)
		require.NoError(b, err)
	}
	var read int
	start := cpuTime(b)
	for b.Loop() {
		opts := database.ChangeFeedOptions{}
		for {
			page, err := c.ChangeFeed(b.Context(), opts)
			if err != nil {
				b.Fatal(err)
			}
			for _, it := range page.Items {
				read += len(it.Body)
			}
			if len(page.Items) == 0 {
				break
			}
			opts.Continuation = page.Continuation
		}
	}
	b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/(float64(read)/1024), "cpu-µs/KB")
}

func benchContainer(b *testing.B) database.Container {
	store := cosmostest.New(b, "hcpsched-bench", nil).Store
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(b, store.EnsureContainer(ctx, "bench"))
	return store.Container("bench")
}

// fixtureCopy is the fixture cluster document under another id, in its own partition.
func fixtureCopy(b *testing.B, name string) (pk string, body []byte) {
	data := arohcp.Get(benchFixture)
	doc, err := api.Decode[api.ClusterProperties](data)
	require.NoError(b, err)
	body = bytes.Replace(data, fmt.Appendf(nil, "%q", doc.ID), fmt.Appendf(nil, "%q", doc.ID+"-"+name), 1)
	return doc.PartitionKey, body
}

// cpuTime is this process's CPU so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &u))
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
