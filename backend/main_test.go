package main

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/backend/controllers"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/cosmostest"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/logbuffer"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/process"
)

func parse(t *testing.T, args []string, env map[string]string) (*config, error) {
	t.Helper()
	fs, cfg := newFlagSet(io.Discard)
	err := process.Parse(fs, args, func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	})
	return cfg, err
}

func TestFlagDefaults(t *testing.T) {
	cfg, err := parse(t, nil, nil)
	require.NoError(t, err)

	assert.Equal(t, cosmos.DefaultDatabase, cfg.cosmos.Database)
	assert.Equal(t, DefaultCosmosEnsureLayout, cfg.cosmosEnsureLayout)
	assert.Equal(t, informers.DefaultPollInterval, cfg.informers.PollInterval)
	assert.Equal(t, informers.DefaultRelistPeriod, cfg.informers.RelistPeriod)
	assert.Equal(t, process.DefaultLeaderElect, cfg.process.LeaderElect)
	for _, def := range controllers.Definitions() {
		require.Contains(t, cfg.controllers, def.Name)
		assert.Equal(t, def.Defaults, *cfg.controllers[def.Name], def.Name)
	}
	assert.Equal(t, controllers.DefaultPlacementObservationInterval,
		cfg.controllers[controllers.ManagementClusterPlacementSyncName].RequeueAfter)
	assert.Equal(t, cosmos.DefaultTryTimeout, cfg.cosmos.TryTimeout)
	assert.Equal(t, clusterservice.DefaultTimeout, cfg.clusterService.Timeout)
	for name, s := range cfg.controllers {
		assert.Equal(t, controller.DefaultReconcileTimeout, s.ReconcileTimeout, name)
	}

	// Every flag has its environment variable and a documented default.
	fs, _ := newFlagSet(io.Discard)
	docs := process.Describe(fs)
	names := map[string]string{}
	for _, d := range docs {
		names[d.Flag] = d.Env
		assert.NotEmpty(t, d.Usage, d.Flag)
	}
	for flag, env := range map[string]string{
		"--cosmos-endpoint":                                 "HCPSCHED_COSMOS_ENDPOINT",
		"--cosmos-database":                                 "HCPSCHED_COSMOS_DATABASE",
		"--cosmos-key":                                      "HCPSCHED_COSMOS_KEY",
		"--cosmos-ensure-layout":                            "HCPSCHED_COSMOS_ENSURE_LAYOUT",
		"--clusters-service-url":                            "HCPSCHED_CLUSTERS_SERVICE_URL",
		"--clusters-service-token":                          "HCPSCHED_CLUSTERS_SERVICE_TOKEN",
		"--clusters-service-client-id":                      "HCPSCHED_CLUSTERS_SERVICE_CLIENT_ID",
		"--clusters-service-client-secret":                  "HCPSCHED_CLUSTERS_SERVICE_CLIENT_SECRET",
		"--clusters-service-token-url":                      "HCPSCHED_CLUSTERS_SERVICE_TOKEN_URL",
		"--changefeed-poll-interval":                        "HCPSCHED_CHANGEFEED_POLL_INTERVAL",
		"--create-service-provider-cluster-workers":         "HCPSCHED_CREATE_SERVICE_PROVIDER_CLUSTER_WORKERS",
		"--pending-cluster-service-id-assign-resync-period": "HCPSCHED_PENDING_CLUSTER_SERVICE_ID_ASSIGN_RESYNC_PERIOD",
		"--cluster-service-create-workers":                  "HCPSCHED_CLUSTER_SERVICE_CREATE_WORKERS",
		"--management-cluster-placement-sync-requeue-after": "HCPSCHED_MANAGEMENT_CLUSTER_PLACEMENT_SYNC_REQUEUE_AFTER",
		"--management-cluster-placement-sync-resync-period": "HCPSCHED_MANAGEMENT_CLUSTER_PLACEMENT_SYNC_RESYNC_PERIOD",
		"--management-cluster-placement-sync-workers":       "HCPSCHED_MANAGEMENT_CLUSTER_PLACEMENT_SYNC_WORKERS",
		"--create-service-provider-cluster-resync-period":   "HCPSCHED_CREATE_SERVICE_PROVIDER_CLUSTER_RESYNC_PERIOD",
		"--pending-cluster-service-id-assign-workers":       "HCPSCHED_PENDING_CLUSTER_SERVICE_ID_ASSIGN_WORKERS",
		"--cluster-service-create-resync-period":            "HCPSCHED_CLUSTER_SERVICE_CREATE_RESYNC_PERIOD",
		"--cluster-service-adoption-workers":                "HCPSCHED_CLUSTER_SERVICE_ADOPTION_WORKERS",
		"--cluster-service-adoption-requeue-after":          "HCPSCHED_CLUSTER_SERVICE_ADOPTION_REQUEUE_AFTER",
	} {
		assert.Equal(t, env, names[flag], "flag %s", flag)
	}
}

