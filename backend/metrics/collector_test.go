package metrics_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/backend/candidates"
	"github.com/hcpsched/hcpsched/backend/metrics"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/dev/informertest"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// now is the scrape time of every test; documents are dated relative to it.
var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

const sub = "0000000A-0000-0000-0000-000000000000"

func clusterID(name string) *api.ResourceID {
	return api.MustParseResourceID(fmt.Sprintf("/subscriptions/%s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/%s", sub, name))
}

// world is the documents a test stores before the caches start.
type world struct {
	resources database.Container
	fleet     database.Container
}

// cluster stores a freshly accepted cluster without VNet integration as ARO-HCP's
// frontend writes it (frontend.ClusterAt), created at createdAt; mutate changes it first
// (swift gives it VNet integration).
func (w world) cluster(t *testing.T, rid *api.ResourceID, createdAt time.Time, mutate ...func(*api.ClusterProperties)) {
	t.Helper()
	c, err := frontend.ClusterAt(rid, "mrg-"+rid.Name(), false, time.Now())
	require.NoError(t, err)
	// Zero stands for a document without systemData.createdAt.
	c.Properties.SystemData.CreatedAt = createdAt
	for _, m := range mutate {
		m(&c.Properties)
	}
	_, err = database.Create(t.Context(), w.resources, c)
	require.NoError(t, err)
}

func (w world) spc(t *testing.T, cluster *api.ResourceID, intended, observed string, placedAt time.Time) {
	t.Helper()
	pk, err := api.ResourcesPartitionKey(cluster)
	require.NoError(t, err)
	p := api.ServiceProviderClusterProperties{}
	if intended != "" {
		p.Spec = &api.ServiceProviderClusterSpec{ManagementClusterResourceID: intended, ManagementClusterPlacementTime: placedAt}
	}
	if observed != "" {
		p.Status = &api.ServiceProviderClusterStatus{ManagementClusterResourceID: observed}
	}
	_, err = database.Create(t.Context(), w.resources, api.NewDocument(api.ServiceProviderClusterResourceID(cluster), pk, p))
	require.NoError(t, err)
}

// subnet is a VNet integration subnet: a cluster with one is a SWIFT cluster, whose
// control plane takes swift NICs.
const subnet = "/subscriptions/" + sub + "/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet/subnets/hcp"

// swift gives a cluster VNet integration (customerProperties.platform.vnetIntegrationSubnetId).
func swift(p *api.ClusterProperties) { p.CustomerProperties.Platform.VnetIntegrationSubnetID = subnet }

// singleReplica makes a cluster's control plane single-replica.
func singleReplica(p *api.ClusterProperties) {
	p.ServiceProviderProperties.ExperimentalFeatures = &api.ExperimentalFeatures{SingleReplica: api.SingleReplica}
}

// aroStatus is a scheduling status as ARO-HCP's fleet mirrors a capacity report taken at
// reportedAt: conditions current, swift NICs in the ceiling, usage and requests (the agent
// reports NIC usage as the NICs requested), cpu and memory beside them, which the
// default configuration does not count, and the given reservations.
func aroStatus(reportedAt time.Time, ceiling, usage, requests int, pending ...string) *api.SchedulingStatus {
	return &api.SchedulingStatus{
		Conditions: []api.Condition{
			{Type: api.SchedulingConditionCapacityDataCurrent, Status: api.ConditionTrue, Reason: "DataCollected", LastTransitionTime: reportedAt},
			{Type: api.SchedulingConditionScalingDataCurrent, Status: api.ConditionTrue, Reason: "DataCollected", LastTransitionTime: reportedAt},
		},
		ObservedResources: &api.ObservedResources{
			LastReportedAt: reportedAt,
			Capacity:       api.ResourceList{api.SwiftNIC: "128", "cpu": "126560m", "memory": "602245408Ki"},
			Usage:          api.ResourceList{api.SwiftNIC: fmt.Sprint(usage), "cpu": "3617m", "memory": "21783532Ki"},
			Requests:       api.ResourceList{api.SwiftNIC: fmt.Sprint(requests), "cpu": "7260m", "memory": "28416Mi"},
		},
		ScaleCeiling: &api.ScaleCeiling{
			LastReportedAt: reportedAt,
			Capacity:       api.ResourceList{api.SwiftNIC: fmt.Sprint(ceiling), "cpu": "316400m", "memory": "1691633152Ki"},
		},
		PendingAssignedClusters: pending,
	}
}

// mc stores a ready, schedulable MC with a fresh report of a swift-NIC ceiling and usage
// (requests alike) taken at reportedAt, holding the given reservations; mutate changes
// the MC first.
func (w world) mc(t *testing.T, stamp string, ceiling, usage int, reportedAt time.Time, pending []string, mutate ...func(*api.ManagementClusterProperties)) *api.ResourceID {
	t.Helper()
	return w.mcWith(t, stamp, aroStatus(reportedAt, ceiling, usage, usage, pending...), mutate...)
}

