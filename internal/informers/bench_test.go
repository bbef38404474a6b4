package informers_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// BenchmarkRelist measures how long an informer takes to list and cache N real-shaped
// cluster documents from the memory store (so the codec and cache dominate, not I/O),
// and the heap the cache holds per document, for full and lean caches over one store. The feed starts at the factory's creation
// (no margin), so the list, not a replay of the freshly written documents, is measured.
func BenchmarkRelist(b *testing.B) {
	for _, n := range benchSizes {
		store := populate(b, n)
		for _, docs := range []informers.Documents{informers.FullDocuments, informers.LeanDocuments} {
			b.Run(fmt.Sprintf("docs=%d/documents=%s", n, docs), func(b *testing.B) {
				b.ResetTimer()
				var perDoc float64
				for range b.N {
					b.StopTimer()
					runtime.GC()
					var before runtime.MemStats
					runtime.ReadMemStats(&before)
					factory, err := informers.NewFactory(store, informers.Options{Registerer: prometheus.NewRegistry(), RelistPeriod: time.Hour, StartMargin: time.Nanosecond, Documents: docs})
					require.NoError(b, err)
					clusters := informers.NewCaches(factory).Clusters()
					ctx, cancel := context.WithCancel(context.Background())
					b.StartTimer()
					factory.Start(ctx)
					require.True(b, factory.WaitForCacheSync(ctx))
					b.StopTimer()
					require.Len(b, clusters.Lister().List(), n)
					runtime.GC()
					var after runtime.MemStats
					runtime.ReadMemStats(&after)
					perDoc = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
					runtime.KeepAlive(clusters)
					cancel()
					b.StartTimer()
				}
				b.ReportMetric(perDoc, "heap-bytes/doc")
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/doc")
			})
		}
	}
}

func populate(b *testing.B, n int) database.Store {
	b.Helper()
	store := memory.New()
	c := store.Container(api.ResourcesContainer)
	template, err := api.Decode[api.ClusterProperties](arohcp.Get("hcpcluster-accepted-with-tags.json"))
	require.NoError(b, err)
	ctx := context.Background()
	for i := range n {
		d := template.DeepCopy()
		rid := api.MustParseResourceID(fmt.Sprintf("/subscriptions/sub-%d/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c-%d", i%100, i))
		d.ID, d.ResourceID, d.PartitionKey = api.CosmosID(rid.String()), rid.String(), fmt.Sprintf("sub-%d", i%100)
		d.Metadata().ResourceID, d.Metadata().PartitionKey = d.ResourceID, d.PartitionKey
		_, err := database.Create(ctx, c, d)
		require.NoError(b, err)
	}
	return store
}

// benchSizes are the cache sizes BenchmarkRelist measures; the acceptance figure is at
// 100,000 documents.
var benchSizes = []int{10_000, 100_000}
