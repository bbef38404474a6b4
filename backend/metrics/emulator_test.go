package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/hcpsched/hcpsched/backend/metrics"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/cosmostest"
)

// The collector over caches fed by a real change feed: documents as Cosmos DB returns
// them (system fields, timestamps) decode into the same series.
func TestCollectorAgainstEmulator(t *testing.T) {
	store := cosmostest.New(t, "hcpsched-metrics-test", nil, api.ResourcesContainer, api.FleetContainer).Store
	w := worldOf(store)
	placed, waiting := clusterID("placed"), clusterID("waiting")
	mc := w.mc(t, "1", 30, 3, now.Add(-2*time.Minute), []string{placed.Key()})
	w.cluster(t, placed, now.Add(-time.Hour), swift)
	w.spc(t, placed, mc.String(), "", now.Add(-50*time.Minute))
	w.cluster(t, waiting, now.Add(-20*time.Minute))
	reg := scrape(t, store)

	info := map[string]string{}
	for _, m := range family(t, reg, metrics.ClusterInfoName).GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		info[labels["resource_id"]] = labels["placement"] + " " + labels["management_cluster_resource_id"]
	}
	assert.Equal(t, map[string]string{
		placed.Key():  metrics.PlacementPlaced + " " + strings.ToLower(mc.String()),
		waiting.Key(): metrics.PlacementUnplaced + " ",
	}, info)
	assert.Equal(t, map[string]float64{placed.Key(): float64(now.Add(-50 * time.Minute).Unix())}, gauges(t, reg, metrics.ClusterPlacementTimeName))
	// 30 − 3 used − 3 reserved for a SWIFT HA cluster leaves 24 swift NICs: 8 HA HCPs.
	assert.Equal(t, map[string]float64{"": 8}, gauges(t, reg, metrics.RegionHeadroomName))
	assert.Equal(t, map[string]float64{mc.Key(): 120}, gauges(t, reg, metrics.CapacityReportAgeName))
	assert.Equal(t, map[string]float64{mc.Key(): 50 * 60}, gauges(t, reg, metrics.OldestReservationAgeName))
}