func TestFlagsFromEnvironment(t *testing.T) {
	cfg, err := parse(t,
		[]string{"--cluster-service-create-workers=3"},
		map[string]string{
			"HCPSCHED_COSMOS_ENDPOINT":                                 "https://example.documents.azure.com:443/",
			"HCPSCHED_CLUSTERS_SERVICE_URL":                            "http://clusters-service:8000",
			"HCPSCHED_CLUSTER_SERVICE_CREATE_WORKERS":                  "9",
			"HCPSCHED_MANAGEMENT_CLUSTER_PLACEMENT_SYNC_REQUEUE_AFTER": "3s",
			"HCPSCHED_CREATE_SERVICE_PROVIDER_CLUSTER_RESYNC_PERIOD":   "0",
		})
	require.NoError(t, err)
	require.NoError(t, cfg.validate())

	assert.Equal(t, "https://example.documents.azure.com:443/", cfg.cosmos.Endpoint)
	assert.Equal(t, "http://clusters-service:8000", cfg.clusterService.URL)
	assert.Equal(t, 3, cfg.controllers[controllers.ClusterServiceCreateName].Workers, "the command line wins")
	assert.Equal(t, 3*time.Second, cfg.controllers[controllers.ManagementClusterPlacementSyncName].RequeueAfter)
	assert.Zero(t, cfg.controllers[controllers.CreateServiceProviderClusterName].ResyncPeriod)
}

func TestFlagValidation(t *testing.T) {
	cfg, err := parse(t, []string{
		"--pending-cluster-service-id-assign-workers=0",
		"--management-cluster-placement-sync-requeue-after=0s",
		"--cluster-service-create-resync-period=-1s",
		"--reconcile-timeout=0s", "--cosmos-try-timeout=0s", "--clusters-service-timeout=-1s",
	}, nil)
	require.NoError(t, err)
	err = cfg.validate()
	require.Error(t, err)
	for _, want := range []string{
		"--cosmos-endpoint is required",
		"--clusters-service-url is required",
		"--pending-cluster-service-id-assign-workers must be at least 1",
		"--management-cluster-placement-sync-requeue-after must be positive",
		"--cluster-service-create-resync-period must not be negative",
		"--reconcile-timeout must be positive",
		"--cosmos-try-timeout must be positive",
		"--clusters-service-timeout must be positive",
	} {
		assert.Contains(t, err.Error(), want)
	}
	assert.ErrorContains(t, run(t.Context(), []string{"--cluster-service-create-workers=0"}, io.Discard),
		"--cluster-service-create-workers must be at least 1", "the binary refuses to start on invalid flags")
}

