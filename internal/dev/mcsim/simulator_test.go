package mcsim

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/backend/clusterbody"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/emulator"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
)

const testDelay = 10 * time.Second

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type env struct {
	t     *testing.T
	store database.Store
	fake  *fakeclusterservice.Server
	cs    *clusterservice.Client
	clock *clock
	sim   *Simulator
	url   string
	n     int
}

// stores are the stores the simulator is tested on; the emulator's containers are created
// up front, as `fleet register --ensure-layout` creates them in a region.
var stores = []struct {
	name string
	open func(t *testing.T) database.Store
}{
	{"memory", func(*testing.T) database.Store { return memory.New() }},
	{"emulator", func(t *testing.T) database.Store {
		emu := emulator.StartForTest(t)
		store, err := cosmos.Open(cosmos.Config{Endpoint: emu.Endpoint, Key: emu.Key, Database: cosmos.DefaultDatabase}, prometheus.NewRegistry())
		require.NoError(t, err)
		require.NoError(t, store.EnsureLayout(t.Context(), api.FleetContainer, api.ResourcesContainer,
			"kubeapplier-a", "kubeapplier-tight", "kubeapplier-waiting"))
		return store
	}},
}

func newEnv(t *testing.T) *env { return newEnvOn(t, memory.New()) }

