package benchreport

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// Cost is what hcpsched spent during a run, beyond its requests: CPU, heap, queue waits,
// requests by the controller that made them, 412s and Cluster Service calls. The scope
// strings say what a figure covers, since an in-process run cannot split the backend's
// CPU from the region's. A zero Cost is a run that did not measure it.
type Cost struct {
	// BackendCPUSeconds is the CPU (user + system) spent during the run by what
	// BackendCPUScope names.
	BackendCPUSeconds float64
	BackendCPUScope   string
	// BackendAllocBytes is what the same process allocated on its heap during the run.
	BackendAllocBytes float64
	// FleetCPUSeconds is the CPU spent during the run by what FleetCPUScope names.
	FleetCPUSeconds float64
	FleetCPUScope   string
	// HeapBytes is how much the heap named by HeapScope grew over the run, and
	// CachedDocuments the documents the run added to the backend's caches: HeapBytes /
	// CachedDocuments is the heap per cached document, fixed overheads excluded.
	HeapBytes       float64
	HeapScope       string
	CachedDocuments float64
	// QueueWait is each controller's workqueue wait (workqueue_queue_duration_seconds)
	// during the run.
	QueueWait map[string]QueueWait
	// Requests are the backend's Cosmos requests during the run by controller ("none"
	// outside any reconcile: change-feed reads, relists) and operation.
	Requests map[string]map[string]float64
	// Conflicts are the backend's 412 responses during the run by controller.
	Conflicts map[string]float64
	// ClusterServiceCalls are the backend's Cluster Service requests during the run, as the
	// fake Cluster Service logged them, by call ("POST /clusters", ...).
	ClusterServiceCalls map[string]float64
}

// QueueWait is one controller's workqueue wait over a run: how many items left the queue
// and how long they had waited, from the histogram's sum, count and buckets. P99 is
// interpolated linearly within the histogram's bucket, so it is only as fine as the
// buckets (client-go's: powers of ten from 10 ns).
type QueueWait struct {
	Items       float64 `json:"items"`
	MeanSeconds float64 `json:"mean_seconds"`
	P99Seconds  float64 `json:"p99_seconds"`
}

// CostStats are a Cost's figures per cluster created (per placement for 412s), as
// summary.json carries them.
type CostStats struct {
	BackendCPUMillisecondsPerCluster float64 `json:"backend_cpu_ms_per_cluster"`
	BackendCPUScope                  string  `json:"backend_cpu_scope"`
	BackendAllocKBPerCluster         float64 `json:"backend_alloc_kb_per_cluster"`
	FleetCPUMillisecondsPerCluster   float64 `json:"fleet_cpu_ms_per_cluster"`
	FleetCPUScope                    string  `json:"fleet_cpu_scope"`
	HeapBytesPerCachedDocument       float64 `json:"heap_bytes_per_cached_document"`
	HeapScope                        string  `json:"heap_scope"`
	CachedDocuments                  float64 `json:"cached_documents"`
	CosmosRequestsPerCluster         float64 `json:"cosmos_requests_per_cluster"`
	// RequestsPerCluster is by controller, then operation.
	RequestsPerCluster                map[string]map[string]float64 `json:"cosmos_requests_per_cluster_by_controller"`
	ConflictsPerPlacementByController map[string]float64            `json:"conflicts_per_placement_by_controller"`
	ClusterServiceCallsPerCluster     float64                       `json:"cluster_service_calls_per_cluster"`
	ClusterServiceCallsPerClusterBy   map[string]float64            `json:"cluster_service_calls_per_cluster_by_call"`
	QueueWait                         map[string]QueueWait          `json:"queue_wait_by_controller"`
}

