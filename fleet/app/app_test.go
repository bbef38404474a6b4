package app

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/fleet/agentpools"
	"github.com/hcpsched/hcpsched/fleet/capacity"
	"github.com/hcpsched/hcpsched/fleet/register"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/shard"
)

// What ARO-HCP's fixtures hold for management cluster 1.
const (
	aksOfStamp1         = "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/hcp-underlay-dev-westus3-mgmt-1/providers/Microsoft.ContainerService/managedClusters/dev-westus3-mgmt-1"
	kubeApplierOfStamp1 = "Manifests-MC-1"
	fixtureReadDesire1  = "constructed/readdesire-capacity-stamp-1.json"
)

var (
	mc1                   = api.ManagementClusterResourceID("1")
	schedulingOf1         = api.SchedulingResourceID(mc1)
	capacityReadDesireOf1 = api.CapacityReadDesireResourceID(mc1)
)

func decoded[P any](t *testing.T, item database.Item) *api.Document[P] {
	t.Helper()
	d, err := database.DecodeItem[P](item)
	require.NoError(t, err)
	return d
}

// The fleet as it runs, its five controllers on their triggers, takes a freshly
// registered management cluster to a registered, Ready MC whose scheduling document
// follows the capacity report, releasing a reservation once its cluster is reported:
// with one replica working every key, and as a leaderless replica that leases the shards
// of its keys first.
func TestFleetTakesARegisteredManagementClusterToSchedulingData(t *testing.T) {
	t.Parallel()
	for name, sharded := range map[string]bool{"every key": false, "leaderless, sharded": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fleetToSchedulingData(t, sharded)
		})
	}
}

