package controllers

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/fleet/agentpools"
	"github.com/hcpsched/hcpsched/fleet/register"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// The five controllers running together on their triggers take a freshly registered
// management cluster to a registered, Ready MC whose scheduling document follows the
// capacity report, releasing a reservation once its cluster is reported.
func TestControllersTogether(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	opts := register.Options{
		Stamp: "1", AutoApprove: true, SchedulingPolicy: api.Schedulable,
		AKSResourceID:                                        aksOfStamp1,
		PublicDNSZoneResourceID:                              "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/global/providers/Microsoft.Network/dnszones/usw3.hcp.osadev.cloud",
		HostedClustersSecretsKeyVaultURL:                     "https://ah-dev-cx-usw3-1.vault.azure.net/",
		HostedClustersManagedIdentitiesKeyVaultURL:           "https://ah-dev-mi-usw3-1.vault.azure.net/",
		HostedClustersSecretsKeyVaultManagedIdentityClientID: "6f1c3a52-9d7e-4b1a-8c55-2f0e9d41b7a3",
		MaestroConsumerName:                                  consumerOfStamp1,
		MaestroRESTAPIURL:                                    "http://maestro.maestro.svc.cluster.local:8000",
		MaestroGRPCTarget:                                    "maestro-grpc.maestro.svc.cluster.local:8090",
		KubeApplierCosmosContainerName:                       kubeApplierOfStamp1,
	}
	require.NoError(t, register.Run(e.ctx, e.mem, opts, testNow))

	pools, err := agentpools.ParseStatic([]byte(`{"*": [{"name": "worker", "properties": {"vmSize": "Standard_D16ds_v5",
		"count": 3, "enableAutoScaling": true, "maxCount": 10, "nodeLabels": {"aro-hcp.azure.com/role": "worker"}}}]}`))
	require.NoError(t, err)
	metrics, err := controller.NewMetrics(prometheus.NewRegistry())
	require.NoError(t, err)
	env := e.fleetEnv()
	env.AgentPools, env.Now = pools, nil
	cfg := map[string]controller.Settings{}
	for _, def := range Definitions() {
		s := def.Defaults
		s.ResyncPeriod = time.Hour
		switch def.Name {
		case CapacityReportingControllerName:
			s.RequeueAfter = 20 * time.Millisecond
		case ScaleCeilingControllerName:
			s.RequeueAfter = time.Hour
		}
		cfg[def.Name] = s
	}
	ctrls, err := controller.Build(env, controller.Runtime{Metrics: metrics, Logger: slog.New(slog.DiscardHandler)}, Definitions(), cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for _, c := range ctrls {
		wg.Go(func() { _ = c.Run(ctx) })
	}

	// Registration, then Ready.
	require.Eventually(t, func() bool {
		mc, err := e.caches.ManagementClusters().Lister().Get(mc1.Key())
		return err == nil && mc.Properties.Status.ClusterServiceProvisionShardID != "" &&
			api.IsConditionTrue(mc.Properties.Status.Conditions, api.ManagementClusterConditionReady)
	}, 10*time.Second, 10*time.Millisecond)
	shards := e.shards()
	require.Len(t, shards, 1)
	assert.Equal(t, "active", shards[0].Status())

	// The ReadDesire appears; the scale ceiling is computed from the VM size table.
	pk := api.KubeApplierPartitionKey(mc1)
	require.Eventually(t, func() bool { return e.exists(kubeApplierOfStamp1, pk, capacityReadDesireOf1) }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		d, err := e.caches.ManagementClusterSchedulings().Lister().Get(schedulingOf1.String())
		return err == nil && d.Properties.Status.ScaleCeiling != nil && d.Properties.Status.ScaleCeiling.Capacity[api.SwiftNIC] == "" &&
			d.Properties.Status.ScaleCeiling.Capacity["cpu"] == "160"
	}, 10*time.Second, 10*time.Millisecond, "no NIC count is known without a report or a tag")

	// The backend reserves capacity for a cluster; kube-applier then mirrors a report that
	// shows it not ready.
	const reservation = "/subscriptions/4fa75980-6637-4157-9726-84d878a62e83/resourcegroups/shrilleffectiveness/providers/microsoft.redhatopenshift/hcpopenshiftclusters/lavishunhappiness"
	e.replaceStored(api.FleetContainer, schedulingOf1, edit{"properties.status.pendingAssignedClusters", []string{reservation}})
	var fixture map[string]any
	require.NoError(t, json.Unmarshal(arohcp.Get(fixtureReadDesire1), &fixture))
	kubeContent := fixture["properties"].(map[string]any)["status"].(map[string]any)["kubeContent"]
	e.replaceStored(kubeApplierOfStamp1, capacityReadDesireOf1, edit{"properties.status.kubeContent", kubeContent})

	require.Eventually(t, func() bool {
		d, err := e.caches.ManagementClusterSchedulings().Lister().Get(schedulingOf1.String())
		return err == nil && len(d.Properties.Status.NotReadyResourceIDs) == 1 && len(d.Properties.Status.PendingAssignedClusters) == 0
	}, 10*time.Second, 10*time.Millisecond)
	d, err := e.caches.ManagementClusterSchedulings().Lister().Get(schedulingOf1.String())
	require.NoError(t, err)
	assert.Equal(t, api.ResourceList{api.SwiftNIC: "128", "cpu": "126560m", "memory": "602245408Ki"}, d.Properties.Status.ObservedResources.Capacity)
	assert.True(t, api.IsConditionTrue(d.Properties.Status.Conditions, api.SchedulingConditionCapacityDataCurrent))

	// Nothing changes any more: the next polls read the report and write nothing. (A pass
	// may still try a write from a cache one version behind and get 412: that is not a
	// change.)
	settled := e.item(api.FleetContainer, schedulingOf1).ETag
	written := successful(e.store)
	reads := e.store.pointReads(kubeApplierOfStamp1)
	require.Eventually(t, func() bool { return e.store.pointReads(kubeApplierOfStamp1) >= reads+3 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, written, successful(e.store))
	assert.Equal(t, settled, e.item(api.FleetContainer, schedulingOf1).ETag)
}

func successful(s *hookStore) int {
	replaces, _ := s.writes()
	n := 0
	for _, w := range replaces {
		if w.err == nil {
			n++
		}
	}
	return n
}
