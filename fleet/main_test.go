package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/fleet/controllers"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/dev/cosmostest"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/dev/logbuffer"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/process"
)

func env(m map[string]string) process.LookupEnvFunc {
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

func TestCommands(t *testing.T) {
	assert.ErrorContains(t, run(t.Context(), nil, io.Discard), "no command given")
	assert.ErrorContains(t, run(t.Context(), []string{"serve"}, io.Discard), `unknown command "serve"`)
	assert.ErrorIs(t, run(t.Context(), []string{"help"}, io.Discard), flag.ErrHelp)
	assert.ErrorIs(t, run(t.Context(), []string{"controller", "-h"}, io.Discard), flag.ErrHelp)
	assert.ErrorIs(t, run(t.Context(), []string{"register", "-h"}, io.Discard), flag.ErrHelp)
}

func TestControllerFlagDefaults(t *testing.T) {
	f, err := parseControllerFlags(nil, io.Discard, env(nil))
	require.Error(t, err, "required flags are missing")
	for _, want := range []string{"--cosmos-endpoint is required", "--clusters-service-url is required", "--region is required"} {
		assert.ErrorContains(t, err, want)
	}
	assert.Equal(t, controllers.DefaultWorkers, f.workers)
	assert.Equal(t, controllers.DefaultResyncPeriod, f.resyncPeriod)
	assert.Equal(t, controllers.DefaultCapacityPollInterval, f.capacityPollInterval)
	assert.Equal(t, controllers.DefaultScaleCeilingInterval, f.scaleCeilingInterval)
	assert.Equal(t, controller.DefaultReconcileTimeout, f.reconcileTimeout)
	assert.Equal(t, cosmos.DefaultTryTimeout, f.cosmos.TryTimeout)
	assert.Equal(t, clusterservice.DefaultTimeout, f.clusterService.Timeout)
	assert.Equal(t, DefaultAgentPoolSource, f.agentPoolSource)
	assert.Equal(t, DefaultAzureCloud, f.azureCloud)
	assert.Equal(t, cosmos.DefaultDatabase, f.cosmos.Database)
	assert.Equal(t, informers.DefaultPollInterval, f.informers.PollInterval)
	assert.Equal(t, process.DefaultLeaderElect, f.shell.LeaderElect)
	assert.Equal(t, "hcpsched-fleet", f.shell.LeaderElectionLeaseName)
}

func TestControllerFlagsFromEnvironment(t *testing.T) {
	f, err := parseControllerFlags([]string{"--capacity-poll-interval=10s"}, io.Discard, env(map[string]string{
		"HCPSCHED_COSMOS_ENDPOINT":          "https://example.documents.azure.com:443/",
		"HCPSCHED_CLUSTERS_SERVICE_URL":     "http://clusters-service:8000",
		"HCPSCHED_REGION":                   "westus3",
		"HCPSCHED_CAPACITY_POLL_INTERVAL":   "1m",
		"HCPSCHED_SCALE_CEILING_INTERVAL":   "2m",
		"HCPSCHED_AGENT_POOL_SOURCE":        "static",
		"HCPSCHED_AGENT_POOL_FILE":          "/etc/fleet/pools.json",
		"HCPSCHED_VM_SIZES_FILE":            "/etc/fleet/sizes.json",
		"HCPSCHED_WORKERS":                  "4",
		"HCPSCHED_AZURE_CLOUD":              "AzureChina",
		"HCPSCHED_CHANGEFEED_POLL_INTERVAL": "3s",
	}))
	require.NoError(t, err)
	assert.Equal(t, "westus3", f.region)
	assert.Equal(t, 10*time.Second, f.capacityPollInterval, "the command line wins")
	assert.Equal(t, 2*time.Minute, f.scaleCeilingInterval)
	assert.Equal(t, "static", f.agentPoolSource)
	assert.Equal(t, "/etc/fleet/pools.json", f.agentPoolFile)
	assert.Equal(t, "/etc/fleet/sizes.json", f.vmSizesFile)
	assert.Equal(t, 4, f.workers)
	assert.Equal(t, "AzureChina", f.azureCloud)
	assert.Equal(t, 3*time.Second, f.informers.PollInterval)
}

func TestControllerFlagValidation(t *testing.T) {
	_, err := parseControllerFlags([]string{
		"--cosmos-endpoint=https://example", "--clusters-service-url=http://cs", "--region=westus3",
		"--workers=0", "--capacity-poll-interval=0s", "--agent-pool-source=static", "--azure-cloud=Mars",
		"--reconcile-timeout=0s", "--cosmos-try-timeout=0s", "--clusters-service-timeout=-1s",
	}, io.Discard, env(nil))
	require.Error(t, err)
	for _, want := range []string{
		"--workers must be at least 1",
		"--capacity-poll-interval must be positive",
		"--agent-pool-file is required with --agent-pool-source=static",
		"--azure-cloud must be",
		"--reconcile-timeout must be positive",
		"--cosmos-try-timeout must be positive",
		"--clusters-service-timeout must be positive",
	} {
		assert.ErrorContains(t, err, want)
	}
	_, err = parseControllerFlags([]string{"--cosmos-endpoint=x", "--clusters-service-url=y", "--region=z", "--agent-pool-source=cache"}, io.Discard, env(nil))
	assert.ErrorContains(t, err, "--agent-pool-source must be arm or static")
	assert.Error(t, run(t.Context(), []string{"controller", "--region=westus3"}, io.Discard), "the binary refuses to start")
}

func TestRegisterFlags(t *testing.T) {
	_, err := parseRegisterFlags(nil, io.Discard, env(nil))
	for _, want := range []string{"--stamp-identifier is required", "--aks-resource-id is required", "--kube-applier-cosmos-container-name is required"} {
		assert.ErrorContains(t, err, want)
	}
	assert.NotContains(t, err.Error(), "--scheduling-policy", "left out, the stored policy is kept")
	_, err = parseRegisterFlags([]string{"--scheduling-policy=Draining"}, io.Discard, env(nil))
	assert.ErrorContains(t, err, `--scheduling-policy must be Schedulable or Unschedulable, got "Draining"`)
	f, err := parseRegisterFlags([]string{"--stamp-identifier=2"}, io.Discard, env(map[string]string{
		"HCPSCHED_STAMP_IDENTIFIER":                   "1",
		"HCPSCHED_SCHEDULING_POLICY":                  "Unschedulable",
		"HCPSCHED_AKS_RESOURCE_ID":                    "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/mc",
		"HCPSCHED_KUBE_APPLIER_COSMOS_CONTAINER_NAME": "Manifests-MC-2",
		"HCPSCHED_AUTO_APPROVE":                       "true",
		"HCPSCHED_ENSURE_LAYOUT":                      "true",
	}))
	require.NoError(t, err)
	assert.Equal(t, "2", f.opts.Stamp, "the command line wins")
	assert.Equal(t, api.Unschedulable, f.opts.SchedulingPolicy)
	assert.True(t, f.opts.AutoApprove)
	assert.True(t, f.ensureLayout)
	assert.Equal(t, DefaultRegisterTimeout, f.timeout)
}

// The binary, as it is deployed, on the Cosmos emulator (or the account in
// HCPSCHED_COSMOS_ENDPOINT) with a fake Cluster Service: register a management cluster,
// run the controllers, play kube-applier and the backend, and watch the scheduling
// document follow.
func TestFleetAgainstEmulator(t *testing.T) {
	const timeout = 30 * time.Second
	const tick = 50 * time.Millisecond
	// register creates the layout itself (--ensure-layout): start from an empty database.
	db := cosmostest.New(t, "hcpsched-fleet-test", nil)
	store := db.Store
	endpoint, key, dbName := db.Config.Endpoint, db.Config.Key, db.Config.Database
	cs := fakeclusterservice.New()
	srv := httptest.NewServer(cs)
	t.Cleanup(srv.Close)
	csClient, err := clusterservice.New(t.Context(), clusterservice.Config{URL: srv.URL, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = csClient.Close() })

	pools := filepath.Join(t.TempDir(), "pools.json")
	require.NoError(t, os.WriteFile(pools, []byte(`{"*": [{"name": "worker", "properties": {"vmSize": "Standard_D16ds_v5",
		"count": 3, "enableAutoScaling": true, "maxCount": 10, "nodeLabels": {"aro-hcp.azure.com/role": "worker"},
		"tags": {"aks-nic-secondary-count": "16"}}}]}`), 0o600))

	const container = "Manifests-MC-1"
	cosmosFlags := []string{"--cosmos-endpoint=" + endpoint, "--cosmos-key=" + key, "--cosmos-database=" + dbName}
	register := append([]string{"register"}, cosmosFlags...)
	register = append(register,
		"--ensure-layout", "--auto-approve",
		"--stamp-identifier=1",
		"--scheduling-policy=Schedulable",
		"--aks-resource-id=/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/hcp-underlay-mgmt-1/providers/Microsoft.ContainerService/managedClusters/mgmt-1",
		"--public-dns-zone-resource-id=/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/global/providers/Microsoft.Network/dnszones/hcp.example.com",
		"--hosted-clusters-secrets-keyvault-url=https://cx.vault.azure.net/",
		"--hosted-clusters-managed-identities-keyvault-url=https://mi.vault.azure.net/",
		"--hosted-clusters-secrets-keyvault-mi-client-id=6f1c3a52-9d7e-4b1a-8c55-2f0e9d41b7a3",
		"--maestro-consumer-name=mgmt-1",
		"--maestro-rest-api-url=http://maestro:8000",
		"--maestro-grpc-target=maestro-grpc:8090",
		"--kube-applier-cosmos-container-name="+container,
	)
	require.NoError(t, run(t.Context(), register, io.Discard))

	logs := &logbuffer.Buffer{}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	controller := append([]string{"controller"}, cosmosFlags...)
	controller = append(controller,
		"--clusters-service-url="+srv.URL,
		"--region=westus3",
		"--leader-elect=false",
		"--metrics-address=127.0.0.1:0",
		"--health-address=127.0.0.1:0",
		"--log-level=debug",
		"--changefeed-poll-interval=100ms",
		"--capacity-poll-interval=200ms",
		"--agent-pool-source=static",
		"--agent-pool-file="+pools,
	)
	go func() { done <- run(ctx, controller, logs) }()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			assert.NoError(t, err, "the fleet shuts down cleanly")
		case <-time.After(timeout):
			t.Error("the fleet did not shut down")
		}
		if t.Failed() {
			t.Logf("fleet logs:\n%s", logs.String())
		}
	})

	fleet := store.Container(api.FleetContainer)
	mcID := api.ManagementClusterResourceID("1")
	schedulingID := api.SchedulingResourceID(mcID)
	readDesireID := api.CapacityReadDesireResourceID(mcID)
	kubeApplier := store.Container(container)
	read := func(c database.Container, pk string, id *api.ResourceID) []byte {
		item, err := c.Get(context.Background(), pk, api.CosmosID(id.String()))
		if err != nil {
			return nil
		}
		return item.Body
	}

	// Registered with Cluster Service, then Ready.
	require.Eventually(t, func() bool {
		mc, err := api.Decode[api.ManagementClusterProperties](read(fleet, "1", mcID))
		return err == nil && mc.Properties.Status.ClusterServiceProvisionShardID != "" &&
			api.IsConditionTrue(mc.Properties.Status.Conditions, api.ManagementClusterConditionReady)
	}, timeout, tick, "registered and Ready")
	shards, err := csClient.ListProvisionShards(t.Context())
	require.NoError(t, err)
	require.Len(t, shards, 1)
	assert.Equal(t, clusterservice.ShardStatusActive, shards[0].Status())
	assert.Equal(t, "westus3", shards[0].Region().ID())

	// The ReadDesire exists and the scale ceiling comes from the VM size table and the tag.
	require.Eventually(t, func() bool { return read(kubeApplier, api.KubeApplierPartitionKey(mcID), readDesireID) != nil }, timeout, tick, "ReadDesire created")
	require.Eventually(t, func() bool {
		s, err := api.Decode[api.ManagementClusterSchedulingProperties](read(fleet, "1", schedulingID))
		return err == nil && s.Properties.Status.ScaleCeiling != nil &&
			s.Properties.Status.ScaleCeiling.Capacity[api.SwiftNIC] == "160" &&
			api.IsConditionTrue(s.Properties.Status.Conditions, api.SchedulingConditionScalingDataCurrent)
	}, timeout, tick, "scale ceiling computed")

	// The backend reserves capacity for a cluster on this MC.
	const reservation = "/subscriptions/4fa75980-6637-4157-9726-84d878a62e83/resourcegroups/shrilleffectiveness/providers/microsoft.redhatopenshift/hcpopenshiftclusters/lavishunhappiness"
	replace(t, fleet, "1", schedulingID, func(raw map[string]any) {
		raw["properties"].(map[string]any)["status"].(map[string]any)["pendingAssignedClusters"] = []string{reservation}
	})
	// kube-applier mirrors the MC's capacity report, which shows that cluster not ready.
	var fixture map[string]any
	require.NoError(t, json.Unmarshal(arohcp.Get("constructed/readdesire-capacity-stamp-1.json"), &fixture))
	kubeContent := fixture["properties"].(map[string]any)["status"].(map[string]any)["kubeContent"]
	replace(t, kubeApplier, api.KubeApplierPartitionKey(mcID), readDesireID, func(raw map[string]any) {
		raw["properties"].(map[string]any)["status"] = map[string]any{"kubeContent": kubeContent}
	})

	require.Eventually(t, func() bool {
		s, err := api.Decode[api.ManagementClusterSchedulingProperties](read(fleet, "1", schedulingID))
		return err == nil && len(s.Properties.Status.NotReadyResourceIDs) == 1 && len(s.Properties.Status.PendingAssignedClusters) == 0
	}, timeout, tick, "the cluster is mirrored and its reservation released")
	s, err := api.Decode[api.ManagementClusterSchedulingProperties](read(fleet, "1", schedulingID))
	require.NoError(t, err)
	assert.Equal(t, api.ResourceList{api.SwiftNIC: "128", "cpu": "126560m", "memory": "602245408Ki"}, s.Properties.Status.ObservedResources.Capacity)
	assert.Len(t, s.Properties.Status.ReadyResourceIDs, 2)
	assert.True(t, api.IsConditionTrue(s.Properties.Status.Conditions, api.SchedulingConditionCapacityDataCurrent))
}

