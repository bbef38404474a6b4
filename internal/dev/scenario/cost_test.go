package scenario

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/hcpsched/hcpsched/internal/dev/benchreport"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
)

// scrape is a backend's /metrics page at one moment, in the text format.
func scrape(t *testing.T, page string) counters {
	t.Helper()
	families, err := parseMetrics(strings.NewReader(page))
	require.NoError(t, err)
	return countersOf(families)
}

// The cost figures come from the difference of two scrapes: requests and 412s by
// controller, queue waits per controller, the process's CPU and heap.
func TestCostFromTwoScrapes(t *testing.T) {
	base := scrape(t, `
# TYPE hcpsched_cosmos_requests_total counter
hcpsched_cosmos_requests_total{operation="replace",status_code="200",cosmos_container="Fleet",controller="PlacementController"} 10
hcpsched_cosmos_requests_total{operation="change_feed",status_code="304",cosmos_container="Resources",controller="none"} 100
# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{name="PlacementController",le="0.01"} 5
workqueue_queue_duration_seconds_bucket{name="PlacementController",le="0.1"} 5
workqueue_queue_duration_seconds_bucket{name="PlacementController",le="1"} 5
workqueue_queue_duration_seconds_bucket{name="PlacementController",le="+Inf"} 5
workqueue_queue_duration_seconds_sum{name="PlacementController"} 0.01
workqueue_queue_duration_seconds_count{name="PlacementController"} 5
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 3
# TYPE go_memstats_alloc_bytes_total counter
go_memstats_alloc_bytes_total 2e6
# TYPE go_memstats_heap_alloc_bytes gauge
go_memstats_heap_alloc_bytes 1e6
`)
	end := scrape(t, `
# TYPE hcpsched_cosmos_requests_total counter
hcpsched_cosmos_requests_total{operation="replace",status_code="200",cosmos_container="Fleet",controller="PlacementController"} 210
hcpsched_cosmos_requests_total{operation="replace",status_code="412",cosmos_container="Fleet",controller="PlacementController"} 20
hcpsched_cosmos_requests_total{operation="patch",status_code="200",cosmos_container="Resources",controller="ManagementClusterPlacementSyncController"} 100
hcpsched_cosmos_requests_total{operation="change_feed",status_code="304",cosmos_container="Resources",controller="none"} 400
# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{name="PlacementController",le="0.01"} 55
workqueue_queue_duration_seconds_bucket{name="PlacementController",le="0.1"} 104
workqueue_queue_duration_seconds_bucket{name="PlacementController",le="1"} 105
workqueue_queue_duration_seconds_bucket{name="PlacementController",le="+Inf"} 105
workqueue_queue_duration_seconds_sum{name="PlacementController"} 4.01
workqueue_queue_duration_seconds_count{name="PlacementController"} 105
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 4.2
# TYPE go_memstats_alloc_bytes_total counter
go_memstats_alloc_bytes_total 5.32e7
# TYPE go_memstats_heap_alloc_bytes gauge
go_memstats_heap_alloc_bytes 4e6
# TYPE go_memstats_next_gc_bytes gauge
go_memstats_next_gc_bytes 8e6
# TYPE go_gc_gogc_percent gauge
go_gc_gogc_percent 100
`)
	since := time.Unix(1000, 0)
	log := []fakeclusterservice.Request{
		{Time: since.Add(-time.Second), Method: http.MethodPost, Path: fakeclusterservice.ClustersPath, Header: agent("hcpsched-backend")},
		{Time: since.Add(time.Second), Method: http.MethodPost, Path: fakeclusterservice.ClustersPath, Header: agent("hcpsched-backend OCM-SDK/0.1")},
		{Time: since.Add(time.Second), Method: http.MethodGet, Path: fakeclusterservice.ClustersPath, Query: "search=name+%3D+%27x%27", Header: agent("hcpsched-backend")},
		{Time: since.Add(time.Second), Method: http.MethodGet, Path: fakeclusterservice.ClustersPath + "/0123456789abcdefghijklmnopqrstuv", Header: agent("hcpsched-backend")},
		{Time: since.Add(time.Second), Method: http.MethodGet, Path: fakeclusterservice.ClustersPath + "/0123456789abcdefghijklmnopqrstuv", Header: agent("hcpsched-backend")},
		{Time: since.Add(time.Second), Method: http.MethodPost, Path: "/api/aro_hcp/v1alpha1/provision_shards", Header: agent("hcpsched-fleet")},
	}
	w := window{counters: end.since(base), runnerCPU: 0.75, since: since}

	got := cost(StoreEmulator, 100, w, log)
	assert.InDelta(t, 1.2, got.BackendCPUSeconds, 1e-9)
	assert.InDelta(t, 5.12e7, got.BackendAllocBytes, 1e-3, "the allocations between the scrapes")
	assert.Equal(t, 0.75, got.FleetCPUSeconds)
	assert.Equal(t, scopeBackendProcess, got.BackendCPUScope)
	assert.Equal(t, scopeRunnerProcess, got.FleetCPUScope)
	assert.Equal(t, 3e6, got.HeapBytes, "the live heap at the end, 8 MB goal at GOGC 100, over the allocated heap at the start")
	assert.Equal(t, 300.0, got.CachedDocuments, "a cluster, its SPC and its subscription per cluster")
	assert.Equal(t, map[string]map[string]float64{
		"PlacementController":                      {"replace": 220},
		"ManagementClusterPlacementSyncController": {"patch": 100},
		"none": {"change_feed": 300},
	}, got.Requests)
	assert.Equal(t, map[string]float64{"PlacementController": 20}, got.Conflicts)
	assert.Equal(t, map[string]float64{"POST /clusters": 1, "GET /clusters?search": 1, "GET /clusters/-": 2}, got.ClusterServiceCalls,
		"the backend's calls from the window's start; the fleet's are not counted")
	require.Contains(t, got.QueueWait, "PlacementController")
	wait := got.QueueWait["PlacementController"]
	assert.Equal(t, 100.0, wait.Items)
	assert.InDelta(t, 0.04, wait.MeanSeconds, 1e-9, "4 s over 100 items")
	// The 99th of 100 lies in (0.01, 0.1]: 50 items at or below 0.01, 49 more there.
	assert.InDelta(t, 0.1, wait.P99Seconds, 1e-9)

	mem := cost(StoreMemory, 100, w, nil)
	assert.Equal(t, scopeWholeProcess, mem.BackendCPUScope)
	assert.Zero(t, mem.FleetCPUSeconds, "in one process the fleet's CPU is in the backend's figure")
	assert.Equal(t, scopeFleetInProcess, mem.FleetCPUScope)
	assert.Equal(t, scopeHeapWholeProcess, mem.HeapScope)

	// And through the report: per cluster.
	stats := benchreport.Run{Store: StoreEmulator, Clusters: 100, Placements: 100, Cost: got}.Stats().Cost
	assert.InDelta(t, 12.0, stats.BackendCPUMillisecondsPerCluster, 1e-9)
	assert.InDelta(t, 500.0, stats.BackendAllocKBPerCluster, 1e-9, "51.2 MB over 100 clusters")
	assert.InDelta(t, 10_000.0, stats.HeapBytesPerCachedDocument, 1e-9)
	assert.InDelta(t, 0.2, stats.ConflictsPerPlacementByController["PlacementController"], 1e-9)
	assert.InDelta(t, 0.04, stats.ClusterServiceCallsPerCluster, 1e-9)
}