// mcWith stores a ready, schedulable MC with the given scheduling status.
func (w world) mcWith(t *testing.T, stamp string, status *api.SchedulingStatus, mutate ...func(*api.ManagementClusterProperties)) *api.ResourceID {
	t.Helper()
	rid := controllertest.CreateManagementCluster(t, w.fleet, stamp, "shard-"+stamp)
	if len(mutate) > 0 {
		mc, err := database.Get[api.ManagementClusterProperties](t.Context(), w.fleet, mustFleetPK(t, rid), rid.String())
		require.NoError(t, err)
		for _, m := range mutate {
			m(&mc.Properties)
		}
		_, err = database.Replace(t.Context(), w.fleet, mc)
		require.NoError(t, err)
	}
	_, err := database.Create(t.Context(), w.fleet, api.NewDocument(api.SchedulingResourceID(rid), mustFleetPK(t, rid), api.ManagementClusterSchedulingProperties{
		Status: status,
	}))
	require.NoError(t, err)
	return rid
}

func mustFleetPK(t *testing.T, rid *api.ResourceID) string {
	t.Helper()
	pk, err := api.FleetPartitionKey(rid)
	require.NoError(t, err)
	return pk
}

// scrape registers the collectors on a fresh registry, as the backend does, with the
// default placement configuration, starts the caches over the stored documents, and
// watches them for mutation until the test ends.
func scrape(t *testing.T, store database.Store) *prometheus.Registry {
	t.Helper()
	return scrapeWith(t, store, placement.DefaultConfig())
}

// scrapeWith is scrape with placement configured by cfg. It waits for the snapshot as
// well as the caches: the snapshot parses what the caches listed behind them.
func scrapeWith(t *testing.T, store database.Store, cfg placement.Config) *prometheus.Registry {
	t.Helper()
	f, err := informers.NewFactory(store, informers.Options{PollInterval: 5 * time.Millisecond, Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	caches := informers.NewCaches(f)
	reg := prometheus.NewPedanticRegistry()
	snapshot, err := candidates.New(caches, cfg)
	require.NoError(t, err)
	reg.MustRegister(metrics.NewCollector(caches, snapshot, func() time.Time { return now }))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f.Start(ctx)
	require.True(t, f.WaitForCacheSync(t.Context()))
	require.True(t, cache.WaitForCacheSync(t.Context().Done(), snapshot.HasSynced))
	informertest.DetectMutations(t, caches.Registered()...)
	return reg
}

func newWorld() (database.Store, world) {
	s := memory.New()
	return s, worldOf(s)
}

func worldOf(s database.Store) world {
	return world{resources: s.Container(api.ResourcesContainer), fleet: s.Container(api.FleetContainer)}
}

func TestClusterInfo(t *testing.T) {
	mcA := api.ManagementClusterResourceID("1").String()
	mcB := api.ManagementClusterResourceID("2").String()
	placedAt := now.Add(-time.Minute)
	tests := []struct {
		name               string
		noSPC              bool
		intended, observed string
		wantPlacement      string
		wantMC             string
	}{
		{name: "no SPC yet", noSPC: true, wantPlacement: metrics.PlacementUnplaced},
		{name: "SPC without intent", wantPlacement: metrics.PlacementUnplaced},
		{name: "intent, not observed yet", intended: mcA, wantPlacement: metrics.PlacementPlaced, wantMC: mcA},
		{name: "observed where intended, other casing", intended: mcA, observed: strings.ToUpper(mcA), wantPlacement: metrics.PlacementPlaced, wantMC: mcA},
		{name: "observed elsewhere", intended: mcA, observed: mcB, wantPlacement: metrics.PlacementMismatch, wantMC: mcA},
		{name: "observed without intent", observed: mcB, wantPlacement: metrics.PlacementUnplaced},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, w := newWorld()
			rid := clusterID("Cluster-1")
			w.cluster(t, rid, now.Add(-time.Hour))
			if !tt.noSPC {
				w.spc(t, rid, tt.intended, tt.observed, placedAt)
			}
			reg := scrape(t, store)

			want := fmt.Sprintf(`
# HELP backend_cluster_info %s
# TYPE backend_cluster_info gauge
backend_cluster_info{management_cluster_resource_id=%q,placement=%q,resource_id=%q,subscription_id=%q} 1
`, family(t, reg, metrics.ClusterInfoName).GetHelp(), strings.ToLower(tt.wantMC), tt.wantPlacement, rid.Key(), strings.ToLower(sub))
			require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), metrics.ClusterInfoName))

			got := gauges(t, reg, metrics.ClusterPlacementTimeName)
			if tt.intended != "" {
				assert.Equal(t, map[string]float64{rid.Key(): float64(placedAt.Unix())}, got)
			} else {
				assert.Empty(t, got)
			}
		})
	}
}

