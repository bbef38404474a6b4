package controllers

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/internal/api"
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

// CapacityCollector exports, at scrape time and from the caches only, what each MC has
// left of every counted resource and how many reservations it holds (kube-state-metrics
// style: nothing to keep in step, no series left behind by a deleted MC).
type CapacityCollector struct {
	informers Informers
	cfg       placement.Config
	available *prometheus.Desc
	pending   *prometheus.Desc
}

// NewCapacityCollector reads the backend's caches with the placement configuration.
func NewCapacityCollector(inf Informers, cfg placement.Config) *CapacityCollector {
	return &CapacityCollector{
		informers: inf,
		cfg:       cfg,
		available: prometheus.NewDesc("backend_management_cluster_available_capacity",
			"What a management cluster has left of a counted resource for new HCPs: scale ceiling minus usage minus not-ready HCPs and reservations (can be negative).",
			[]string{"management_cluster_resource_id", "resource"}, nil),
		pending: prometheus.NewDesc("backend_management_cluster_pending_reservations",
			"Reservations (pendingAssignedClusters) a management cluster holds for placed HCPs it has not reported yet.",
			[]string{"management_cluster_resource_id"}, nil),
	}
}

func (c *CapacityCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.available
	ch <- c.pending
}

func (c *CapacityCollector) Collect(ch chan<- prometheus.Metric) {
	lookup := SingleReplicaLookup(c.informers)
	for _, cand := range CandidatesFromCache(c.informers) {
		available, reservations, ok := placement.Capacity(cand, c.cfg, lookup)
		if !ok {
			continue
		}
		id := strings.ToLower(cand.ManagementCluster.ResourceID)
		for _, r := range c.cfg.Resources {
			ch <- prometheus.MustNewConstMetric(c.available, prometheus.GaugeValue, float64(available[r.Name])/1000, id, r.Name)
		}
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(reservations), id)
	}
}

// CandidatesFromCache pairs every cached MC with its cached scheduling document, as
// placement sees them.
func CandidatesFromCache(inf Informers) []placement.Candidate {
	mcs := inf.ManagementClusters.Lister().List()
	schedulings := inf.ManagementClusterSchedulings.Lister()
	out := make([]placement.Candidate, 0, len(mcs))
	for _, mc := range mcs {
		cand := placement.Candidate{ManagementCluster: mc}
		if rid, err := mc.ParsedResourceID(); err == nil {
			if s, err := schedulings.Get(api.SchedulingResourceID(rid).String()); err == nil {
				cand.Scheduling = s
			}
		}
		out = append(out, cand)
	}
	return out
}

// SingleReplicaLookup tells the engine, from the cluster cache, which reserved or
// not-ready clusters are single-replica.
func SingleReplicaLookup(inf Informers) placement.SingleReplicaLookup {
	clusters := inf.Clusters.Lister()
	return func(id string) (bool, bool) {
		c, err := clusters.Get(id)
		if err != nil {
			return false, false
		}
		return isSingleReplica(c), true
	}
}

func isSingleReplica(c *api.Cluster) bool {
	f := c.Properties.ServiceProvider().ExperimentalFeatures
	return f != nil && f.SingleReplica == api.SingleReplica
}
