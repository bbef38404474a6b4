package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/util/workqueue"

	"github.com/hcpsched/hcpsched/backend/controllers/flowtest"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/emulator"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// errCrash stands for a process that died after its write reached Cosmos was decided on
// but before the next one: the write is not made and the reconcile fails.
var errCrash = errors.New("injected crash between the reservation and the spec write")

// faults wraps a container: some scheduling-document replaces fail with 412 before they
// reach the store, and some SPC replaces that record a placement "crash".
type faults struct {
	database.Container
	rng         *rand.Rand
	mu          *sync.Mutex
	conflict    float64
	crash       float64
	specWritten func(cluster, mc string)
}

func (f *faults) roll(p float64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.Float64() < p
}

func (f *faults) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	_, _, resourceType := api.Identify(body)
	switch {
	case strings.EqualFold(resourceType, api.ManagementClusterSchedulingResourceType) && f.roll(f.conflict):
		return database.Item{}, &database.OpError{Op: "replace", Container: f.Name(), ID: id, StatusCode: 412, Kind: database.ErrPreconditionFailed}
	case strings.EqualFold(resourceType, api.ServiceProviderClusterResourceType):
		spc, err := api.Decode[api.ServiceProviderClusterProperties](body)
		if err == nil && spc.Properties.IntendedManagementCluster() != "" && f.roll(f.crash) {
			return database.Item{}, errCrash
		}
		item, err := f.Container.Replace(ctx, pk, id, body, ifMatch)
		if err == nil && spc != nil && spc.Properties.IntendedManagementCluster() != "" {
			rid, _ := spc.ParsedResourceID()
			f.specWritten(rid.Parent().Key(), spc.Properties.IntendedManagementCluster())
		}
		return item, err
	}
	return f.Container.Replace(ctx, pk, id, body, ifMatch)
}

// TestConcurrentPlacement runs two backend replicas, each with 20 placement workers,
// against one store with tight capacity, injected 412s and crashes between the
// reservation and the spec write. Afterwards no MC is committed past its ceiling, every
// cluster has exactly one intent that never changed, and every stale reservation is
// swept.
func TestConcurrentPlacement(t *testing.T) {
	stores := map[string]func(t *testing.T) (database.Store, time.Duration){
		"memory": func(t *testing.T) (database.Store, time.Duration) { return memory.New(), 10 * time.Millisecond },
		"emulator": func(t *testing.T) (database.Store, time.Duration) {
			emu := emulator.StartForTest(t)
			s, err := cosmos.Open(cosmos.Config{Endpoint: emu.Endpoint, Key: emu.Key, Database: "placement"}, prometheus.NewRegistry())
			require.NoError(t, err)
			require.NoError(t, s.EnsureLayout(t.Context(), api.ResourcesContainer, api.FleetContainer))
			return s, 50 * time.Millisecond
		},
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			store, poll := newStore(t)
			runConcurrentPlacement(t, store, poll)
		})
	}
}

