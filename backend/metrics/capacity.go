package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/internal/placement"
)

// Names of the capacity gauges, also used by the alerts and the dashboard.
const (
	AvailableCapacityName   = "backend_management_cluster_available_capacity"
	PendingReservationsName = "backend_management_cluster_pending_reservations"
)

// collectCapacity exports, from the scrape's snapshot, what each MC has left of every
// counted resource and how many reservations it holds, as the placement engine counts
// them (placement.Capacity), whatever its filters say of the MC.
func (c *Collector) collectCapacity(ch chan<- prometheus.Metric, cands []placement.Candidate, lookup placement.SingleReplicaLookup) {
	for _, cand := range cands {
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
