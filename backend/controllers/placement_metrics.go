package controllers

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/internal/placement"
)

// PlacementMetrics counts placement attempts by outcome (each outcome is defined in
// internal/placement and docs/placement.md) and times decisions.
type PlacementMetrics struct {
	attempts     *prometheus.CounterVec
	replacements *prometheus.CounterVec
	decision     prometheus.Histogram
}

// NewPlacementMetrics registers the placement metrics on reg, every outcome at zero so
// rates exist from the start.
func NewPlacementMetrics(reg prometheus.Registerer) (*PlacementMetrics, error) {
	m := &PlacementMetrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backend_placement_attempts_total",
			Help: "Placement attempts by outcome: placed, no_management_clusters, no_eligible, capacity_exhausted, stale_data, conflict, error (see docs/placement.md).",
		}, []string{"outcome"}),
		replacements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backend_placement_replacements_total",
			Help: "Intents withdrawn because the intended management cluster was deleted or lost its provision shard before Cluster Service created the cluster, by reason: management_cluster_deleted, provision_shard_lost (see docs/placement.md).",
		}, []string{"reason"}),
		decision: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "backend_placement_decision_duration_seconds",
			Help:    "Time the placement engine takes to decide for one cluster, from the caches.",
			Buckets: prometheus.ExponentialBuckets(1e-5, 4, 10),
		}),
	}
	for _, o := range placement.Outcomes {
		m.attempts.WithLabelValues(string(o))
	}
	for _, r := range []string{ReplacementManagementClusterDeleted, ReplacementProvisionShardLost} {
		m.replacements.WithLabelValues(r)
	}
	for _, c := range []prometheus.Collector{m.attempts, m.replacements, m.decision} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *PlacementMetrics) count(o placement.Outcome) { m.attempts.WithLabelValues(string(o)).Inc() }

func (m *PlacementMetrics) replaced(reason string) { m.replacements.WithLabelValues(reason).Inc() }
