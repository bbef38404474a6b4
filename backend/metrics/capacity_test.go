package metrics_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/backend/metrics"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// Every MC with scheduling data exports what it has left as the engine counts it: its
// scale ceiling less the larger of usage and requests, less what each cluster it lists
// as not ready or reserved costs (3 swift NICs for a SWIFT HA cluster or one the cache
// does not know, 1 for a SWIFT single-replica one, none without VNet integration);
// whatever the filters say of it. And how many reservations it holds.
func TestCapacity(t *testing.T) {
	unknown := clusterID("unknown")
	stored := map[string][]func(*api.ClusterProperties){
		"swift-ha":        {swift},
		"swift-single":    {swift, singleReplica},
		"no-vnet-ha":      nil,
		"no-vnet-single":  {singleReplica},
		"swift-ha-other":  {swift},
		"no-vnet-ha-more": nil,
	}
	key := func(name string) string { return clusterID(name).Key() }
	fresh := now.Add(-time.Minute)
	tests := []struct {
		name          string
		status        *api.SchedulingStatus
		mutate        []func(*api.ManagementClusterProperties)
		wantAvailable float64
		wantPending   float64
	}{
		{name: "nothing used", status: aroStatus(fresh, 30, 0, 0), wantAvailable: 30},
		{name: "usage above requests", status: aroStatus(fresh, 30, 9, 4), wantAvailable: 21},
		{name: "requests above usage", status: aroStatus(fresh, 30, 3, 6), wantAvailable: 24},
		{name: "an empty MC reports neither", status: func() *api.SchedulingStatus {
			st := aroStatus(fresh, 30, 0, 0)
			st.ObservedResources.Usage, st.ObservedResources.Requests = nil, nil
			return st
		}(), wantAvailable: 30},
		{name: "reservations cost what their clusters' kinds cost",
			status:        aroStatus(fresh, 30, 3, 3, key("swift-ha"), key("swift-single"), key("no-vnet-ha"), key("no-vnet-single"), unknown.Key(), ""),
			wantAvailable: 30 - 3 - 3 - 1 - 0 - 0 - 3, wantPending: 5},
		{name: "not-ready clusters cost what their kinds cost, charged as well as what the report counts", status: func() *api.SchedulingStatus {
			st := aroStatus(fresh, 30, 3, 3)
			st.NotReadyResourceIDs = []string{clusterID("swift-ha-other").String(), key("swift-single"), key("no-vnet-ha-more"), unknown.String()}
			return st
		}(), wantAvailable: 30 - 3 - 3 - 1 - 0 - 3},
		{name: "cordoned, stale and over its ceiling: still exported, negative", status: aroStatus(now.Add(-time.Hour), 30, 40, 40),
			mutate: []func(*api.ManagementClusterProperties){func(p *api.ManagementClusterProperties) { p.Spec.SchedulingPolicy = api.Unschedulable }}, wantAvailable: -10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, w := newWorld()
			for name, kind := range stored {
				w.cluster(t, clusterID(name), now, kind...)
			}
			mc := w.mcWith(t, "1", tt.status, tt.mutate...)
			// Without a scheduling document, nothing to export.
			controllertest.CreateManagementCluster(t, w.fleet, "2", "shard-2")
			reg := scrape(t, store)

			help := func(name string) string { return family(t, reg, name).GetHelp() }
			want := fmt.Sprintf(`
# HELP %[1]s %[2]s
# TYPE %[1]s gauge
%[1]s{management_cluster_resource_id=%[3]q,resource=%[4]q} %[5]v
# HELP %[6]s %[7]s
# TYPE %[6]s gauge
%[6]s{management_cluster_resource_id=%[3]q} %[8]v
`, metrics.AvailableCapacityName, help(metrics.AvailableCapacityName), mc.Key(), api.SwiftNIC, tt.wantAvailable,
				metrics.PendingReservationsName, help(metrics.PendingReservationsName), tt.wantPending)
			require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), metrics.AvailableCapacityName, metrics.PendingReservationsName))
		})
	}
}