func newEnvOn(t *testing.T, store database.Store) *env {
	f := fakeclusterservice.New()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cs, err := clusterservice.New(t.Context(), clusterservice.Config{URL: srv.URL, DisableRetries: true, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	e := &env{t: t, store: store, fake: f, cs: cs, url: srv.URL, clock: &clock{now: time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)}}
	e.sim = New(Config{
		Store: e.store, ClusterServiceURL: srv.URL, NotReadyDelay: testDelay, Now: e.clock.Now,
		ProfileFor: func(mc *api.ResourceID) Profile {
			p := DefaultProfile()
			if strings.Contains(mc.Key(), "/stamps/tight/") {
				p.Nodes = 1
			}
			return p
		},
	})
	return e
}

// addMC registers an MC document, its shard in CS and, if withReadDesire, the capacity
// ReadDesire the fleet creates; it returns the MC's resource ID and shard id.
func (e *env) addMC(stamp string, withReadDesire bool) (*api.ResourceID, string) {
	t := e.t
	shard, err := arohcp.NewProvisionShard().
		Region(arohcp.NewCloudRegion().ID("eastus")).
		CloudProvider(arohcp.NewCloudProvider().ID("azure")).
		Topology("shared").
		AzureShard(arohcp.NewAzureShard().
			AksManagementClusterResourceId("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/mc/providers/Microsoft.ContainerService/managedClusters/mc-" + stamp).
			PublicDnsZoneResourceId("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/dns/providers/Microsoft.Network/dnszones/example.com").
			CxManagedIdentitiesKeyVaultUrl("https://mi.vault.azure.net/").
			CxSecretsKeyVaultUrl("https://secrets.vault.azure.net/").
			CxSecretsKeyVaultManagedIdentityClientId("11111111-1111-1111-1111-111111111111")).
		MaestroConfig(arohcp.NewProvisionShardMaestroConfig().
			ConsumerName("consumer-" + stamp).
			RestApiConfig(arohcp.NewProvisionShardMaestroRestApiConfig().Url("http://maestro:8000")).
			GrpcApiConfig(arohcp.NewProvisionShardMaestroGrpcApiConfig().Url("maestro:8090"))).
		Build()
	require.NoError(t, err)
	created, err := e.cs.CreateProvisionShard(t.Context(), shard)
	require.NoError(t, err)
	href, err := clusterservice.ShardHREF(created.ID())
	require.NoError(t, err)

	mcID := api.ManagementClusterResourceID(stamp)
	pk, err := api.FleetPartitionKey(mcID)
	require.NoError(t, err)
	container := "kubeapplier-" + stamp
	_, err = database.Create(t.Context(), e.store.Container(api.FleetContainer), api.NewDocument(mcID, pk, api.ManagementClusterProperties{
		Spec: &api.ManagementClusterSpec{SchedulingPolicy: api.Schedulable},
		Status: &api.ManagementClusterStatus{
			ClusterServiceProvisionShardID: href, KubeApplierCosmosContainerName: container,
		},
	}))
	require.NoError(t, err)
	if withReadDesire {
		body := fmt.Sprintf(`{"id":"x","resourceID":%q,"partitionKey":%q,"properties":{"spec":{"managementCluster":%q,"targetItem":{"group":%q,"version":%q,"resource":%q,"name":%q},"futureField":"kept"}}}`,
			api.CapacityReadDesireResourceID(mcID), api.KubeApplierPartitionKey(mcID), mcID,
			api.CapacityReportGroup, api.CapacityReportVersion, api.CapacityReportResource, api.CapacityReportName)
		doc, err := api.Decode[api.ReadDesireProperties]([]byte(body))
		require.NoError(t, err)
		doc.ID = api.CosmosID(doc.ResourceID)
		_, err = database.Create(t.Context(), e.store.Container(container), doc)
		require.NoError(t, err)
	}
	return mcID, created.ID()
}

// Kinds of the test clusters.
var (
	swiftHA     = frontend.Kind{Swift: true}
	swiftSingle = frontend.Kind{Swift: true, SingleReplica: true}
	plainHA     = frontend.Kind{}
	plainSingle = frontend.Kind{SingleReplica: true}
)

// addCluster writes cluster n's Subscription and cluster documents of kind k as ARO-HCP's
// frontend does and creates it in Cluster Service pinned to shard, with the body
// ClusterServiceCreate sends; it returns the cluster's CS ID.
func (e *env) addCluster(shard string, k frontend.Kind) string {
	t := e.t
	e.n++
	resources := e.store.Container(api.ResourcesContainer)
	sub, err := frontend.Subscription(frontend.SubscriptionID(e.n), frontend.Tenant)
	require.NoError(t, err)
	_, err = database.Create(t.Context(), resources, sub)
	require.NoError(t, err)
	doc, err := frontend.ClusterOfKind(e.n, k, e.clock.Now())
	require.NoError(t, err)
	href, err := clusterservice.ClusterHREF(clusterservice.NewClusterID())
	require.NoError(t, err)
	doc.Properties.ServiceProviderProperties.PendingClusterServiceID = href
	_, err = database.Create(t.Context(), resources, doc)
	require.NoError(t, err)

	rid, err := doc.ParsedResourceID()
	require.NoError(t, err)
	// The SPC as ARO-HCP's ControlPlaneDesiredVersion leaves it; only the body reads it.
	spc := api.NewDocument(api.ServiceProviderClusterResourceID(rid), doc.PartitionKey, api.ServiceProviderClusterProperties{Spec: &api.ServiceProviderClusterSpec{
		ControlPlaneVersion: &api.ControlPlaneVersionSpec{DesiredVersion: "4.20.8"},
	}})
	body, err := clusterbody.Build(clusterbody.Input{Cluster: doc, SPC: spc, TenantID: frontend.Tenant, ShardID: shard})
	require.NoError(t, err)
	c, err := e.cs.CreatePinnedCluster(t.Context(), body, shard)
	require.NoError(t, err)
	return c.ID()
}

func (e *env) report(mcID *api.ResourceID) (*api.ReadDesire, *api.CapacityReport) {
	t := e.t
	rd, err := database.Get[api.ReadDesireProperties](t.Context(), e.store.Container("kubeapplier-"+mcID.Names[0]),
		api.KubeApplierPartitionKey(mcID), api.CapacityReadDesireResourceID(mcID).String())
	require.NoError(t, err)
	require.NotNil(t, rd.Properties.Status)
	report, err := api.DecodeCapacityReport(rd.Properties.Status.KubeContent)
	require.NoError(t, err)
	return rd, report
}

// onShard is what the fake CS says the MC runs, as ARM resource IDs.
func (e *env) onShard(shard string) []string {
	clusters, err := e.fake.ClustersOnShard(shard)
	require.NoError(e.t, err)
	out := []string{}
	for _, c := range clusters {
		rid, ok := fakeclusterservice.AzureResourceID(c)
		require.True(e.t, ok)
		out = append(out, rid)
	}
	return out
}

func reported(r *api.CapacityReport) []string {
	return append(append([]string{}, r.Status.HostedControlPlanes.ReadyResourceIDs...), r.Status.HostedControlPlanes.NotReadyResourceIDs...)
}

func TestSyncReportsWhatTheFakeClusterServiceHasOnEachShard(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) { testReportsMatchClusterService(t, newEnvOn(t, st.open(t))) })
	}
}

