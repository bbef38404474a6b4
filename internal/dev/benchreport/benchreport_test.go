package benchreport

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	// 1..100 ms in a scrambled order: the nearest rank of p is p itself.
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = ms((i*37)%100 + 1)
	}

	type probe struct {
		p    float64
		want time.Duration
	}
	tests := []struct {
		name   string
		in     []time.Duration
		probes []probe
	}{
		{
			name:   "empty",
			in:     nil,
			probes: []probe{{50, 0}, {100, 0}},
		},
		{
			name:   "one element is every percentile",
			in:     durations(7),
			probes: []probe{{0.1, ms(7)}, {50, ms(7)}, {99, ms(7)}, {100, ms(7)}},
		},
		{
			// Sorted: 10 20 30 40 50. Rank = ceil(p/100 * 5).
			name: "five unsorted",
			in:   durations(40, 10, 50, 30, 20),
			probes: []probe{
				{1, ms(10)},  // ceil(0.05) = 1
				{20, ms(10)}, // ceil(1.0) = 1, exactly on a rank
				{21, ms(20)}, // ceil(1.05) = 2
				{50, ms(30)}, // ceil(2.5) = 3
				{80, ms(40)}, // ceil(4.0) = 4
				{81, ms(50)}, // ceil(4.05) = 5
				{100, ms(50)},
			},
		},
		{
			// Sorted: 1..10. p90 is exactly rank 9 and p90.1 the next one up.
			name: "ten unsorted",
			in:   durations(9, 2, 7, 10, 1, 5, 3, 8, 6, 4),
			probes: []probe{
				{10, ms(1)}, {50, ms(5)}, {90, ms(9)}, {90.1, ms(10)}, {99, ms(10)}, {100, ms(10)},
			},
		},
		{
			// p7 and p55 are where p/100*n lands a hair above the rank in floating point.
			name: "hundred scrambled",
			in:   hundred,
			probes: []probe{
				{1, ms(1)}, {7, ms(7)}, {50, ms(50)}, {55, ms(55)}, {90, ms(90)},
				{99, ms(99)}, {99.5, ms(100)}, {100, ms(100)},
			},
		},
		{
			// Sorted: 2 2 2 9. Ties are values like any other.
			name:   "duplicates",
			in:     durations(9, 2, 2, 2),
			probes: []probe{{25, ms(2)}, {75, ms(2)}, {76, ms(9)}, {100, ms(9)}},
		},
		{
			// Outside (0,100] is a caller bug; clamp rather than panic on an index.
			name:   "out of range p clamps",
			in:     durations(3, 1, 2),
			probes: []probe{{0, ms(1)}, {-5, ms(1)}, {150, ms(3)}, {math.NaN(), 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := slices.Clone(tt.in)
			for _, pr := range tt.probes {
				assert.Equal(t, pr.want, Percentile(tt.in, pr.p), "p=%v", pr.p)
			}
			assert.Equal(t, before, tt.in, "Percentile must not reorder its input")
		})
	}
}

func TestRunStats(t *testing.T) {
	// 1..100 ms, reversed so Stats has to sort.
	latencies := make([]time.Duration, 100)
	for i := range latencies {
		latencies[i] = ms(100 - i)
	}

	tests := []struct {
		name string
		run  Run
		want Stats
	}{
		{
			name: "hand-made emulator run",
			run: Run{
				Store: "emulator", Workers: 20, ManagementClusters: 5, Clusters: 120, Placements: 100,
				Elapsed: 4 * time.Second, Latencies: latencies,
				CosmosRequests: 350, RequestCharge: 1234.5, Conflicts: 7,
				PeakRSSBytes: 64 << 20, AddedLatency: 5 * time.Millisecond,
			},
			want: Stats{
				PlacementsPerSecond:        25,    // 100 in 4 s
				LatencyP50Seconds:          0.05,  // rank 50
				LatencyP90Seconds:          0.09,  // rank 90
				LatencyP99Seconds:          0.099, // rank 99
				CosmosRequestsPerPlacement: 3.5,   // 350 / 100
				RequestChargePerPlacement:  12.345,
				ConflictsPerPlacement:      0.07,
				PeakRSSBytes:               64 << 20,
				LatencyMaxSeconds:          0.1,
				Workers:                    20,
				ManagementClusters:         5,
				Clusters:                   120,
				Placements:                 100,
				ElapsedSeconds:             4,
				CosmosRequests:             350,
				RequestCharge:              1234.5,
				Conflicts:                  7,
				AddedLatencySeconds:        0.005,
				Cost:                       CostStats{CosmosRequestsPerCluster: 350.0 / 120},
			},
		},
		{
			name: "memory run has no request charge",
			run: Run{
				Store: "memory", Workers: 1, Clusters: 10, Placements: 10,
				Elapsed: 500 * time.Millisecond, Latencies: durations(30, 10, 20, 40, 50, 60, 70, 80, 90, 100),
				CosmosRequests: 40, PeakRSSBytes: 1 << 20,
			},
			want: Stats{
				PlacementsPerSecond:        20,
				LatencyP50Seconds:          0.05,
				LatencyP90Seconds:          0.09,
				LatencyP99Seconds:          0.1,
				CosmosRequestsPerPlacement: 4,
				PeakRSSBytes:               1 << 20,
				LatencyMaxSeconds:          0.1,
				Workers:                    1,
				Clusters:                   10,
				Placements:                 10,
				ElapsedSeconds:             0.5,
				CosmosRequests:             40,
				Cost:                       CostStats{CosmosRequestsPerCluster: 4},
			},
		},
		{
			name: "zero placements derive nothing",
			run: Run{
				Store: "emulator", Workers: 20, Clusters: 100, Elapsed: 3 * time.Second,
				CosmosRequests: 500, RequestCharge: 2000, Conflicts: 9,
			},
			want: Stats{
				Workers: 20, Clusters: 100, ElapsedSeconds: 3,
				CosmosRequests: 500, RequestCharge: 2000, Conflicts: 9,
				Cost: CostStats{CosmosRequestsPerCluster: 5},
			},
		},
		{
			name: "placements without elapsed time have no rate",
			run:  Run{Store: "memory", Workers: 1, Clusters: 1, Placements: 1, Latencies: durations(2)},
			want: Stats{
				LatencyP50Seconds: 0.002, LatencyP90Seconds: 0.002, LatencyP99Seconds: 0.002, LatencyMaxSeconds: 0.002,
				Workers: 1, Clusters: 1, Placements: 1,
			},
		},
		{
			name: "non-finite counters become zero",
			run: Run{
				Store: "memory", Workers: 1, Placements: 2, Elapsed: time.Second,
				CosmosRequests: math.NaN(), RequestCharge: math.Inf(1), Conflicts: math.Inf(-1),
			},
			want: Stats{PlacementsPerSecond: 2, Workers: 1, Placements: 2, ElapsedSeconds: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.run.Stats()
			assert.Equal(t, tt.want, got)
			_, err := json.Marshal(got)
			require.NoError(t, err, "every Stats must encode")
		})
	}
}