// A cluster whose clusterServiceID placement recorded as unmappable is never placed, so
// it is not backlog: PlacementBacklog counts only placement="unplaced".
func TestUnmappableClusterIsNotBacklog(t *testing.T) {
	store, w := newWorld()
	rid := clusterID("Legacy")
	href := "/api/clusters_mgmt/v1/clusters/1243e9e9-d150-4ef1-9735-2bbc3cabc7d0"
	w.cluster(t, rid, now.Add(-time.Hour), func(p *api.ClusterProperties) { p.ServiceProviderProperties.ClusterServiceID = href })
	pk, err := api.ResourcesPartitionKey(rid)
	require.NoError(t, err)
	spc := api.NewDocument(api.ServiceProviderClusterResourceID(rid), pk, api.ServiceProviderClusterProperties{
		Status: &api.ServiceProviderClusterStatus{Placement: &api.PlacementStatus{Conditions: []api.Condition{{
			Type: placement.ConditionCapacityAvailable, Status: api.ConditionFalse,
			Reason: placement.ConditionReasonClusterServiceIDUnmappable, Message: placement.UnmappableMessage(href),
		}}}},
	})
	_, err = database.Create(t.Context(), w.resources, spc)
	require.NoError(t, err)
	reg := scrape(t, store)

	want := fmt.Sprintf(`
# HELP backend_cluster_info %s
# TYPE backend_cluster_info gauge
backend_cluster_info{management_cluster_resource_id="",placement=%q,resource_id=%q,subscription_id=%q} 1
`, family(t, reg, metrics.ClusterInfoName).GetHelp(), metrics.PlacementUnmappable, rid.Key(), strings.ToLower(sub))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), metrics.ClusterInfoName))
}

func TestClusterTimes(t *testing.T) {
	store, w := newWorld()
	created := now.Add(-10 * time.Minute)
	withDate, noDate, gone := clusterID("dated"), clusterID("undated"), clusterID("going")
	w.cluster(t, withDate, created)
	w.cluster(t, noDate, time.Time{})
	w.cluster(t, gone, created, func(p *api.ClusterProperties) {
		p.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateDeleting
	})
	// Adoption records intent without a placement time: no placement time series.
	w.spc(t, noDate, api.ManagementClusterResourceID("1").String(), "", time.Time{})
	reg := scrape(t, store)

	assert.Equal(t, map[string]float64{withDate.Key(): float64(created.Unix())}, gauges(t, reg, metrics.ClusterCreatedTimeName))
	assert.Empty(t, gauges(t, reg, metrics.ClusterPlacementTimeName))
	assert.Len(t, family(t, reg, metrics.ClusterInfoName).GetMetric(), 2, "a deleting cluster is not exported")
}

func TestRegionHeadroom(t *testing.T) {
	fresh := now.Add(-time.Minute)
	cordon := func(p *api.ManagementClusterProperties) { p.Spec.SchedulingPolicy = "Unschedulable" }
	tests := []struct {
		name string
		mcs  func(t *testing.T, w world)
		want float64
	}{
		{"no MCs", func(*testing.T, world) {}, 0},
		{"room for whole HCPs only", func(t *testing.T, w world) {
			w.mc(t, "1", 30, 20, fresh, nil) // 10 NICs: 3 HA HCPs
		}, 3},
		{"full MC counts zero, not negative", func(t *testing.T, w world) {
			w.mc(t, "1", 30, 29, fresh, nil)
			w.mc(t, "2", 30, 40, fresh, nil)
			w.mc(t, "3", 9, 0, fresh, nil)
		}, 3},
		{"reservations hold capacity", func(t *testing.T, w world) {
			w.mc(t, "1", 30, 0, fresh, []string{clusterID("a").Key(), clusterID("b").Key()})
		}, 8},
		{"reservations of clusters without VNet integration hold no swift NICs", func(t *testing.T, w world) {
			a, b := clusterID("a"), clusterID("b")
			w.cluster(t, a, now)
			w.cluster(t, b, now, singleReplica)
			w.mc(t, "1", 30, 0, fresh, []string{a.Key(), b.Key()})
		}, 10},
		{"SWIFT reservations hold 3 for HA, 1 for a single replica", func(t *testing.T, w world) {
			a, b := clusterID("a"), clusterID("b")
			w.cluster(t, a, now, swift)
			w.cluster(t, b, now, swift, singleReplica)
			w.mc(t, "1", 31, 0, fresh, []string{a.Key(), b.Key()}) // 27 left
		}, 9},
		{"counted in SWIFT HA HCPs: room for two single replicas is no headroom", func(t *testing.T, w world) {
			w.mc(t, "1", 30, 28, fresh, nil)
		}, 0},
		{"requests above usage hold capacity", func(t *testing.T, w world) {
			w.mcWith(t, "1", aroStatus(fresh, 30, 3, 12)) // 18 left
		}, 6},
		{"cordoned, stale and unreported MCs are not eligible", func(t *testing.T, w world) {
			w.mc(t, "1", 30, 0, fresh, nil)
			w.mc(t, "2", 300, 0, fresh, nil, cordon)
			w.mc(t, "3", 300, 0, now.Add(-time.Hour), nil)
			controllertest.CreateManagementCluster(t, w.fleet, "4", "shard-4")
		}, 10},
		{"an MC reporting from the future is not eligible; one within the clock-skew allowance is", func(t *testing.T, w world) {
			w.mc(t, "1", 30, 0, now.Add(10*time.Minute), nil)
			w.mc(t, "2", 30, 0, now.Add(30*time.Second), nil)
		}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, w := newWorld()
			tt.mcs(t, w)
			reg := scrape(t, store)
			assert.Equal(t, map[string]float64{"": tt.want}, gauges(t, reg, metrics.RegionHeadroomName))
		})
	}
}