func testReportsMatchClusterService(t *testing.T, e *env) {
	mcA, shardA := e.addMC("a", true)
	mcT, shardT := e.addMC("tight", true)
	e.addMC("waiting", false) // the fleet has not created its ReadDesire yet: skipped

	e.addCluster(shardA, swiftHA)
	e.addCluster(shardA, swiftSingle)
	moved := e.addCluster(shardA, swiftHA)
	e.addCluster(shardT, swiftHA)

	require.NoError(t, e.sim.Sync(t.Context()))
	rdA, repA := e.report(mcA)
	_, repT := e.report(mcT)
	assert.ElementsMatch(t, e.onShard(shardA), reported(repA))
	assert.ElementsMatch(t, e.onShard(shardT), reported(repT))
	assert.Empty(t, repA.Status.HostedControlPlanes.ReadyResourceIDs, "new HCPs are not ready before the delay")
	assert.Empty(t, repA.Status.Usage, "a HostedControlPlane just created has no pods yet")
	assert.Empty(t, repA.Status.Requested)
	assert.Equal(t, "48", repA.Status.Nodes[0].Allocatable[api.SwiftNIC], "3 nodes of 16")
	assert.Equal(t, "16", repT.Status.Nodes[0].Allocatable[api.SwiftNIC], "the tight MC has 1 node")
	assert.True(t, api.IsConditionTrue(repA.Status.Conditions, api.CapacityReportConditionReportCurrent))
	assert.Equal(t, e.clock.Now(), repA.Status.LastReportedAt)
	assert.True(t, api.IsConditionTrue(rdA.Properties.Status.Conditions, "Successful"))
	spec, err := api.Encode(rdA)
	require.NoError(t, err)
	assert.Contains(t, string(spec), `"futureField":"kept"`, "fields the simulator does not own survive")

	// A cluster moved behind the API's back is reported by its new MC only; after the
	// delay every HCP is ready.
	_, err = e.fake.MoveCluster(moved, shardT)
	require.NoError(t, err)
	e.clock.advance(testDelay)
	require.NoError(t, e.sim.Sync(t.Context()))
	_, repA = e.report(mcA)
	_, repT = e.report(mcT)
	assert.ElementsMatch(t, e.onShard(shardA), repA.Status.HostedControlPlanes.ReadyResourceIDs)
	assert.ElementsMatch(t, e.onShard(shardT), repT.Status.HostedControlPlanes.ReadyResourceIDs)
	assert.Empty(t, repA.Status.HostedControlPlanes.NotReadyResourceIDs)
	assert.Equal(t, "4", repA.Status.Usage[api.SwiftNIC], "one HA HCP (3) and one single-replica (1)")
	assert.Equal(t, "4", repA.Status.Requested[api.SwiftNIC])
	assert.Equal(t, "6", repT.Status.Usage[api.SwiftNIC])
	assert.Equal(t, e.clock.Now(), repT.Status.LastReportedAt)
}

func TestSyncReportsNewHCPsNotReadyUntilTheDelayPasses(t *testing.T) {
	e := newEnv(t)
	mc, shard := e.addMC("a", true)
	first := e.addCluster(shard, swiftHA)
	require.NoError(t, e.sim.Sync(t.Context()))
	e.clock.advance(testDelay / 2)
	e.addCluster(shard, swiftHA)
	require.NoError(t, e.sim.Sync(t.Context()))
	_, r := e.report(mc)
	assert.Empty(t, r.Status.HostedControlPlanes.ReadyResourceIDs)
	assert.Len(t, r.Status.HostedControlPlanes.NotReadyResourceIDs, 2)

	e.clock.advance(testDelay / 2)
	require.NoError(t, e.sim.Sync(t.Context()))
	_, r = e.report(mc)
	c, err := e.cs.GetCluster(t.Context(), first)
	require.NoError(t, err)
	firstRID, _ := fakeclusterservice.AzureResourceID(c)
	assert.Equal(t, []string{firstRID}, r.Status.HostedControlPlanes.ReadyResourceIDs)
	assert.Len(t, r.Status.HostedControlPlanes.NotReadyResourceIDs, 1)
}

