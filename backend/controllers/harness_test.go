package controllers

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/util/workqueue"

	"github.com/hcpsched/hcpsched/backend/controllers/flowtest"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/dataflowtest"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/informertest"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// Timing of the unit tests: the feed is polled often and expected waits are short, so a
// whole creation flow takes a fraction of a second.
const (
	testPollInterval = 5 * time.Millisecond
	testRequeueAfter = 20 * time.Millisecond
	waitFor          = 10 * time.Second
	tick             = 5 * time.Millisecond
)

// testMRG is the managed resource group of the test clusters.
const testMRG = "managed-rg"

// testEnv is one backend over a memory store and a fake Cluster Service on 127.0.0.1,
// reached through the real OCM SDK client.
type testEnv struct {
	store *memory.Store
	// resources and fleet are the test's own handles; the controllers write through
	// deps.Resources, which a test may wrap.
	resources database.Container
	fleet     database.Container
	cs        *fakeclusterservice.Server
	csClient  *clusterservice.Client
	factory   *informers.Factory
	reg       *prometheus.Registry
	deps      Deps
	logs      *flowtest.LogBuffer
	// placement runs the real PlacementController and PendingCleanup; without it the
	// creation-flow tests play placement themselves (flowtest.Place).
	placement bool
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	e := &testEnv{store: memory.New(), cs: fakeclusterservice.New(fakeclusterservice.WithSeed(1)), reg: prometheus.NewRegistry(), logs: &flowtest.LogBuffer{}}
	e.resources = e.store.Container(api.ResourcesContainer)
	e.fleet = e.store.Container(api.FleetContainer)

	srv := httptest.NewServer(e.cs)
	t.Cleanup(srv.Close)
	var err error
	e.csClient, err = clusterservice.New(t.Context(), clusterservice.Config{
		URL:           srv.URL,
		RetryInterval: time.Millisecond,
		Logger:        slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.csClient.Close() })

	e.factory, err = informers.NewFactory(e.store, informers.Options{PollInterval: testPollInterval, Registerer: e.reg})
	require.NoError(t, err)
	metrics, err := controller.NewMetrics(e.reg)
	require.NoError(t, err)
	logger := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.deps = Deps{
		Resources:      e.resources,
		Fleet:          e.fleet,
		Informers:      NewInformers(e.factory),
		ClusterService: e.csClient,
		Metrics:        metrics,
		Logger:         logger,
		RateLimiter: func() workqueue.TypedRateLimiter[string] {
			return workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 50*time.Millisecond)
		},
	}
	e.deps.Resources, e.deps.Fleet = dataflowtest.Wrap(e.deps.Resources), dataflowtest.Wrap(e.deps.Fleet)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("controller logs:\n%s", e.logs.String())
		}
	})
	return e
}

// testConfig disables resync, so that every step a test sees was triggered by an event
// and not rescued by a periodic pass, and shortens the expected waits.
func testConfig() Config {
	cfg := Config{}
	for _, def := range Definitions() {
		s := def.Defaults
		s.ResyncPeriod = 0
		if s.RequeueAfter > 0 {
			s.RequeueAfter = testRequeueAfter
		}
		cfg[def.Name] = &s
	}
	return cfg
}

// startCaches starts the informers, waits for them to sync and watches them for
// in-place mutations until the test ends.
func (e *testEnv) startCaches(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e.factory.Start(ctx)
	require.True(t, e.factory.WaitForCacheSync(t.Context()))
	informertest.DetectMutations(t,
		e.deps.Informers.Clusters.SharedIndexInformer,
		e.deps.Informers.ServiceProviderClusters.SharedIndexInformer,
		e.deps.Informers.ManagementClusters.SharedIndexInformer,
		e.deps.Informers.ManagementClusterSchedulings.SharedIndexInformer)
}

// definitions are the controllers a test runs: the whole backend with placement, or
// the creation flow alone when the test plays placement.
func (e *testEnv) definitions() []Definition {
	if e.placement {
		return Definitions()
	}
	var out []Definition
	for _, def := range Definitions() {
		if def.Name != PlacementName && def.Name != PendingCleanupName {
			out = append(out, def)
		}
	}
	return out
}

// run builds every backend controller, starts the caches and runs the controllers until
// the test ends, as the binary does.
func (e *testEnv) run(t *testing.T) {
	t.Helper()
	e.runDefinitions(t, e.definitions())
}

// runDefinitions builds the given controllers, starts the caches and runs the
// controllers until the test ends.
func (e *testEnv) runDefinitions(t *testing.T, defs []Definition) {
	t.Helper()
	ctrls, err := Build(e.deps, defs, testConfig())
	require.NoError(t, err)
	e.startCaches(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- controller.RunAll(ctx, ctrls) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

// reconcileCtx is what a worker hands a reconcile.
func (e *testEnv) reconcileCtx(t *testing.T, name string) context.Context {
	return controller.WithName(controller.WithLogger(t.Context(), e.deps.Logger), name)
}

// clusterID is a cluster resource ID in ARM casing, as the frontend writes it.
func clusterID(name string) *api.ResourceID {
	return api.MustParseResourceID("/subscriptions/0465BC32-C654-41B8-8D87-9815D7ABE8F6/resourceGroups/Some-RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name)
}

// newCluster is a freshly accepted cluster with its Azure identity complete; mutate
// changes it before it is stored.
func newCluster(rid *api.ResourceID, mutate ...func(*api.Cluster)) *api.Cluster {
	pk, _ := api.ResourcesPartitionKey(rid)
	c := api.NewDocument(rid, pk, api.ClusterProperties{
		CustomerProperties: &api.ClusterCustomerProperties{Platform: &api.ClusterPlatform{ManagedResourceGroup: testMRG}},
		ServiceProviderProperties: &api.ClusterServiceProviderProperties{
			ProvisioningState: "Accepted",
		},
		Identity: &api.ClusterIdentity{TenantID: flowtest.Tenant},
	})
	c.ResourceType = api.ClusterResourceType
	for _, m := range mutate {
		m(c)
	}
	return c
}

// reconciles is hcpsched_controller_reconcile_total for one controller and result.
func (e *testEnv) reconciles(t *testing.T, name, result string) float64 {
	t.Helper()
	families, err := e.reg.Gather()
	require.NoError(t, err)
	for _, fam := range families {
		if fam.GetName() != "hcpsched_controller_reconcile_total" {
			continue
		}
		for _, m := range fam.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] == name && labels["result"] == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// csRequests counts the fake CS's logged requests whose path starts with prefix.
func (e *testEnv) csRequests(method, prefix string) int {
	n := 0
	for _, r := range e.cs.Requests() {
		if r.Method == method && strings.HasPrefix(r.Path, prefix) {
			n++
		}
	}
	return n
}
