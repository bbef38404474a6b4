package scenario

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hcpsched/hcpsched/backend/metrics"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
)

// The backend's metrics the runner reads.
const (
	metricCosmosRequests    = "hcpsched_cosmos_requests_total"
	metricCosmosCharge      = "hcpsched_cosmos_request_charge_total"
	metricPlacementAttempts = "backend_placement_attempts_total"
	metricControllerPanics  = "hcpsched_controller_panics_total"
	metricReconciles        = "hcpsched_controller_reconcile_total"
	metricReconcileSeconds  = "hcpsched_controller_reconcile_duration_seconds"
	metricQueueWait         = "workqueue_queue_duration_seconds"
	// The Go and process collectors of the binaries' shell (internal/process).
	metricProcessCPU = "process_cpu_seconds_total"
	metricHeapAlloc  = "go_memstats_heap_alloc_bytes"
	metricAllocBytes = "go_memstats_alloc_bytes_total"
	metricNextGC     = "go_memstats_next_gc_bytes"
	metricGOGC       = "go_gc_gogc_percent"
)

// counters are the backend's cumulative counters at one moment.
type counters struct {
	requests    float64
	byOperation map[string]float64
	byStatus    map[string]float64
	charge      float64
	attempts    map[string]float64
	// reconciles are counted by "<controller> <result>".
	reconciles map[string]float64
	// reconcileSeconds is the time spent reconciling, by controller.
	reconcileSeconds map[string]float64
	panics           float64
	// mismatched are the clusters backend_cluster_info reports with placement="mismatch".
	mismatched []string

	// requestsByController are the Cosmos requests by "<controller> <operation>", and
	// conflictsByController the 412s by controller.
	requestsByController  map[string]float64
	conflictsByController map[string]float64
	// queueWait is each controller's workqueue wait promHistogram.
	queueWait map[string]promHistogram
	// cpuSeconds is the process's CPU (user + system), heapBytes its heap: a child's from
	// its process_cpu_seconds_total and go_memstats_heap_alloc_bytes, the in-process
	// backend's the runner's own (see inProcessBackend.counters).
	cpuSeconds float64
	heapBytes  float64
	// allocBytes is what the process allocated on the heap in all (go_memstats_alloc_bytes_total,
	// or the in-process backend's runtime.MemStats.TotalAlloc): steadier than CPU on a
	// shared machine, and what the collector's share of the CPU follows.
	allocBytes float64
}

// promHistogram is a Prometheus promHistogram's cumulative state: its observation count and sum,
// and the cumulative count at each bucket's upper bound.
type promHistogram struct {
	count, sum float64
	buckets    map[float64]float64
}

func promHistogramOf(h *dto.Histogram) promHistogram {
	out := promHistogram{count: float64(h.GetSampleCount()), sum: h.GetSampleSum(), buckets: map[float64]float64{}}
	for _, b := range h.GetBucket() {
		out.buckets[b.GetUpperBound()] = float64(b.GetCumulativeCount())
	}
	return out
}

func (h promHistogram) combine(o promHistogram, sign float64) promHistogram {
	out := promHistogram{count: h.count + sign*o.count, sum: h.sum + sign*o.sum, buckets: map[float64]float64{}}
	for le, n := range h.buckets {
		out.buckets[le] += n
	}
	for le, n := range o.buckets {
		out.buckets[le] += sign * n
	}
	return out
}

// mean is the average observation; 0 without any.
func (h promHistogram) mean() float64 {
	if h.count <= 0 {
		return 0
	}
	return h.sum / h.count
}

// quantile estimates the q-quantile as Prometheus's histogram_quantile does: linear
// interpolation within the bucket that holds the rank (from 0 for the first). A rank in
// the +Inf bucket is the highest finite bound.
func (h promHistogram) quantile(q float64) float64 {
	if h.count <= 0 {
		return 0
	}
	bounds := slices.Sorted(maps.Keys(h.buckets))
	rank := q * h.count
	prevBound, prevCount := 0.0, 0.0
	for _, le := range bounds {
		n := h.buckets[le]
		if n >= rank {
			if math.IsInf(le, 1) {
				return prevBound
			}
			if n == prevCount {
				return le
			}
			return prevBound + (le-prevBound)*(rank-prevCount)/(n-prevCount)
		}
		if !math.IsInf(le, 1) {
			prevBound = le
		}
		prevCount = n
	}
	return prevBound
}