func runConcurrentPlacement(t *testing.T, store database.Store, poll time.Duration) {
	resources, fleet := store.Container(api.ResourcesContainer), store.Container(api.FleetContainer)
	// 12 HA clusters (3 swift NICs each) and 6 single-replica ones (1 each) need 42 NICs.
	// The MCs have 50: an MC can strand at most 2 NICs that no HA cluster fits in, so this
	// is the least capacity that places every cluster whatever order they arrive in.
	ceilings := map[string]int{"1": 14, "2": 14, "3": 11, "4": 11}
	mcs := map[string]*api.ResourceID{}
	for stamp, ceiling := range ceilings {
		mc := api.ManagementClusterResourceID(stamp)
		mcs[mc.Key()] = mc
		_, err := database.Create(t.Context(), fleet, api.NewDocument(mc, stamp, api.ManagementClusterProperties{
			Spec:   &api.ManagementClusterSpec{SchedulingPolicy: api.Schedulable},
			Status: &api.ManagementClusterStatus{Conditions: []api.Condition{{Type: "Ready", Status: api.ConditionTrue}}, ClusterServiceProvisionShardID: clusterservice.ProvisionShardsPath + "/shard-" + stamp},
		}))
		require.NoError(t, err)
		flowtest.StoreScheduling(t, fleet, mc, ceiling, 0)
	}
	cost := map[string]int{}
	for i := range 18 {
		rid := clusterID(fmt.Sprintf("Burst-%02d", i))
		single := i%3 == 2
		cost[rid.Key()] = 3
		c := newCluster(rid, func(c *api.Cluster) {
			if single {
				c.Properties.ServiceProviderProperties.ExperimentalFeatures = &api.ExperimentalFeatures{SingleReplica: api.SingleReplica}
			}
		})
		if single {
			cost[rid.Key()] = 1
		}
		_, err := database.Create(t.Context(), resources, c)
		require.NoError(t, err)
		storeSPC(t, resources, rid)
	}

	var mu sync.Mutex
	intents := map[string]map[string]bool{} // cluster -> every MC a spec write named
	record := func(cluster, mc string) {
		mu.Lock()
		defer mu.Unlock()
		if intents[cluster] == nil {
			intents[cluster] = map[string]bool{}
		}
		intents[cluster][strings.ToLower(mc)] = true
	}
	var metrics []*PlacementMetrics
	for replica := range 2 {
		rng := rand.New(rand.NewPCG(uint64(replica), 42))
		lock := &sync.Mutex{}
		wrap := func(c database.Container) database.Container {
			return &faults{Container: c, rng: rng, mu: lock, conflict: 0.2, crash: 0.15, specWritten: record}
		}
		reg := prometheus.NewRegistry()
		factory, err := informers.NewFactory(store, informers.Options{PollInterval: poll, Registerer: reg})
		require.NoError(t, err)
		ctrlMetrics, err := controller.NewMetrics(reg)
		require.NoError(t, err)
		pm, err := NewPlacementMetrics(reg)
		require.NoError(t, err)
		metrics = append(metrics, pm)
		deps := Deps{
			Resources: wrap(resources), Fleet: wrap(fleet), Informers: NewInformers(factory),
			Metrics: ctrlMetrics, Logger: slog.New(slog.DiscardHandler),
			RateLimiter: func() workqueue.TypedRateLimiter[string] {
				return workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 100*time.Millisecond)
			},
			Placement: placement.DefaultConfig(), PlacementMetrics: pm,
		}
		cfg := Config{
			PlacementName:      {Workers: DefaultPlacementWorkers, RequeueAfter: 50 * time.Millisecond},
			PendingCleanupName: {Workers: DefaultPendingCleanupWorkers, ResyncPeriod: 200 * time.Millisecond},
		}
		var defs []Definition
		for _, d := range Definitions() {
			if cfg[d.Name] != nil {
				defs = append(defs, d)
			}
		}
		ctrls, err := Build(deps, defs, cfg)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		factory.Start(ctx)
		require.True(t, factory.WaitForCacheSync(ctx))
		done := make(chan error, 1)
		go func() { done <- controller.RunAll(ctx, ctrls) }()
		t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	}

	intent := func(cluster string) string {
		rid := api.MustParseResourceID(cluster)
		pk, _ := api.ResourcesPartitionKey(rid)
		spc, err := database.Get[api.ServiceProviderClusterProperties](t.Context(), resources, pk, api.ServiceProviderClusterResourceID(rid).String())
		require.NoError(t, err)
		return strings.ToLower(spc.Properties.IntendedManagementCluster())
	}
	require.Eventually(t, func() bool {
		for cluster := range cost {
			if intent(cluster) == "" {
				return false
			}
		}
		return true
	}, 60*time.Second, 20*time.Millisecond, "every cluster is placed")

	committed := map[string]int{}
	for cluster, c := range cost {
		mc := intent(cluster)
		committed[mc] += c
		mu.Lock()
		assert.Equal(t, map[string]bool{mc: true}, intents[cluster], "cluster %s: exactly one intent, never changed", cluster)
		mu.Unlock()
	}
	for key, mc := range mcs {
		assert.LessOrEqual(t, committed[key], ceilings[mc.Names[0]], "MC %s committed past its ceiling", key)
	}

	// Stale reservations (from races between the replicas) are swept; reservations of
	// clusters placed on the MC stay until the fleet observes them.
	require.Eventually(t, func() bool {
		for key, mc := range mcs {
			for _, p := range getScheduling(t, fleet, mc).Properties.Status.PendingAssignedClusters {
				if intent(p) != key {
					return false
				}
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond, "no stale reservation remains")

	var placed, conflicts float64
	for _, m := range metrics {
		placed += counterValue(m.attempts.WithLabelValues(string(placement.OutcomePlaced)))
		conflicts += counterValue(m.attempts.WithLabelValues(string(placement.OutcomeConflict)))
	}
	assert.GreaterOrEqual(t, placed, float64(len(cost)))
	t.Logf("%d clusters: %.0f placements recorded, %.0f conflicts (%.2f per placement)", len(cost), placed, conflicts, conflicts/placed)
}