// The binary, wired as in production, runs the creation flow against the Cosmos
// emulator (or the account in HCPSCHED_COSMOS_ENDPOINT) and a fake Cluster Service.
func TestBackendAgainstEmulator(t *testing.T) {
	const timeout = 30 * time.Second
	db := cosmostest.New(t, "hcpsched-backend-test", nil, api.ResourcesContainer, api.FleetContainer)
	store := db.Store
	endpoint, key, dbName := db.Config.Endpoint, db.Config.Key, db.Config.Database
	resources, fleet := store.Container(api.ResourcesContainer), store.Container(api.FleetContainer)

	cs := fakeclusterservice.New()
	srv := httptest.NewServer(cs)
	t.Cleanup(srv.Close)
	csClient, err := clusterservice.New(t.Context(), clusterservice.Config{URL: srv.URL, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = csClient.Close() })
	shardA, shardB := controllertest.RegisterShard(t, csClient, 1), controllertest.RegisterShard(t, csClient, 2)
	mcA := controllertest.CreateManagementCluster(t, fleet, "1", shardA)
	controllertest.CreateManagementCluster(t, fleet, "2", shardB)
	cs.ResetRequests()
	cluster := controllertest.StoreCluster(t, resources, controllertest.FixtureCluster(t))
	controllertest.StoreSubscription(t, resources, cluster.SubscriptionID, controllertest.Tenant)

	logs := &logbuffer.Buffer{}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{
			"--cosmos-endpoint=" + endpoint,
			"--cosmos-key=" + key,
			"--cosmos-database=" + dbName,
			"--cosmos-ensure-layout",
			"--clusters-service-url=" + srv.URL,
			"--leader-elect=false",
			"--metrics-address=127.0.0.1:0",
			"--health-address=127.0.0.1:0",
			"--log-level=debug",
			"--changefeed-poll-interval=100ms",
			"--management-cluster-placement-sync-requeue-after=200ms",
			"--placement-requeue-after=200ms",
		}, logs)
	}()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			assert.NoError(t, err, "the backend shuts down cleanly")
		case <-time.After(timeout):
			t.Error("the backend did not shut down")
		}
		if t.Failed() {
			t.Logf("backend logs:\n%s", logs.String())
		}
	})

	controllertest.WaitForSPC(t, resources, cluster, timeout, "created", func(*api.ServiceProviderCluster) bool { return true })
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "waiting for ARO-HCP to choose the control plane version")
	}, timeout, controllertest.Tick, "the create waits for ARO-HCP's ControlPlaneDesiredVersion")
	controllertest.ChooseVersion(t, resources, cluster, timeout)
	pending := controllertest.WaitForCluster(t, resources, cluster, timeout, "pending Cluster Service ID assigned",
		func(p api.ClusterServiceProviderProperties) bool { return p.PendingClusterServiceID != "" })
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "deferring Cluster Service creation until placement is resolved")
	}, timeout, controllertest.Tick)
	assert.Empty(t, controllertest.ClusterPosts(t, cs), "nothing is created in CS before placement")

	// Capacity appears on MC 1 only: placement chooses it.
	controllertest.StoreScheduling(t, fleet, mcA, 30, 0)

	created := controllertest.WaitForCluster(t, resources, cluster, timeout, "Cluster Service ID recorded",
		func(p api.ClusterServiceProviderProperties) bool { return p.ClusterServiceID != "" })
	assert.Equal(t, pending.Properties.ServiceProvider().PendingClusterServiceID, created.Properties.ServiceProvider().ClusterServiceID)
	assert.Empty(t, created.Properties.ServiceProvider().PendingClusterServiceID)
	posts := controllertest.CreatedClusters(t, cs)
	require.Len(t, posts, 1)
	assert.Equal(t, shardA, posts[0].Shard, "the POST is pinned to the shard of the MC in SPC spec")
	assert.Equal(t, controllertest.Tenant, posts[0].Azure.TenantID, "the subscription's tenant")

	spc := controllertest.WaitForSPC(t, resources, cluster, timeout, "observed placement recorded",
		func(s *api.ServiceProviderCluster) bool { return s.Properties.ObservedManagementCluster() != "" })
	assert.Equal(t, mcA.String(), spc.Properties.ObservedManagementCluster())
	assert.Equal(t, mcA.String(), spc.Properties.IntendedManagementCluster())
}

// The backend's Cluster Service request metrics have the fleet's names: one query covers
// both binaries, and the scrape's job and pod labels tell them apart.
func TestClusterServiceRequestMetrics(t *testing.T) {
	srv := httptest.NewServer(fakeclusterservice.New())
	t.Cleanup(srv.Close)
	cfg, err := parse(t, []string{"--cosmos-endpoint=https://cosmos.invalid", "--clusters-service-url=" + srv.URL}, nil)
	require.NoError(t, err)
	require.NoError(t, cfg.validate())
	reg := prometheus.NewRegistry()
	cs, err := clusterservice.New(t.Context(), cfg.clusterServiceConfig(slog.New(slog.DiscardHandler), reg))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	_, err = cs.ListProvisionShards(t.Context())
	require.NoError(t, err)

	families, err := reg.Gather()
	require.NoError(t, err)
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	assert.Equal(t, []string{"hcpsched_cluster_service_request_count", "hcpsched_cluster_service_request_duration"}, names)
}