// multiResource counts swift NICs, cpu and memory, taking per-HCP costs from source.
func multiResource(source string) placement.Config {
	cfg := placement.DefaultConfig()
	cfg.Resources = append(cfg.Resources,
		placement.ResourceCost{Name: "cpu", HA: resource.MustParse("2"), SingleReplica: resource.MustParse("1")},
		placement.ResourceCost{Name: "memory", HA: resource.MustParse("8Gi"), SingleReplica: resource.MustParse("4Gi")},
	)
	cfg.CostSource = source
	return cfg
}

// backend_placement_cost_source says where the per-HCP costs come from: 1 for the source
// in use, with the reason the HCPResourceRequirements document could not be used when the
// configuration asked for it.
func TestCostSource(t *testing.T) {
	fixture := string(arohcp.Get("constructed/fleet-hcpresourcerequirements-default.json"))
	noData := strings.NewReplacer(`"status": "True"`, `"status": "False"`, `"reason": "Computed"`, `"reason": "NoData"`).Replace(fixture)
	badCPU := strings.Replace(fixture, `"cpu": "3630m"`, `"cpu": "lots"`, 1)
	tests := []struct {
		name       string
		cfg        placement.Config
		document   string
		wantSource string
		wantReason placement.FallbackReason
		// wantCPU is the cpu the MC has left after one reservation of unknown kind, in cores.
		wantCPU float64
	}{
		{"flags by default", placement.DefaultConfig(), "", placement.CostSourceFlags, "", 0},
		{"flags are not the document's, even when there is one", multiResource(placement.CostSourceFlags), fixture, placement.CostSourceFlags, "", 316.4 - 7.26 - 2},
		{"requirements, but only swift NICs are counted: nothing to take from it", func() placement.Config {
			cfg := placement.DefaultConfig()
			cfg.CostSource = placement.CostSourceRequirements
			return cfg
		}(), fixture, placement.CostSourceFlags, "", 0},
		{"requirements without a document", multiResource(placement.CostSourceRequirements), "", placement.CostSourceFlags, placement.FallbackNoDocument, 316.4 - 7.26 - 2},
		{"requirements from ARO-HCP's document", multiResource(placement.CostSourceRequirements), fixture, placement.CostSourceRequirements, "", 316.4 - 7.26 - 3.63},
		{"requirements from a document without data", multiResource(placement.CostSourceRequirements), noData, placement.CostSourceFlags, placement.FallbackNotCurrent, 316.4 - 7.26 - 2},
		{"requirements from a document with an unusable average", multiResource(placement.CostSourceRequirements), badCPU, placement.CostSourceFlags, placement.FallbackInvalidQuantity, 316.4 - 7.26 - 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, w := newWorld()
			mc := w.mc(t, "1", 30, 0, now, []string{clusterID("unknown").Key()})
			if tt.document != "" {
				_, err := w.fleet.Create(t.Context(), api.HCPResourceRequirementsDefaultName, []byte(tt.document))
				require.NoError(t, err)
			}
			reg := scrapeWith(t, store, tt.cfg)

			want := fmt.Sprintf(`
# HELP %[1]s %[2]s
# TYPE %[1]s gauge
%[1]s{fallback_reason=%[3]q,source=%[4]q} 1
`, metrics.CostSourceName, family(t, reg, metrics.CostSourceName).GetHelp(), tt.wantReason, tt.wantSource)
			require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), metrics.CostSourceName))

			if tt.wantCPU != 0 {
				var cpu float64
				for _, m := range family(t, reg, metrics.AvailableCapacityName).GetMetric() {
					labels := map[string]string{}
					for _, l := range m.GetLabel() {
						labels[l.GetName()] = l.GetValue()
					}
					if labels["resource"] == "cpu" && labels["management_cluster_resource_id"] == mc.Key() {
						cpu = m.GetGauge().GetValue()
					}
				}
				assert.InDelta(t, tt.wantCPU, cpu, 1e-9, "the capacity gauges count with the costs the source gives")
			}
		})
	}
}
