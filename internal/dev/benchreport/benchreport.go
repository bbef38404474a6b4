package benchreport

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Run is one measured run: one store, one worker count.
type Run struct {
	Store              string // "memory" or "emulator"
	Workers            int
	ManagementClusters int
	Clusters           int           // clusters created
	Placements         int           // clusters placed by the end of the run
	Elapsed            time.Duration // first creation to last placement
	// Latencies are creation -> spec (placement) latencies, one per placed cluster, any order.
	Latencies []time.Duration
	// PlacedAt are the offsets from the run's start at which each cluster was placed, any order
	// (for the throughput-over-time curve).
	PlacedAt       []time.Duration
	CosmosRequests float64 // backend's Cosmos requests during the run (all operations, all status codes)
	RequestCharge  float64 // backend's request units during the run (0 when the store has none)
	Conflicts      float64 // 412 responses the backend got during the run
	PeakRSSBytes   int64
	AddedLatency   time.Duration // per-request latency the store added (the emulator's, or the memory store's model)
	// Cost is the run's CPU, heap, queue waits, requests by controller and Cluster
	// Service calls.
	Cost Cost
}

// Stats are the derived figures of a Run. Every float is finite, so a Stats always
// encodes as JSON.
type Stats struct {
	PlacementsPerSecond        float64 `json:"placements_per_second"`
	LatencyP50Seconds          float64 `json:"latency_p50_seconds"`
	LatencyP90Seconds          float64 `json:"latency_p90_seconds"`
	LatencyP99Seconds          float64 `json:"latency_p99_seconds"`
	CosmosRequestsPerPlacement float64 `json:"cosmos_requests_per_placement"`
	RequestChargePerPlacement  float64 `json:"request_charge_per_placement"`
	ConflictsPerPlacement      float64 `json:"conflicts_per_placement"`
	PeakRSSBytes               int64   `json:"peak_rss_bytes"`

	// The run's raw figures travel with the derived ones so that summary.json can be read
	// (and the ratios re-derived) without the runner's log.
	LatencyMaxSeconds   float64 `json:"latency_max_seconds"`
	Workers             int     `json:"workers"`
	ManagementClusters  int     `json:"management_clusters"`
	Clusters            int     `json:"clusters"`
	Placements          int     `json:"placements"`
	ElapsedSeconds      float64 `json:"elapsed_seconds"`
	CosmosRequests      float64 `json:"cosmos_requests"`
	RequestCharge       float64 `json:"request_charge"`
	Conflicts           float64 `json:"conflicts"`
	AddedLatencySeconds float64 `json:"added_latency_seconds"`

	// Cost is the run's CPU, heap, queue waits, requests by controller and Cluster
	// Service calls, per cluster.
	Cost CostStats `json:"cost"`
}

// Stats derives the run's figures. Quotients with a zero divisor are 0.
func (r Run) Stats() Stats {
	sorted := sortedCopy(r.Latencies)
	var maxLatency time.Duration
	if len(sorted) > 0 {
		maxLatency = sorted[len(sorted)-1]
	}
	placements := float64(r.Placements)
	return Stats{
		PlacementsPerSecond:        perSecond(placements, r.Elapsed),
		LatencyP50Seconds:          percentileSorted(sorted, 50).Seconds(),
		LatencyP90Seconds:          percentileSorted(sorted, 90).Seconds(),
		LatencyP99Seconds:          percentileSorted(sorted, 99).Seconds(),
		CosmosRequestsPerPlacement: ratio(r.CosmosRequests, placements),
		RequestChargePerPlacement:  ratio(r.RequestCharge, placements),
		ConflictsPerPlacement:      ratio(r.Conflicts, placements),
		PeakRSSBytes:               r.PeakRSSBytes,

		LatencyMaxSeconds:   maxLatency.Seconds(),
		Workers:             r.Workers,
		ManagementClusters:  r.ManagementClusters,
		Clusters:            r.Clusters,
		Placements:          r.Placements,
		ElapsedSeconds:      r.Elapsed.Seconds(),
		CosmosRequests:      finite(r.CosmosRequests),
		RequestCharge:       finite(r.RequestCharge),
		Conflicts:           finite(r.Conflicts),
		AddedLatencySeconds: r.AddedLatency.Seconds(),
		Cost:                r.costStats(),
	}
}

// Percentile: nearest-rank percentile of ds (p in (0,100]); 0 for an empty slice. Does not
// modify ds. A p at or below 0 gives the smallest value and above 100 the largest, so a
// caller's rounding cannot index out of range.
func Percentile(ds []time.Duration, p float64) time.Duration {
	return percentileSorted(sortedCopy(ds), p)
}