func TestLiveHeap(t *testing.T) {
	assert.Equal(t, 4e6, liveHeap(7e6, 8e6, 100), "the goal of the last GC over 1+GOGC/100")
	assert.Equal(t, 6e6, liveHeap(7e6, 9e6, 50))
	assert.Equal(t, 7e6, liveHeap(7e6, 0, 100), "without a goal, the allocated heap")
	assert.Equal(t, 7e6, liveHeap(7e6, 8e6, 0), "GOGC off: the allocated heap")
}

func agent(ua string) http.Header { return http.Header{"User-Agent": []string{ua}} }

func TestHistogramQuantile(t *testing.T) {
	h := promHistogram{count: 10, sum: 1, buckets: map[float64]float64{0.1: 2, 1: 10, math.Inf(1): 10}}
	assert.InDelta(t, 0.1, h.mean(), 1e-9)
	assert.InDelta(t, 0.05, h.quantile(0.1), 1e-9, "within the first bucket, from 0")
	assert.InDelta(t, 0.1+0.9*(9.9-2)/8, h.quantile(0.99), 1e-9)
	tail := promHistogram{count: 10, buckets: map[float64]float64{0.1: 5, math.Inf(1): 10}}
	assert.Equal(t, 0.1, tail.quantile(0.99), "a rank in +Inf is the highest finite bound")
	assert.Zero(t, promHistogram{}.quantile(0.99))
	assert.Zero(t, promHistogram{}.mean())
}