// costStats derives r's per-cluster figures.
func (r Run) costStats() CostStats {
	c, clusters, placements := r.Cost, float64(r.Clusters), float64(r.Placements)
	out := CostStats{
		BackendCPUMillisecondsPerCluster:  ratio(1000*c.BackendCPUSeconds, clusters),
		BackendCPUScope:                   c.BackendCPUScope,
		BackendAllocKBPerCluster:          ratio(c.BackendAllocBytes/1024, clusters),
		FleetCPUMillisecondsPerCluster:    ratio(1000*c.FleetCPUSeconds, clusters),
		FleetCPUScope:                     c.FleetCPUScope,
		HeapBytesPerCachedDocument:        ratio(c.HeapBytes, c.CachedDocuments),
		HeapScope:                         c.HeapScope,
		CachedDocuments:                   finite(c.CachedDocuments),
		CosmosRequestsPerCluster:          ratio(r.CosmosRequests, clusters),
		RequestsPerCluster:                map[string]map[string]float64{},
		ConflictsPerPlacementByController: map[string]float64{},
		ClusterServiceCallsPerClusterBy:   map[string]float64{},
		QueueWait:                         map[string]QueueWait{},
	}
	for controller, ops := range c.Requests {
		per := map[string]float64{}
		for op, n := range ops {
			per[op] = ratio(n, clusters)
		}
		out.RequestsPerCluster[controller] = per
	}
	for controller, n := range c.Conflicts {
		out.ConflictsPerPlacementByController[controller] = ratio(n, placements)
	}
	var calls float64
	for call, n := range c.ClusterServiceCalls {
		calls += n
		out.ClusterServiceCallsPerClusterBy[call] = ratio(n, clusters)
	}
	out.ClusterServiceCallsPerCluster = ratio(calls, clusters)
	for controller, w := range c.QueueWait {
		out.QueueWait[controller] = QueueWait{Items: finite(w.Items), MeanSeconds: finite(w.MeanSeconds), P99Seconds: finite(w.P99Seconds)}
	}
	// A run that measured none of a breakdown has none, as a Run without a Cost.
	out.RequestsPerCluster = nilIfEmpty(out.RequestsPerCluster)
	out.ConflictsPerPlacementByController = nilIfEmpty(out.ConflictsPerPlacementByController)
	out.ClusterServiceCallsPerClusterBy = nilIfEmpty(out.ClusterServiceCallsPerClusterBy)
	out.QueueWait = nilIfEmpty(out.QueueWait)
	return out
}

// requestTotals is each controller's requests per cluster, summed over operations.
func (c CostStats) requestTotals() map[string]float64 {
	out := map[string]float64{}
	for controller, ops := range c.RequestsPerCluster {
		for _, n := range ops {
			out[controller] += n
		}
	}
	return out
}

// sortedKeys are m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func nilIfEmpty[V any](m map[string]V) map[string]V {
	if len(m) == 0 {
		return nil
	}
	return m
}

// costTable is one figure of the runs' costs as a grid: the text table and the chart
// draw the same grids.
type costTable struct {
	title  string
	header []string
	rows   [][]string
}

// measuredCost says whether any run measured its cost.
func measuredCost(runs []Run) bool {
	for _, r := range runs {
		if r.Cost.BackendCPUScope != "" || len(r.Cost.Requests) > 0 {
			return true
		}
	}
	return false
}