// requiredStatsFields are the json names the brief fixes for each workers object.
var requiredStatsFields = []string{
	"placements_per_second",
	"latency_p50_seconds",
	"latency_p90_seconds",
	"latency_p99_seconds",
	"cosmos_requests_per_placement",
	"request_charge_per_placement",
	"conflicts_per_placement",
	"peak_rss_bytes",
}

func readSummary(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc map[string]map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	return doc
}

func TestWriteSummary(t *testing.T) {
	runs := []Run{
		// memory: 100/s against 10/s; p50 10 ms against 40 ms.
		{Store: "memory", Workers: 20, Clusters: 200, Placements: 200, Elapsed: 2 * time.Second,
			Latencies: durations(10, 10, 10), CosmosRequests: 700},
		{Store: "memory", Workers: 1, Clusters: 200, Placements: 200, Elapsed: 20 * time.Second,
			Latencies: durations(40, 40, 40), CosmosRequests: 640},
		// emulator: 50/s against 8/s.
		{Store: "emulator", Workers: 20, Clusters: 200, Placements: 200, Elapsed: 4 * time.Second,
			Latencies: durations(20, 20, 20), CosmosRequests: 900, RequestCharge: 5000, Conflicts: 20},
		{Store: "emulator", Workers: 1, Clusters: 200, Placements: 200, Elapsed: 25 * time.Second,
			Latencies: durations(80, 80, 80), CosmosRequests: 800, RequestCharge: 4400},
	}
	path := filepath.Join(t.TempDir(), "not", "yet", "there", "summary.json")
	require.NoError(t, WriteSummary(path, runs))
	doc := readSummary(t, path)

	assert.ElementsMatch(t, []string{"memory", "emulator"}, slices.Collect(maps.Keys(doc)))
	wantStoreKeys := []string{
		"workers_20", "workers_1",
		"throughput_ratio_20_to_1", "latency_p50_ratio_20_to_1", "latency_p99_ratio_20_to_1",
	}
	for store, obj := range doc {
		assert.ElementsMatch(t, wantStoreKeys, slices.Collect(maps.Keys(obj)), store)
		for _, wk := range []string{"workers_20", "workers_1"} {
			stats, ok := obj[wk].(map[string]any)
			require.True(t, ok, "%s.%s is an object", store, wk)
			for _, field := range requiredStatsFields {
				require.Contains(t, stats, field, "%s.%s", store, wk)
				assert.IsType(t, float64(0), stats[field], "%s.%s.%s is a number", store, wk, field)
			}
		}
	}

	assert.InDelta(t, 10.0, doc["memory"]["throughput_ratio_20_to_1"], 1e-9)
	assert.InDelta(t, 6.25, doc["emulator"]["throughput_ratio_20_to_1"], 1e-9)
	assert.InDelta(t, 0.25, doc["memory"]["latency_p50_ratio_20_to_1"], 1e-9)
	assert.InDelta(t, 0.25, doc["emulator"]["latency_p99_ratio_20_to_1"], 1e-9)

	mem20 := doc["memory"]["workers_20"].(map[string]any)
	assert.InDelta(t, 100.0, mem20["placements_per_second"], 1e-9)
	assert.InDelta(t, 3.5, mem20["cosmos_requests_per_placement"], 1e-9)
	emu20 := doc["emulator"]["workers_20"].(map[string]any)
	assert.InDelta(t, 25.0, emu20["request_charge_per_placement"], 1e-9)
	assert.InDelta(t, 0.1, emu20["conflicts_per_placement"], 1e-9)
}

