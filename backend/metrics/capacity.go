package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/backend/candidates"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// Names of the capacity gauges, also used by the alerts and the dashboard.
const (
	AvailableCapacityName   = "backend_management_cluster_available_capacity"
	PendingReservationsName = "backend_management_cluster_pending_reservations"
)

// CapacityCollector exports, at scrape time and from the caches only, what each MC has
// left of every counted resource and how many reservations it holds, as the placement
// engine counts them (placement.Capacity), whatever its filters say of the MC.
type CapacityCollector struct {
	candidates candidates.Source
	cfg        placement.Config
	available  *prometheus.Desc
	pending    *prometheus.Desc
}

// NewCapacityCollector reads the caches with the placement configuration; call it
// before the caches start.
func NewCapacityCollector(caches informers.Caches, cfg placement.Config) *CapacityCollector {
	return &CapacityCollector{
		candidates: candidates.FromCaches(caches),
		cfg:        cfg,
		available: prometheus.NewDesc(AvailableCapacityName,
			"What a management cluster has left of a counted resource for new HCPs: scale ceiling minus usage minus not-ready HCPs and reservations (can be negative).",
			[]string{labelManagementClusterResource, labelResource}, nil),
		pending: prometheus.NewDesc(PendingReservationsName,
			"Reservations (pendingAssignedClusters) a management cluster holds for placed HCPs it has not reported yet.",
			[]string{labelManagementClusterResource}, nil),
	}
}

func (c *CapacityCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.available
	ch <- c.pending
}

func (c *CapacityCollector) Collect(ch chan<- prometheus.Metric) {
	lookup := c.candidates.SingleReplicaLookup()
	for _, cand := range c.candidates.Snapshot() {
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
