package controllers

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// PlacementLatencyName is the histogram of the time from a cluster's creation to its
// placement, beside the KSM-style gauges it could be computed from
// (backend_cluster_created_time_seconds, backend_cluster_placement_time_seconds): a
// gauge only shows the clusters still in the cache at scrape time, the histogram keeps
// every placement's latency for rates and quantiles over any window.
const PlacementLatencyName = "backend_placement_latency_seconds"

// placementLatencyBuckets run from 10 ms (a cluster placed at once from warm caches) to
// 1 h, in steps readable on a dashboard; 600 s is PlacementBacklog's threshold, so the
// share placed within it is one bucket's ratio.
func placementLatencyBuckets() []float64 {
	return []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600}
}

// PlacementMetrics counts placement attempts by outcome (each outcome is defined in
// internal/placement and docs/placement.md), times decisions, and records how long
// clusters waited to be placed.
type PlacementMetrics struct {
	attempts     *prometheus.CounterVec
	replacements *prometheus.CounterVec
	decision     prometheus.Histogram
	latency      prometheus.Histogram
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
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    PlacementLatencyName,
			Help:    "Seconds from a cluster's creation (properties.systemData.createdAt) to the placement write (ServiceProviderCluster spec.managementClusterPlacementTime), observed once per cluster this process places: not for attempts that lost a race or failed, not for a cluster already placed (a cluster placed again because its management cluster vanished before the create is observed again).",
			Buckets: placementLatencyBuckets(),
		}),
	}
	for _, o := range placement.Outcomes {
		m.attempts.WithLabelValues(string(o))
	}
	for _, r := range []string{ReplacementManagementClusterDeleted, ReplacementProvisionShardLost} {
		m.replacements.WithLabelValues(r)
	}
	for _, c := range []prometheus.Collector{m.attempts, m.replacements, m.decision, m.latency} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *PlacementMetrics) count(o placement.Outcome) { m.attempts.WithLabelValues(string(o)).Inc() }

func (m *PlacementMetrics) replaced(reason string) { m.replacements.WithLabelValues(reason).Inc() }

// placed observes the latency of a cluster this process has just placed, from its
// creation to at, the placement time written. A cluster without a creation time has no
// latency to tell. A cluster placed again because its intended MC vanished before
// Cluster Service created it (backend_placement_replacements_total) is observed again,
// from its creation: nothing durable tells a second placement from a first (the
// withdrawal clears the placement time, and a wait overwrites the Replacing reason), and
// it did wait that long for a placement that holds.
func (m *PlacementMetrics) placed(c *api.Cluster, at time.Time) {
	sd := c.Properties.SystemData
	if sd == nil || sd.CreatedAt.IsZero() {
		return
	}
	// A clock behind the frontend's would make it negative; the first bucket says "at once".
	m.latency.Observe(max(at.Sub(sd.CreatedAt).Seconds(), 0))
}
