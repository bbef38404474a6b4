package benchreport

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// costRun is an emulator run of 100 clusters with every cost figure measured.
func costRun(workers int) Run {
	return Run{
		Store: "emulator", Workers: workers, ManagementClusters: 5, Clusters: 100, Placements: 80,
		Elapsed: 10 * time.Second, Latencies: durations(10, 20), CosmosRequests: 700, Conflicts: 8,
		Cost: Cost{
			BackendCPUSeconds: 1.2, BackendCPUScope: "backend process", BackendAllocBytes: 51_200_000,
			FleetCPUSeconds: 0.5, FleetCPUScope: "runner process",
			HeapBytes: 3_000_000, HeapScope: "backend heap", CachedDocuments: 300,
			QueueWait: map[string]QueueWait{"PlacementController": {Items: 120, MeanSeconds: 0.044, P99Seconds: 0.5}},
			Requests: map[string]map[string]float64{
				"PlacementController": {"replace": 200, "patch": 100},
				"none":                {"change_feed": 400},
			},
			Conflicts:           map[string]float64{"PlacementController": 8},
			ClusterServiceCalls: map[string]float64{"POST /clusters": 100, "GET /clusters/-": 180},
		},
	}
}

func TestCostStatsArePerCluster(t *testing.T) {
	got := costRun(20).costStats()
	assert.Equal(t, CostStats{
		BackendCPUMillisecondsPerCluster:  12, // 1.2 s over 100 clusters
		BackendCPUScope:                   "backend process",
		BackendAllocKBPerCluster:          500, // 51.2 MB over 100 clusters
		FleetCPUMillisecondsPerCluster:    5,
		FleetCPUScope:                     "runner process",
		HeapBytesPerCachedDocument:        10_000, // 3 MB over 300 documents
		HeapScope:                         "backend heap",
		CachedDocuments:                   300,
		CosmosRequestsPerCluster:          7,
		RequestsPerCluster:                map[string]map[string]float64{"PlacementController": {"replace": 2, "patch": 1}, "none": {"change_feed": 4}},
		ConflictsPerPlacementByController: map[string]float64{"PlacementController": 0.1}, // 8 over 80 placements
		ClusterServiceCallsPerCluster:     2.8,
		ClusterServiceCallsPerClusterBy:   map[string]float64{"POST /clusters": 1, "GET /clusters/-": 1.8},
		QueueWait:                         map[string]QueueWait{"PlacementController": {Items: 120, MeanSeconds: 0.044, P99Seconds: 0.5}},
	}, got)
	assert.Equal(t, map[string]float64{"PlacementController": 3, "none": 4}, got.requestTotals())
	assert.Equal(t, CostStats{}, Run{}.costStats(), "a run without a cost derives none, and no empty maps")
}

func TestSummaryCarriesTheCost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.json")
	require.NoError(t, WriteSummary(path, []Run{costRun(20), costRun(1)}))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc map[string]map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &doc))
	var stats struct {
		Cost map[string]any `json:"cost"`
	}
	require.NoError(t, json.Unmarshal(doc["emulator"]["workers_20"], &stats))
	cost := stats.Cost
	for field, want := range map[string]any{
		"backend_cpu_ms_per_cluster": 12.0, "backend_cpu_scope": "backend process", "backend_alloc_kb_per_cluster": 500.0, "fleet_cpu_ms_per_cluster": 5.0,
		"heap_bytes_per_cached_document": 10000.0, "cosmos_requests_per_cluster": 7.0, "cluster_service_calls_per_cluster": 2.8,
	} {
		assert.Equal(t, want, cost[field], field)
	}
	assert.Equal(t, map[string]any{"PlacementController": map[string]any{"replace": 2.0, "patch": 1.0}, "none": map[string]any{"change_feed": 4.0}},
		cost["cosmos_requests_per_cluster_by_controller"])
	assert.Equal(t, map[string]any{"PlacementController": map[string]any{"items": 120.0, "mean_seconds": 0.044, "p99_seconds": 0.5}},
		cost["queue_wait_by_controller"])
	assert.Equal(t, map[string]any{"PlacementController": 0.1}, cost["conflicts_per_placement_by_controller"])
}

func TestWriteCostTables(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteCostTables(&b, []Run{costRun(20)}))
	out := b.String()
	for _, want := range []string{
		"Cost per cluster", "emulator, 20 workers", "12.00", "500", "5.00", "10000", "7.00", "0.100", "2.80",
		"backend process", "runner process", "backend heap",
		"PlacementController", "44.0ms / 500.0ms",
		"PlacementController replace", "2.000", "none change_feed", "4.000", "PlacementController (all)", "3.000",
		"POST /clusters", "GET /clusters/-", "1.800",
	} {
		assert.Contains(t, out, want)
	}

	b.Reset()
	require.NoError(t, WriteCostTables(&b, []Run{{Store: "memory", Workers: 1}}))
	assert.Empty(t, b.String(), "runs that measured no cost print no cost tables")
}

// A run with a cost adds one table per figure under the panels, and the chart grows to
// hold them; without one the chart is the three panels.
func TestChartDrawsTheCostTables(t *testing.T) {
	plain := renderChart([]Run{{Store: "memory", Workers: 1, Placements: 1, Clusters: 1, Elapsed: time.Second, Latencies: durations(5)}})
	assert.NotContains(t, plain, `id="cost-`)
	assert.Contains(t, plain, `height="500"`)

	withCost := renderChart([]Run{costRun(20), costRun(1)})
	tables := costTables([]Run{costRun(20), costRun(1)})
	require.Len(t, tables, 6)
	for i, tbl := range tables {
		assert.Contains(t, withCost, `id="cost-`+strconv.Itoa(i)+`"`)
		assert.Contains(t, withCost, escape(tbl.title))
	}
	for _, want := range []string{"12.00", "44.0ms / 500.0ms", "PlacementController replace", "GET /clusters/-"} {
		assert.Contains(t, withCost, want)
	}
	assert.Contains(t, withCost, `height="`+strconv.Itoa(chartHeight+tablesHeight(tables))+`"`)
	assert.Greater(t, tablesHeight(tables), 0)
	assert.Equal(t, 1, strings.Count(withCost, "<svg "))
}