func fleetToSchedulingData(t *testing.T, sharded bool) {
	hooks := &controllertest.Hooks{}
	k := controllertest.New(t, controllertest.WithStore(hooks.Wrap))
	require.NoError(t, register.Run(t.Context(), k.Memory, register.Options{
		Stamp: "1", AutoApprove: true, SchedulingPolicy: api.Schedulable,
		AKSResourceID:                                        aksOfStamp1,
		PublicDNSZoneResourceID:                              "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/global/providers/Microsoft.Network/dnszones/usw3.hcp.osadev.cloud",
		HostedClustersSecretsKeyVaultURL:                     "https://ah-dev-cx-usw3-1.vault.azure.net/",
		HostedClustersManagedIdentitiesKeyVaultURL:           "https://ah-dev-mi-usw3-1.vault.azure.net/",
		HostedClustersSecretsKeyVaultManagedIdentityClientID: "6f1c3a52-9d7e-4b1a-8c55-2f0e9d41b7a3",
		MaestroConsumerName:                                  "hcp-underlay-usw3-mgmt-1",
		MaestroRESTAPIURL:                                    "http://maestro.maestro.svc.cluster.local:8000",
		MaestroGRPCTarget:                                    "maestro-grpc.maestro.svc.cluster.local:8090",
		KubeApplierCosmosContainerName:                       kubeApplierOfStamp1,
	}, time.Now()))

	pools, err := agentpools.ParseStatic([]byte(`{"*": [{"name": "worker", "properties": {"vmSize": "Standard_D16ds_v5",
		"count": 3, "enableAutoScaling": true, "maxCount": 10, "nodeLabels": {"aro-hcp.azure.com/role": "worker"}}}]}`))
	require.NoError(t, err)
	var sharding *shard.Config
	if sharded {
		// On the unhooked store: the leases' own writes are not the controllers'.
		sharding = &shard.Config{Container: k.Memory.Container(shard.DefaultLeaseContainer), Group: "fleet", Identity: "fleet-0",
			Shards: shard.DefaultShards, LeaseDuration: time.Second, RenewDeadline: 600 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}
	}
	fleet, err := New(Config{
		Store: k.Store, ClusterService: k.CSClient, AgentPools: pools, VMSizes: capacity.DefaultVMSizes, Region: "westus3",
		Workers: 2, ResyncPeriod: time.Hour, CapacityPollInterval: 20 * time.Millisecond, ScaleCeilingInterval: time.Hour,
		Registerer: prometheus.NewRegistry(), Logger: k.Logger,
		Informers: informers.Options{PollInterval: controllertest.PollInterval},
		Sharding:  sharding,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, fleet.StartCaches(ctx))
	require.True(t, fleet.WaitForCacheSync(t.Context()))
	done := make(chan error, 1)
	go func() { done <- fleet.RunControllers(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})

	// Registration, then Ready.
	require.Eventually(t, func() bool {
		mc := decoded[api.ManagementClusterProperties](t, k.Stored(t, api.FleetContainer, mc1))
		return mc.Properties.Status.ClusterServiceProvisionShardID != "" &&
			api.IsConditionTrue(mc.Properties.Status.Conditions, api.ManagementClusterConditionReady)
	}, controllertest.WaitFor, controllertest.Tick)
	shards, err := k.CSClient.ListProvisionShards(t.Context())
	require.NoError(t, err)
	require.Len(t, shards, 1)
	assert.Equal(t, "active", shards[0].Status())

	// The ReadDesire appears; the scale ceiling is computed from the VM size table.
	require.Eventually(t, func() bool { return k.Exists(t, kubeApplierOfStamp1, capacityReadDesireOf1) }, controllertest.WaitFor, controllertest.Tick)
	require.Eventually(t, func() bool {
		status := decoded[api.ManagementClusterSchedulingProperties](t, k.Stored(t, api.FleetContainer, schedulingOf1)).Properties.Status
		return status.ScaleCeiling != nil && status.ScaleCeiling.Capacity[api.SwiftNIC] == "" && status.ScaleCeiling.Capacity["cpu"] == "160"
	}, controllertest.WaitFor, controllertest.Tick, "no NIC count is known without a report or a tag")

	// The backend reserves capacity for a cluster; kube-applier then mirrors a report that
	// shows it not ready.
	const reservation = "/subscriptions/4fa75980-6637-4157-9726-84d878a62e83/resourcegroups/shrilleffectiveness/providers/microsoft.redhatopenshift/hcpopenshiftclusters/lavishunhappiness"
	k.ReplaceStored(t, api.FleetContainer, schedulingOf1, controllertest.Set("properties.status.pendingAssignedClusters", []string{reservation}))
	var fixture map[string]any
	require.NoError(t, json.Unmarshal(arohcp.Get(fixtureReadDesire1), &fixture))
	kubeContent := fixture["properties"].(map[string]any)["status"].(map[string]any)["kubeContent"]
	k.ReplaceStored(t, kubeApplierOfStamp1, capacityReadDesireOf1, controllertest.Set("properties.status.kubeContent", kubeContent))

	require.Eventually(t, func() bool {
		status := decoded[api.ManagementClusterSchedulingProperties](t, k.Stored(t, api.FleetContainer, schedulingOf1)).Properties.Status
		return len(status.NotReadyResourceIDs) == 1 && len(status.PendingAssignedClusters) == 0
	}, controllertest.WaitFor, controllertest.Tick)
	status := decoded[api.ManagementClusterSchedulingProperties](t, k.Stored(t, api.FleetContainer, schedulingOf1)).Properties.Status
	assert.Equal(t, api.ResourceList{api.SwiftNIC: "128", "cpu": "126560m", "memory": "602245408Ki"}, status.ObservedResources.Capacity)
	assert.True(t, api.IsConditionTrue(status.Conditions, api.SchedulingConditionCapacityDataCurrent))

	// Nothing changes any more: the next polls read the report and write nothing. (A pass
	// may still try a write from a cache one version behind and get 412: that is not a
	// change.)
	settled := k.Stored(t, api.FleetContainer, schedulingOf1).ETag
	written := hooks.SuccessfulReplaces()
	reads := hooks.PointReads(kubeApplierOfStamp1)
	require.Eventually(t, func() bool { return hooks.PointReads(kubeApplierOfStamp1) >= reads+3 }, controllertest.WaitFor, controllertest.Tick)
	assert.Equal(t, written, hooks.SuccessfulReplaces())
	assert.Equal(t, settled, k.Stored(t, api.FleetContainer, schedulingOf1).ETag)
}

// The fleet's flags reach the controllers: one worker count and reconcile timeout for
// all, the resync period for the three that resync, the polling intervals as the two
// periodic controllers' RequeueAfter.
func TestSettingsFollowTheFlags(t *testing.T) {
	t.Parallel()
	got := settings(Config{Workers: 3, ResyncPeriod: time.Minute, ReconcileTimeout: 7 * time.Second,
		CapacityPollInterval: 11 * time.Second, ScaleCeilingInterval: 13 * time.Minute})
	resyncing := func(requeue time.Duration) map[string]any {
		return map[string]any{"workers": 3, "resync": time.Minute, "requeue": requeue, "timeout": 7 * time.Second}
	}
	periodic := func(interval time.Duration) map[string]any {
		return map[string]any{"workers": 3, "resync": time.Duration(0), "requeue": interval, "timeout": 7 * time.Second}
	}
	want := map[string]map[string]any{
		"ClustersServiceRegistrationController": resyncing(5 * time.Second),
		"LifecycleController":                   resyncing(5 * time.Second),
		"CapacityReadDesireController":          resyncing(5 * time.Second),
		"CapacityReportingController":           periodic(11 * time.Second),
		"ScaleCeilingController":                periodic(13 * time.Minute),
	}
	have := map[string]map[string]any{}
	for name, s := range got {
		have[name] = map[string]any{"workers": s.Workers, "resync": s.ResyncPeriod, "requeue": s.RequeueAfter, "timeout": s.ReconcileTimeout}
	}
	assert.Equal(t, want, have)
}