// Swift NICs follow upstream placement's rule: a SWIFT HA HCP's pods request 3, a SWIFT
// single-replica one's 1 and a non-SWIFT one's none, which the cluster document decides.
func TestSyncRequestsSwiftNICsByClusterKind(t *testing.T) {
	tests := []struct {
		name  string
		kinds []frontend.Kind
		// wantNICs is the swift-nic of requested and usage; "" is no entry at all.
		wantNICs string
	}{
		{"SWIFT HA", []frontend.Kind{swiftHA}, "3"},
		{"SWIFT single replica", []frontend.Kind{swiftSingle}, "1"},
		{"non-SWIFT HA", []frontend.Kind{plainHA}, ""},
		{"non-SWIFT single replica", []frontend.Kind{plainSingle}, ""},
		{"one of each", []frontend.Kind{swiftHA, swiftSingle, plainHA, plainSingle}, "4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			mc, shard := e.addMC("a", true)
			for _, k := range tt.kinds {
				e.addCluster(shard, k)
			}
			require.NoError(t, e.sim.Sync(t.Context()))
			e.clock.advance(testDelay)
			require.NoError(t, e.sim.Sync(t.Context()))
			_, r := e.report(mc)
			require.Len(t, r.Status.HostedControlPlanes.ReadyResourceIDs, len(tt.kinds))
			nics, requested := r.Status.Requested[api.SwiftNIC]
			assert.Equal(t, tt.wantNICs != "", requested, "a swift-nic entry only where a pod requests one")
			assert.Equal(t, tt.wantNICs, nics)
			assert.Equal(t, r.Status.Requested[api.SwiftNIC], r.Status.Usage[api.SwiftNIC], "NICs used are NICs requested")
			_, used := r.Status.Usage[api.SwiftNIC]
			assert.Equal(t, requested, used)
			assert.NotEmpty(t, r.Status.Requested["cpu"], "every HCP's pods request cpu")
		})
	}
}

// A new HCP's replicas start one by one over its not-ready delay, and the agent counts
// only the pods that exist: requests from Running and Pending pods, usage from running
// ones.
func TestSyncRampsANewHCPOverItsNotReadyDelay(t *testing.T) {
	e := newEnv(t)
	mc, shard := e.addMC("a", true)
	e.addCluster(shard, swiftHA)
	start := e.clock.Now()
	for _, step := range []struct {
		at                                   time.Duration
		ready                                bool
		wantNICs, wantCPU, wantMem, wantUsed string
	}{
		{at: 0},
		{at: time.Second, wantNICs: "1", wantCPU: "500m", wantMem: "2Gi"},
		{at: 4 * time.Second, wantNICs: "2", wantCPU: "1", wantMem: "4Gi", wantUsed: "250m"},
		{at: 7 * time.Second, wantNICs: "3", wantCPU: "1500m", wantMem: "6Gi", wantUsed: "500m"},
		{at: testDelay, ready: true, wantNICs: "3", wantCPU: "1500m", wantMem: "6Gi", wantUsed: "750m"},
	} {
		e.clock.set(start.Add(step.at))
		require.NoError(t, e.sim.Sync(t.Context()))
		_, r := e.report(mc)
		assert.Equal(t, step.ready, len(r.Status.HostedControlPlanes.ReadyResourceIDs) == 1, "at %s", step.at)
		assert.Equal(t, step.wantNICs, r.Status.Requested[api.SwiftNIC], "requested NICs at %s", step.at)
		assert.Equal(t, step.wantNICs, r.Status.Usage[api.SwiftNIC], "used NICs at %s", step.at)
		assert.Equal(t, step.wantCPU, r.Status.Requested["cpu"], "requested cpu at %s", step.at)
		assert.Equal(t, step.wantMem, r.Status.Requested["memory"], "requested memory at %s", step.at)
		assert.Equal(t, step.wantUsed, r.Status.Usage["cpu"], "used cpu at %s", step.at)
	}
}

func TestParseStampNodesAndProfiles(t *testing.T) {
	got, err := ParseStampNodes("1=1, Tight=2")
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"1": 1, "tight": 2}, got)
	empty, err := ParseStampNodes("")
	require.NoError(t, err)
	assert.Empty(t, empty)
	for _, bad := range []string{"1", "=2", "1=x", "1=-1"} {
		_, err := ParseStampNodes(bad)
		assert.Error(t, err, bad)
	}

	profileFor := ProfilesByStamp(DefaultProfile(), got)
	assert.Equal(t, 2, profileFor(api.ManagementClusterResourceID("tight")).Nodes)
	assert.Equal(t, DefaultNodes, profileFor(api.ManagementClusterResourceID("7")).Nodes)
}

// Without a client of the caller's, each request to the fake Cluster Service has a
// deadline: a listing that never answers would otherwise stall every MC's report.
func TestDefaultClientHasADeadline(t *testing.T) {
	s := New(Config{})
	require.NotNil(t, s.cfg.HTTPClient)
	assert.Equal(t, DefaultRequestTimeout, s.cfg.HTTPClient.Timeout)
}
