package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/backend/candidates"
)

// Names of the capacity gauges, also used by the alerts and the dashboard.
const (
	AvailableCapacityName   = "backend_management_cluster_available_capacity"
	PendingReservationsName = "backend_management_cluster_pending_reservations"
	CostSourceName          = "backend_placement_cost_source"
)

// collectCapacity exports, from the scrape's view, what each MC has left of every
// counted resource and how many reservations it holds, as the placement engine counts
// them (placement.MC.Available), whatever its filters say of the MC.
func (c *Collector) collectCapacity(ch chan<- prometheus.Metric, view *candidates.View) {
	for _, mc := range view.MCs {
		available, ok := mc.Available()
		if !ok {
			continue
		}
		id := strings.ToLower(mc.ID())
		for i, name := range view.Model.Resources() {
			ch <- prometheus.MustNewConstMetric(c.available, prometheus.GaugeValue, float64(available[i])/1000, id, name)
		}
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(mc.Reservations()), id)
	}
}

// collectCostSource says where placement's per-HCP costs come from now: 1 for the
// source in use, with the reason the HCPResourceRequirements document was not used
// when the configuration asked for it ("" otherwise).
func (c *Collector) collectCostSource(ch chan<- prometheus.Metric, view *candidates.View) {
	source, fallback := view.Model.Costs()
	ch <- prometheus.MustNewConstMetric(c.costSource, prometheus.GaugeValue, 1, source, string(fallback))
}