// replace is another component's read-modify-write of a stored document; a lost etag
// race (the fleet wrote meanwhile) is redone from a fresh read.
func replace(t *testing.T, c database.Container, pk string, id *api.ResourceID, change func(map[string]any)) {
	t.Helper()
	for range 100 {
		item, err := c.Get(context.Background(), pk, api.CosmosID(id.String()))
		require.NoError(t, err)
		var raw map[string]any
		require.NoError(t, json.Unmarshal(item.Body, &raw))
		change(raw)
		md := raw["properties"].(map[string]any)["cosmosMetadata"].(map[string]any)
		md["instanceVersion"] = md["instanceVersion"].(float64) + 1
		body, err := json.Marshal(raw)
		require.NoError(t, err)
		_, err = c.Replace(context.Background(), pk, item.ID, body, item.ETag)
		if errors.Is(err, database.ErrPreconditionFailed) {
			continue
		}
		require.NoError(t, err)
		return
	}
	t.Fatalf("%s kept changing", id)
}

// The fleet's Cluster Service request metrics have the backend's names: one query covers
// both binaries, and the scrape's job and pod labels tell them apart.
func TestClusterServiceRequestMetrics(t *testing.T) {
	srv := httptest.NewServer(fakeclusterservice.New())
	t.Cleanup(srv.Close)
	f, err := parseControllerFlags([]string{"--cosmos-endpoint=https://cosmos.invalid", "--clusters-service-url=" + srv.URL, "--region=westus3"}, io.Discard, env(nil))
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	cs, err := clusterservice.New(t.Context(), f.clusterServiceConfig(slog.New(slog.DiscardHandler), reg))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	_, err = cs.ListProvisionShards(t.Context())
	require.NoError(t, err)

	assert.Equal(t, []string{"hcpsched_cluster_service_request_count", "hcpsched_cluster_service_request_duration"}, gatheredNames(t, reg))
}

func gatheredNames(t *testing.T, reg prometheus.Gatherer) []string {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	return names
}