// costTables are the runs' cost figures: per run, then each breakdown with a column per
// run (a dash where a run has no such row).
func costTables(runs []Run) []costTable {
	stats := make([]CostStats, len(runs))
	labels := make([]string, len(runs))
	for i, r := range runs {
		stats[i], labels[i] = r.costStats(), runLabel(r)
	}
	perRun := costTable{
		title:  "Cost per cluster (412s per placement)",
		header: []string{"RUN", "BACKEND CPU MS/CLUSTER", "BACKEND ALLOC KB/CLUSTER", "FLEET CPU MS/CLUSTER", "HEAP BYTES/CACHED DOC", "COSMOS REQ/CLUSTER", "412/PLACEMENT", "CS CALLS/CLUSTER"},
	}
	scopes := costTable{title: "What the CPU and heap figures cover", header: []string{"RUN", "BACKEND CPU", "FLEET CPU", "HEAP"}}
	for i, r := range runs {
		s := stats[i]
		perRun.rows = append(perRun.rows, []string{labels[i],
			fmt.Sprintf("%.2f", s.BackendCPUMillisecondsPerCluster), fmt.Sprintf("%.0f", s.BackendAllocKBPerCluster), fmt.Sprintf("%.2f", s.FleetCPUMillisecondsPerCluster),
			fmt.Sprintf("%.0f", s.HeapBytesPerCachedDocument), fmt.Sprintf("%.2f", s.CosmosRequestsPerCluster),
			fmt.Sprintf("%.3f", r.Stats().ConflictsPerPlacement), fmt.Sprintf("%.2f", s.ClusterServiceCallsPerCluster)})
		scopes.rows = append(scopes.rows, []string{labels[i], orDash(s.BackendCPUScope), orDash(s.FleetCPUScope), orDash(s.HeapScope)})
	}
	queue := byRunTable("Queue wait by controller: mean / p99 (workqueue_queue_duration_seconds)", "CONTROLLER", labels, stats,
		func(s CostStats) map[string]string {
			out := map[string]string{}
			for c, w := range s.QueueWait {
				out[c] = formatSeconds(w.MeanSeconds) + " / " + formatSeconds(w.P99Seconds)
			}
			return out
		})
	requests := byRunTable("Cosmos requests per cluster by controller and operation", "CONTROLLER OPERATION", labels, stats,
		func(s CostStats) map[string]string {
			out := map[string]string{}
			for c, ops := range s.RequestsPerCluster {
				for op, n := range ops {
					out[c+" "+op] = fmt.Sprintf("%.3f", n)
				}
			}
			for c, n := range s.requestTotals() {
				out[c+" (all)"] = fmt.Sprintf("%.3f", n)
			}
			return out
		})
	conflicts := byRunTable("412s per placement by controller", "CONTROLLER", labels, stats, func(s CostStats) map[string]string {
		return formatted(s.ConflictsPerPlacementByController, "%.3f")
	})
	cs := byRunTable("Cluster Service calls per cluster by call (the fake Cluster Service's log)", "CALL", labels, stats, func(s CostStats) map[string]string {
		return formatted(s.ClusterServiceCallsPerClusterBy, "%.3f")
	})
	return []costTable{perRun, scopes, queue, requests, conflicts, cs}
}

// byRunTable is one row per key of any run's cells, one column per run.
func byRunTable(title, first string, labels []string, stats []CostStats, cells func(CostStats) map[string]string) costTable {
	t := costTable{title: title, header: append([]string{first}, labels...)}
	perRun := make([]map[string]string, len(stats))
	keys := map[string]bool{}
	for i, s := range stats {
		perRun[i] = cells(s)
		for k := range perRun[i] {
			keys[k] = true
		}
	}
	for _, k := range sortedKeys(keys) {
		row := []string{k}
		for _, cells := range perRun {
			row = append(row, orDash(cells[k]))
		}
		t.rows = append(t.rows, row)
	}
	return t
}

func formatted(m map[string]float64, format string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = fmt.Sprintf(format, v)
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteCostTables writes the runs' cost figures as aligned tables, or nothing when no run
// measured them.
func WriteCostTables(w io.Writer, runs []Run) error {
	if !measuredCost(runs) {
		return nil
	}
	for _, t := range costTables(runs) {
		if _, err := fmt.Fprintf(w, "\n%s\n", t.title); err != nil {
			return fmt.Errorf("writing cost tables: %w", err)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, row := range append([][]string{t.header}, t.rows...) {
			if _, err := fmt.Fprintln(tw, strings.Join(row, "\t")+"\t"); err != nil {
				return fmt.Errorf("writing cost tables: %w", err)
			}
		}
		if len(t.rows) == 0 {
			if _, err := fmt.Fprintln(tw, "(none)\t"); err != nil {
				return fmt.Errorf("writing cost tables: %w", err)
			}
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("writing cost tables: %w", err)
		}
	}
	return nil
}
