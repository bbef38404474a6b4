package scenario

import (
	"fmt"
	"io"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hcpsched/hcpsched/backend/metrics"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
)

// The backend's metrics the runner reads.
const (
	metricCosmosRequests    = "hcpsched_cosmos_requests_total"
	metricCosmosCharge      = "hcpsched_cosmos_request_charge_total"
	metricPlacementAttempts = "backend_placement_attempts_total"
	metricControllerPanics  = "hcpsched_controller_panics_total"
	metricReconciles        = "hcpsched_controller_reconcile_total"
	metricReconcileSeconds  = "hcpsched_controller_reconcile_duration_seconds"
	metricClusterService    = clusterservice.RequestCountMetric
	metricQueueSeconds      = "workqueue_queue_duration_seconds"
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
	// clusterService are the backend's Cluster Service requests, by "<method> <path>".
	clusterService map[string]float64
	// queueSeconds is the time keys waited in each controller's queue.
	queueSeconds map[string]float64
	// mismatched are the clusters backend_cluster_info reports with placement="mismatch".
	mismatched []string
}

func countersOf(families []*dto.MetricFamily) counters {
	c := newCounters()
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
				c.byOperation[labels["operation"]] += v
				c.byStatus[labels["status_code"]] += v
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
			case metricQueueSeconds:
				c.queueSeconds[labels["name"]] += m.GetHistogram().GetSampleSum()
			case metricClusterService:
				c.clusterService[labels["method"]+" "+labels["path"]] += v
			case metrics.ClusterInfoName:
				if labels["placement"] == metrics.PlacementMismatch {
					c.mismatched = append(c.mismatched, labels["resource_id"])
				}
			}
		}
	}
	return c
}

func newCounters() counters {
	return counters{byOperation: map[string]float64{}, byStatus: map[string]float64{}, attempts: map[string]float64{}, reconciles: map[string]float64{}, reconcileSeconds: map[string]float64{}, clusterService: map[string]float64{}, queueSeconds: map[string]float64{}}
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
	out.mismatched = append(append([]string(nil), c.mismatched...), o.mismatched...)
	for _, pair := range []struct{ dst, a, b map[string]float64 }{
		{out.byOperation, c.byOperation, o.byOperation}, {out.byStatus, c.byStatus, o.byStatus}, {out.attempts, c.attempts, o.attempts},
		{out.reconciles, c.reconciles, o.reconciles}, {out.reconcileSeconds, c.reconcileSeconds, o.reconcileSeconds},
		{out.clusterService, c.clusterService, o.clusterService}, {out.queueSeconds, c.queueSeconds, o.queueSeconds},
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