func percentileSorted(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 || math.IsNaN(p) {
		return 0
	}
	// Multiplying before dividing keeps whole-number products exact: p/100*n gives
	// 7.000000000000001 for p=7, n=100, and ceil would then skip to the next rank.
	rank := int(math.Ceil(p * float64(n) / 100))
	rank = max(1, min(n, rank))
	return sorted[rank-1]
}

func sortedCopy(ds []time.Duration) []time.Duration {
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	return sorted
}

// perSecond is n/d, or 0 for a zero or negative d (a runner that never saw a placement
// may leave Elapsed unset).
func perSecond(n float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return ratio(n, d.Seconds())
}

// ratio is a/b, or 0 when that would not be a finite number.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return finite(a / b)
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// storeRuns are the runs of one store in input order, at most one per worker count.
type storeRuns struct {
	store string
	runs  []Run
}

// byStore groups runs by store in order of first appearance. When a store has two runs
// with the same worker count the later one replaces the earlier (in its position), so a
// re-run supersedes what it repeats.
func byStore(runs []Run) []storeRuns {
	var groups []storeRuns
	index := map[string]int{}
	for _, r := range runs {
		gi, ok := index[r.Store]
		if !ok {
			gi = len(groups)
			index[r.Store] = gi
			groups = append(groups, storeRuns{store: r.Store})
		}
		g := &groups[gi]
		replaced := false
		for i := range g.runs {
			if g.runs[i].Workers == r.Workers {
				g.runs[i] = r
				replaced = true
				break
			}
		}
		if !replaced {
			g.runs = append(g.runs, r)
		}
	}
	return groups
}

// extremes returns the store's runs with the largest and smallest worker counts; ok is
// false when the store has only one worker count, as there is nothing to compare.
func (g storeRuns) extremes() (most, fewest Run, ok bool) {
	if len(g.runs) < 2 {
		return Run{}, Run{}, false
	}
	most, fewest = g.runs[0], g.runs[0]
	for _, r := range g.runs[1:] {
		if r.Workers > most.Workers {
			most = r
		}
		if r.Workers < fewest.Workers {
			fewest = r
		}
	}
	return most, fewest, true
}

// comparison is the many-workers versus few-workers ratios of one store.
type comparison struct {
	most, fewest  int // worker counts
	throughput    float64
	latencyP50    float64
	latencyP99    float64
	mostStats     Stats
	fewestStats   Stats
	hasComparison bool
}

func (g storeRuns) compare() comparison {
	most, fewest, ok := g.extremes()
	if !ok {
		return comparison{}
	}
	ms, fs := most.Stats(), fewest.Stats()
	return comparison{
		most:          most.Workers,
		fewest:        fewest.Workers,
		throughput:    ratio(ms.PlacementsPerSecond, fs.PlacementsPerSecond),
		latencyP50:    ratio(ms.LatencyP50Seconds, fs.LatencyP50Seconds),
		latencyP99:    ratio(ms.LatencyP99Seconds, fs.LatencyP99Seconds),
		mostStats:     ms,
		fewestStats:   fs,
		hasComparison: true,
	}
}

func (c comparison) suffix() string {
	return strconv.Itoa(c.most) + "_to_" + strconv.Itoa(c.fewest)
}

// Summary builds the JSON document:
//
//	{"memory": {"workers_20": {...Stats}, "workers_1": {...Stats}, "throughput_ratio_20_to_1": x,
//	            "latency_p50_ratio_20_to_1": y, "latency_p99_ratio_20_to_1": z},
//	 "emulator": {...same...}}
//
// The top level has exactly one key per store present in runs. The worker keys are
// "workers_<n>" for every worker count present; the ratio keys are named after the
// largest (a) and smallest (b) worker counts of that store and are omitted when a store
// has one worker count. The throughput ratio is a's placements/s divided by b's, the
// latency ratios a's percentile divided by b's; each is 0 when b's figure is 0.
func Summary(runs []Run) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, g := range byStore(runs) {
		doc := map[string]any{}
		for _, r := range g.runs {
			doc["workers_"+strconv.Itoa(r.Workers)] = r.Stats()
		}
		if c := g.compare(); c.hasComparison {
			doc["throughput_ratio_"+c.suffix()] = c.throughput
			doc["latency_p50_ratio_"+c.suffix()] = c.latencyP50
			doc["latency_p99_ratio_"+c.suffix()] = c.latencyP99
		}
		out[g.store] = doc
	}
	return out
}

// WriteSummary writes Summary(runs) as indented JSON to path, creating parent directories.
func WriteSummary(path string, runs []Run) error {
	data, err := json.MarshalIndent(Summary(runs), "", "  ")
	if err != nil {
		return fmt.Errorf("encoding benchmark summary: %w", err)
	}
	data = append(data, '\n')
	return writeFile(path, data)
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating directory for %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
