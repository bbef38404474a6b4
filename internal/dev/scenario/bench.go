package scenario

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/hcpsched/hcpsched/internal/dev/benchreport"
)

// DefaultBenchWorkers are the placement worker counts each store runs with, in order: the
// default and a single worker, to show what parallel placement buys.
var DefaultBenchWorkers = []int{20, 1}

// Bench runs base once per store and worker count, prints each run's result as it
// finishes and then the table, and writes summary.json and chart.svg into outDir.
func Bench(ctx context.Context, base Options, stores []string, workers []int, outDir string, out io.Writer) ([]*Result, error) {
	var results []*Result
	for _, store := range stores {
		for _, w := range workers {
			o := base
			o.Store, o.Workers, o.Label = store, w, ""
			fmt.Fprintf(out, "\n== %s store, %d placement workers: %d MCs, %d clusters %s\n", store, w, o.ManagementClusters, o.Clusters, pace(o))
			// An earlier in-process run's garbage must not count toward this one's peak.
			runtime.GC()
			debug.FreeOSMemory()
			res, err := Run(ctx, o)
			if err != nil {
				return results, fmt.Errorf("%s store, %d workers: %w", store, w, err)
			}
			results = append(results, res)
			st := res.Stats()
			fmt.Fprintf(out, "   %.1f placements/s, p50 %.3fs p99 %.3fs, %.2f Cosmos requests and %.2f 412s per placement; by operation: %s\n",
				st.PlacementsPerSecond, st.LatencyP50Seconds, st.LatencyP99Seconds, st.CosmosRequestsPerPlacement, st.ConflictsPerPlacement,
				perPlacement(res.ByOperation, res.Placements))
			fmt.Fprintf(out, "   placement attempts per placement: %s\n   reconciles per placement: %s\n   reconcile milliseconds per placement: %s\n",
				perPlacement(res.Attempts, res.Placements), perPlacement(res.Reconciles, res.Placements),
				perPlacement(scaled(res.ReconcileSeconds, 1000), res.Placements))
			fmt.Fprintf(out, "   settled in %.1fs; queue seconds per placement: %s\n", res.Settled.Seconds(), perPlacement(res.QueueSeconds, res.Placements))
			fmt.Fprintf(out, "   Cluster Service calls per cluster: %.2f; by call: %s\n",
				sum(res.ClusterService)/float64(max(res.Clusters, 1)), perPlacement(res.ClusterService, res.Clusters))
		}
	}
	runs := make([]benchreport.Run, 0, len(results))
	for _, r := range results {
		runs = append(runs, r.Run)
	}
	fmt.Fprintln(out)
	if err := benchreport.WriteTable(out, runs); err != nil {
		return results, err
	}
	summary, chart := filepath.Join(outDir, "summary.json"), filepath.Join(outDir, "chart.svg")
	if err := benchreport.WriteSummary(summary, runs); err != nil {
		return results, err
	}
	if err := benchreport.WriteChart(chart, runs); err != nil {
		return results, err
	}
	fmt.Fprintf(out, "\nwrote %s and %s\n", summary, chart)
	return results, nil
}

func pace(o Options) string {
	if o.Rate == 0 {
		return "as a burst"
	}
	return fmt.Sprintf("at %.1f/s", o.Rate)
}

// perPlacement renders per-operation counts divided by the placements, largest first.
func perPlacement(byOperation map[string]float64, placements int) string {
	if placements == 0 {
		return "-"
	}
	keys := slices.SortedFunc(maps.Keys(byOperation), func(a, b string) int {
		return cmp.Or(cmp.Compare(byOperation[b], byOperation[a]), strings.Compare(a, b))
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if v := byOperation[k] / float64(placements); v >= 0.005 {
			parts = append(parts, fmt.Sprintf("%s %.2f", k, v))
		}
	}
	return strings.Join(parts, ", ")
}

func sum(m map[string]float64) float64 {
	var total float64
	for _, v := range m {
		total += v
	}
	return total
}

func scaled(m map[string]float64, by float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v * by
	}
	return out
}
