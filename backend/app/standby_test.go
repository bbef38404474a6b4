package app_test

import (
	"context"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hcpsched/hcpsched/backend/app"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/logbuffer"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/process"
)

// writeCounter is a store that counts every write made through it; reads pass.
type writeCounter struct {
	database.Store
	mu     sync.Mutex
	writes []string
}

func (s *writeCounter) Container(name string) database.Container {
	return &countingContainer{Container: s.Store.Container(name), s: s}
}

func (s *writeCounter) record(op, container string) {
	s.mu.Lock()
	s.writes = append(s.writes, op+" "+container)
	s.mu.Unlock()
}

func (s *writeCounter) Writes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.writes...)
}

type countingContainer struct {
	database.Container
	s *writeCounter
}

func (c *countingContainer) Create(ctx context.Context, pk string, body []byte) (database.Item, error) {
	c.s.record("create", c.Name())
	return c.Container.Create(ctx, pk, body)
}

func (c *countingContainer) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	c.s.record("replace", c.Name())
	return c.Container.Replace(ctx, pk, id, body, ifMatch)
}

func (c *countingContainer) Patch(ctx context.Context, pk, id string, ops []database.PatchOperation, opts database.PatchOptions) (database.Item, error) {
	c.s.record("patch", c.Name())
	return c.Container.Patch(ctx, pk, id, ops, opts)
}

func (c *countingContainer) Delete(ctx context.Context, pk, id, ifMatch string) error {
	c.s.record("delete", c.Name())
	return c.Container.Delete(ctx, pk, id, ifMatch)
}

func (c *countingContainer) Batch(ctx context.Context, pk string, ops []database.BatchOperation) ([]database.BatchResult, error) {
	c.s.record("batch", c.Name())
	return c.Container.Batch(ctx, pk, ops)
}

func (c *countingContainer) List(ctx context.Context, opts database.ListOptions) iter.Seq2[database.Item, error] {
	return c.Container.List(ctx, opts)
}

// With leader election, a standby's caches fill but it makes no Cosmos write and no
// Cluster Service call until it leads; once the leader's Lease goes, it takes over and
// does the work the standby left alone.
func TestStandbyWritesNothingUntilItLeads(t *testing.T) {
	const timeout = 20 * time.Second
	mem := memory.New()
	resources, fleet := mem.Container(api.ResourcesContainer), mem.Container(api.FleetContainer)

	fakeCS := fakeclusterservice.New()
	var csCalls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		csCalls.Add(1)
		fakeCS.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	logger := slog.New(slog.DiscardHandler)
	cs, err := clusterservice.New(t.Context(), clusterservice.Config{URL: srv.URL, Logger: logger})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })

	// A region with an MC and a new cluster: work for every controller of the flow.
	shardA := controllertest.RegisterShard(t, cs, 1)
	controllertest.CreateManagementCluster(t, fleet, "1", shardA)
	csCalls.Store(0)

	kube := fake.NewClientset(&coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "hcpsched", Name: "hcpsched-backend"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr("the-leader"),
			LeaseDurationSeconds: ptr(int32(3600)),
			AcquireTime:          &metav1.MicroTime{Time: time.Now()},
			RenewTime:            &metav1.MicroTime{Time: time.Now()},
		},
	})
	opts := process.NewOptions("backend")
	opts.MetricsAddress, opts.HealthAddress = "127.0.0.1:0", "127.0.0.1:0"
	opts.LeaderElect, opts.KubeClient, opts.LeaderElectionNamespace = true, kube, "hcpsched"
	opts.LeaderElectionIdentity = "the-standby"
	opts.LeaderElectionLeaseDuration, opts.LeaderElectionRenewDeadline, opts.LeaderElectionRetryPeriod = time.Second, 500*time.Millisecond, 100*time.Millisecond
	opts.ShutdownTimeout = 5 * time.Second

	store := &writeCounter{Store: mem}
	reg := prometheus.NewRegistry()
	logs := &logbuffer.Buffer{}
	backend, err := app.New(app.Config{
		Store: store, ClusterService: cs, Registerer: reg, Logger: process.NewLogger(logs, slog.LevelDebug),
		Informers: informers.Options{PollInterval: 20 * time.Millisecond},
	})
	require.NoError(t, err)
	shell, err := process.New(opts, reg, logger)
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- shell.Run(ctx, backend) }()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(timeout):
			t.Error("the backend did not stop")
		}
		if t.Failed() {
			t.Logf("backend logs:\n%s", logs.String())
		}
	})

	readyz := "http://" + shell.HealthAddr().String() + "/readyz"
	require.Eventually(t, func() bool {
		resp, err := http.Get(readyz)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, timeout, 10*time.Millisecond, "the standby's caches sync")
	// A new cluster arrives (seeded beside the backend, not through it) and the standby's
	// feeds deliver it; several polls later a leader would have written.
	cluster := controllertest.StoreCluster(t, resources, controllertest.FixtureCluster(t))
	controllertest.StoreSubscription(t, resources, cluster.SubscriptionID, controllertest.Tenant)
	items := func() float64 { return counterSum(t, reg, "hcpsched_changefeed_items_total") }
	require.Eventually(t, func() bool { return items() >= 2 }, timeout, 10*time.Millisecond, "the standby's informers see the new cluster")
	firstPoll := lastPoll(t, reg)
	require.Eventually(t, func() bool { return lastPoll(t, reg) > firstPoll+0.2 }, timeout, 10*time.Millisecond, "the feeds keep polling")
	assert.Empty(t, store.Writes(), "a standby makes no Cosmos write")
	assert.Zero(t, csCalls.Load(), "a standby makes no Cluster Service call")

	// The leader goes: the standby takes the Lease and does the work.
	require.NoError(t, kube.CoordinationV1().Leases("hcpsched").Delete(t.Context(), "hcpsched-backend", metav1.DeleteOptions{}))
	controllertest.WaitForSPC(t, resources, cluster, timeout, "created by the new leader", func(*api.ServiceProviderCluster) bool { return true })
	assert.NotEmpty(t, store.Writes(), "the new leader writes")
}

func ptr[T any](v T) *T { return &v }

func counterSum(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	sum := 0.0
	for _, m := range family(t, reg, name) {
		sum += m.GetCounter().GetValue()
	}
	return sum
}

func lastPoll(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	latest := 0.0
	for _, m := range family(t, reg, "hcpsched_changefeed_last_poll_timestamp_seconds") {
		latest = max(latest, m.GetGauge().GetValue())
	}
	return latest
}

func family(t *testing.T, reg *prometheus.Registry, name string) []*dto.Metric {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() == name {
			return f.GetMetric()
		}
	}
	return nil
}