func TestManagementClusterAges(t *testing.T) {
	store, w := newWorld()
	stamped, unstamped, unknown := clusterID("stamped"), clusterID("unstamped"), clusterID("unknown")
	w.cluster(t, stamped, now.Add(-time.Hour))
	w.spc(t, stamped, api.ManagementClusterResourceID("1").String(), "", now.Add(-20*time.Minute))
	// A crash between reserving and stamping the SPC: dated by the cluster's creation.
	w.cluster(t, unstamped, now.Add(-45*time.Minute))
	busy := w.mc(t, "1", 300, 0, now.Add(-90*time.Second), []string{stamped.Key(), unstamped.Key()})
	recent := w.mc(t, "2", 300, 0, now.Add(-30*time.Second), []string{stamped.Key()})
	// Reservations of unknown age export nothing rather than a made-up age.
	idle := w.mc(t, "3", 300, 0, now.Add(-10*time.Minute), []string{unknown.Key()})
	controllertest.CreateManagementCluster(t, w.fleet, "4", "shard-4")
	// Clocks disagree: within the allowance a report from the future is fresh (age 0);
	// beyond it placement does not believe it, so it is older than any threshold.
	ahead := w.mc(t, "5", 300, 0, now.Add(30*time.Second), nil)
	future := w.mc(t, "6", 300, 0, now.Add(10*time.Minute), nil)
	reg := scrape(t, store)

	assert.Equal(t, map[string]float64{busy.Key(): 90, recent.Key(): 30, idle.Key(): 600, ahead.Key(): 0, future.Key(): math.Inf(1)},
		gauges(t, reg, metrics.CapacityReportAgeName))
	assert.Equal(t, map[string]float64{busy.Key(): 45 * 60, recent.Key(): 20 * 60}, gauges(t, reg, metrics.OldestReservationAgeName))
}

func TestManagementClusterCeilingAndUsage(t *testing.T) {
	store, w := newWorld()
	mc := w.mc(t, "1", 300, 42, now, nil)
	controllertest.CreateManagementCluster(t, w.fleet, "2", "shard-2")
	reg := scrape(t, store)

	want := fmt.Sprintf(`
# HELP %[1]s %[2]s
# TYPE %[1]s gauge
%[1]s{management_cluster_resource_id=%[3]q,resource=%[4]q} 300
# HELP %[5]s %[6]s
# TYPE %[5]s gauge
%[5]s{management_cluster_resource_id=%[3]q,resource=%[4]q} 42
`, metrics.ScaleCeilingName, family(t, reg, metrics.ScaleCeilingName).GetHelp(), mc.Key(), api.SwiftNIC,
		metrics.UsageName, family(t, reg, metrics.UsageName).GetHelp())
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), metrics.ScaleCeilingName, metrics.UsageName))
}

// family gathers one metric family; nil when the registry exports no series of it.
func family(t *testing.T, reg *prometheus.Registry, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	return nil
}

// gauges is one gauge family as value by its single label's value ("" without labels).
func gauges(t *testing.T, reg *prometheus.Registry, name string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range family(t, reg, name).GetMetric() {
		require.LessOrEqual(t, len(m.GetLabel()), 1)
		key := ""
		if len(m.GetLabel()) == 1 {
			key = m.GetLabel()[0].GetValue()
		}
		out[key] = m.GetGauge().GetValue()
	}
	return out
}