func TestParseStatCPU(t *testing.T) {
	// A command name with a space and a parenthesis; utime 250, stime 70 ticks.
	stat := "4242 (back end) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 70 0 0 20 0 12 0 100 1000000 2000"
	got, err := parseStatCPU(stat)
	require.NoError(t, err)
	assert.InDelta(t, 3.2, got, 1e-9)
	_, err = parseStatCPU("4242 (x) S 1 2")
	assert.Error(t, err)
	_, err = parseStatCPU("no command")
	assert.Error(t, err)
	self, err := processCPUSeconds(0)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, self, 0.0)
}

// The scrape's histogram buckets become a promHistogram, and since() subtracts them.
func TestPromHistogramOfAndSince(t *testing.T) {
	h := promHistogramOf(&dto.Histogram{SampleCount: proto.Uint64(4), SampleSum: proto.Float64(2),
		Bucket: []*dto.Bucket{{UpperBound: proto.Float64(1), CumulativeCount: proto.Uint64(3)}}})
	assert.Equal(t, promHistogram{count: 4, sum: 2, buckets: map[float64]float64{1: 3}}, h)
	d := h.combine(promHistogram{count: 1, sum: 0.5, buckets: map[float64]float64{1: 1}}, -1)
	assert.Equal(t, promHistogram{count: 3, sum: 1.5, buckets: map[float64]float64{1: 2}}, d)
}

// parseStatCPU reads any /proc stat line without panicking, and what it accepts is a
// finite number of seconds.
func FuzzParseStatCPU(f *testing.F) {
	f.Add("4242 (back end) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 70 0 0 20 0 12 0 100 1000000 2000")
	f.Add("1 ((sd-pam)) S 0 1 1 0 -1 0 0 0 0 0 9223372036854775807 1")
	f.Add(")")
	f.Fuzz(func(t *testing.T, stat string) {
		got, err := parseStatCPU(stat)
		if err == nil {
			assert.False(t, math.IsNaN(got) || math.IsInf(got, 0), "%q: %v", stat, got)
		}
	})
}

// callName names any logged request without panicking: its method, then a path of words
// and dashes.
func FuzzCallName(f *testing.F) {
	f.Add(http.MethodGet, fakeclusterservice.ClustersPath+"/0123456789abcdefghijklmnopqrstuv", "")
	f.Add(http.MethodGet, fakeclusterservice.ClustersPath, "search=x")
	f.Add("POST", "/api", "")
	f.Fuzz(func(t *testing.T, method, path, query string) {
		name := callName(fakeclusterservice.Request{Method: method, Path: path, Query: query})
		require.True(t, strings.HasPrefix(name, method+" /"), name)
		rest, _ := strings.CutSuffix(strings.TrimPrefix(name, method+" /"), "?search")
		for _, seg := range strings.Split(rest, "/") {
			assert.True(t, seg == "" || seg == "-" || pathWord.MatchString(seg), "%q in %q", seg, name)
		}
	})
}