func TestSummaryKeys(t *testing.T) {
	run := func(store string, workers int, elapsed time.Duration) Run {
		return Run{Store: store, Workers: workers, Clusters: 10, Placements: 10, Elapsed: elapsed}
	}
	tests := []struct {
		name string
		runs []Run
		// want maps each store to its exact key set.
		want map[string][]string
		// ratios are throughput ratios to check, by store.
		ratios map[string]float64
	}{
		{
			name: "no runs",
			runs: nil,
			want: map[string][]string{},
		},
		{
			name: "single run has no ratio",
			runs: []Run{run("memory", 20, time.Second)},
			want: map[string][]string{"memory": {"workers_20"}},
		},
		{
			name: "ratio compares the largest and smallest worker counts",
			runs: []Run{run("emulator", 5, time.Second), run("emulator", 1, 4*time.Second), run("emulator", 20, 500*time.Millisecond)},
			want: map[string][]string{"emulator": {
				"workers_5", "workers_1", "workers_20",
				"throughput_ratio_20_to_1", "latency_p50_ratio_20_to_1", "latency_p99_ratio_20_to_1",
			}},
			ratios: map[string]float64{"emulator": 8}, // 20/s over 2.5/s
		},
		{
			name: "stores differ in worker counts",
			runs: []Run{run("memory", 8, time.Second), run("memory", 2, 2*time.Second), run("emulator", 4, time.Second)},
			want: map[string][]string{
				"memory":   {"workers_8", "workers_2", "throughput_ratio_8_to_2", "latency_p50_ratio_8_to_2", "latency_p99_ratio_8_to_2"},
				"emulator": {"workers_4"},
			},
			ratios: map[string]float64{"memory": 2},
		},
		{
			name: "a repeated worker count keeps the later run",
			runs: []Run{run("memory", 20, 10*time.Second), run("memory", 1, 10*time.Second), run("memory", 20, time.Second)},
			want: map[string][]string{"memory": {
				"workers_20", "workers_1",
				"throughput_ratio_20_to_1", "latency_p50_ratio_20_to_1", "latency_p99_ratio_20_to_1",
			}},
			ratios: map[string]float64{"memory": 10},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summary(tt.runs)
			require.NotNil(t, got)
			require.Len(t, got, len(tt.want))
			for store, keys := range tt.want {
				require.Contains(t, got, store)
				assert.ElementsMatch(t, keys, slices.Collect(maps.Keys(got[store])), store)
			}
			for store, want := range tt.ratios {
				for k, v := range got[store] {
					if strings.HasPrefix(k, "throughput_ratio_") {
						assert.InDelta(t, want, v, 1e-9, "%s.%s", store, k)
					}
				}
			}

			// What Summary returns is what WriteSummary writes.
			path := filepath.Join(t.TempDir(), "summary.json")
			require.NoError(t, WriteSummary(path, tt.runs))
			doc := readSummary(t, path)
			assert.Len(t, doc, len(tt.want))
		})
	}
}

func TestSummaryZeroPlacements(t *testing.T) {
	runs := []Run{
		{Store: "emulator", Workers: 20, Clusters: 100, CosmosRequests: 50, RequestCharge: 300, Conflicts: 4, PeakRSSBytes: 1 << 20},
		{Store: "emulator", Workers: 1, Clusters: 100, Elapsed: 10 * time.Second, CosmosRequests: 20},
	}
	data, err := json.Marshal(Summary(runs))
	require.NoError(t, err, "no NaN or Inf may reach the encoder")

	var doc map[string]map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	emulator := doc["emulator"]
	assert.Equal(t, 0.0, emulator["throughput_ratio_20_to_1"])
	assert.Equal(t, 0.0, emulator["latency_p50_ratio_20_to_1"])
	assert.Equal(t, 0.0, emulator["latency_p99_ratio_20_to_1"])
	for _, wk := range []string{"workers_20", "workers_1"} {
		stats := emulator[wk].(map[string]any)
		for _, field := range requiredStatsFields {
			if field == "peak_rss_bytes" {
				continue // measured, not derived from placements
			}
			assert.Equal(t, 0.0, stats[field], "%s.%s", wk, field)
		}
	}
	assert.Equal(t, float64(1<<20), emulator["workers_20"].(map[string]any)["peak_rss_bytes"])
}

func TestWriteSummaryReportsUnwritablePath(t *testing.T) {
	// A regular file where a directory is needed.
	blocker := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o644))
	err := WriteSummary(filepath.Join(blocker, "summary.json"), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), blocker)
}