func countersOf(families []*dto.MetricFamily) counters {
	c := newCounters()
	var heapAlloc, nextGC, gogc float64
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			v := m.GetCounter().GetValue()
			switch mf.GetName() {
			case metricCosmosRequests:
				c.requests += v
				c.byOperation[labels[cosmos.LabelOperation]] += v
				c.byStatus[labels[cosmos.LabelStatusCode]] += v
				controller := cmp.Or(labels[cosmos.LabelController], database.CallerNone)
				c.requestsByController[controller+" "+labels[cosmos.LabelOperation]] += v
				if labels[cosmos.LabelStatusCode] == "412" {
					c.conflictsByController[controller] += v
				}
			case metricQueueWait:
				name := labels["name"]
				c.queueWait[name] = c.queueWait[name].combine(promHistogramOf(m.GetHistogram()), 1)
			case metricProcessCPU:
				c.cpuSeconds += v
			case metricAllocBytes:
				c.allocBytes += v
			case metricHeapAlloc:
				heapAlloc += m.GetGauge().GetValue()
			case metricNextGC:
				nextGC += m.GetGauge().GetValue()
			case metricGOGC:
				gogc = m.GetGauge().GetValue()
			case metricCosmosCharge:
				c.charge += v
			case metricPlacementAttempts:
				c.attempts[labels["outcome"]] += v
			case metricReconcileSeconds:
				c.reconcileSeconds[labels["controller"]] += m.GetHistogram().GetSampleSum()
			case metricReconciles:
				c.reconciles[labels["controller"]+" "+labels["result"]] += v
			case metricControllerPanics:
				c.panics += v
			case metrics.ClusterInfoName:
				if labels["placement"] == metrics.PlacementMismatch {
					c.mismatched = append(c.mismatched, labels["resource_id"])
				}
			}
		}
	}
	c.heapBytes = liveHeap(heapAlloc, nextGC, gogc)
	return c
}

// liveHeap estimates a process's live heap from its Go collector: the heap goal the last
// collection set (go_memstats_next_gc_bytes) is the heap it found live, plus GOGC percent
// of it (and of the stacks and globals, which the estimate therefore slightly
// overstates). Without a goal or a GOGC it is the allocated heap, garbage included.
func liveHeap(heapAlloc, nextGC, gogc float64) float64 {
	if nextGC > 0 && gogc > 0 {
		return nextGC / (1 + gogc/100)
	}
	return heapAlloc
}

func newCounters() counters {
	return counters{byOperation: map[string]float64{}, byStatus: map[string]float64{}, attempts: map[string]float64{}, reconciles: map[string]float64{}, reconcileSeconds: map[string]float64{},
		requestsByController: map[string]float64{}, conflictsByController: map[string]float64{}, queueWait: map[string]promHistogram{}}
}

// add sums the counters of two backend replicas.
func (c counters) add(o counters) counters { return c.combine(o, 1) }

// since is what was counted after base.
func (c counters) since(base counters) counters {
	out := c.combine(base, -1)
	out.mismatched = c.mismatched
	return out
}

func (c counters) combine(o counters, sign float64) counters {
	out := newCounters()
	out.requests = c.requests + sign*o.requests
	out.charge = c.charge + sign*o.charge
	out.panics = c.panics + sign*o.panics
	out.cpuSeconds = c.cpuSeconds + sign*o.cpuSeconds
	out.allocBytes = c.allocBytes + sign*o.allocBytes
	out.heapBytes = c.heapBytes + sign*o.heapBytes
	for name, h := range c.queueWait {
		out.queueWait[name] = out.queueWait[name].combine(h, 1)
	}
	for name, h := range o.queueWait {
		out.queueWait[name] = out.queueWait[name].combine(h, sign)
	}
	out.mismatched = append(append([]string(nil), c.mismatched...), o.mismatched...)
	for _, pair := range []struct{ dst, a, b map[string]float64 }{
		{out.byOperation, c.byOperation, o.byOperation}, {out.byStatus, c.byStatus, o.byStatus}, {out.attempts, c.attempts, o.attempts},
		{out.reconciles, c.reconciles, o.reconciles}, {out.reconcileSeconds, c.reconcileSeconds, o.reconcileSeconds},
		{out.requestsByController, c.requestsByController, o.requestsByController}, {out.conflictsByController, c.conflictsByController, o.conflictsByController},
	} {
		for k, v := range pair.a {
			pair.dst[k] += v
		}
		for k, v := range pair.b {
			pair.dst[k] += sign * v
		}
	}
	return out
}

// parseMetrics reads a /metrics page in the text format.
func parseMetrics(r io.Reader) ([]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	byName, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	out := make([]*dto.MetricFamily, 0, len(byName))
	for _, mf := range byName {
		out = append(out, mf)
	}
	return out, nil
}
