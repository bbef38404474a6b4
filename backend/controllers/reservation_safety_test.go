package controllers

import (
	"context"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/backend/controllers/flowtest"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// blindStore is the store as the caches see it: items the test hides never reach a
// list or a change-feed page, so a cache can be made to lag the store exactly where a
// test needs it. Controllers still write to and point-read the real store.
type blindStore struct {
	database.Store
	mu     sync.Mutex
	hidden map[string]bool // by item id
}

func (s *blindStore) hide(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		s.hidden[id] = true
	}
}

func (s *blindStore) visible(item database.Item) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.hidden[item.ID]
}

func (s *blindStore) Container(name string) database.Container {
	return &blindContainer{Container: s.Store.Container(name), store: s}
}

type blindContainer struct {
	database.Container
	store *blindStore
}

func (c *blindContainer) ChangeFeed(ctx context.Context, opts database.ChangeFeedOptions) (database.ChangeFeedPage, error) {
	page, err := c.Container.ChangeFeed(ctx, opts)
	kept := page.Items[:0:0]
	for _, item := range page.Items {
		if c.store.visible(item) {
			kept = append(kept, item)
		}
	}
	page.Items = kept
	return page, err
}

func (c *blindContainer) List(ctx context.Context, opts database.ListOptions) iter.Seq2[database.Item, error] {
	return func(yield func(database.Item, error) bool) {
		for item, err := range c.Container.List(ctx, opts) {
			if err == nil && !c.store.visible(item) {
				continue
			}
			if !yield(item, err) {
				return
			}
		}
	}
}

// newBlindPlacementEnv is a placement test environment whose caches read through a
// blindStore.
func newBlindPlacementEnv(t *testing.T) (*testEnv, *blindStore) {
	t.Helper()
	e := newPlacementEnv(t)
	blind := &blindStore{Store: e.store, hidden: map[string]bool{}}
	f, err := informers.NewFactory(blind, informers.Options{PollInterval: testPollInterval, Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	e.factory = f
	e.deps.Informers = NewInformers(f)
	return e, blind
}

func softDeleteSPC(t *testing.T, resources database.Container, cluster *api.ResourceID) {
	t.Helper()
	pk, err := api.ResourcesPartitionKey(cluster)
	require.NoError(t, err)
	item, err := resources.Get(t.Context(), pk, spcItemID(cluster))
	require.NoError(t, err)
	_, err = database.SoftDelete(t.Context(), resources, item, time.Now())
	require.NoError(t, err)
}

func spcItemID(cluster *api.ResourceID) string {
	return api.CosmosID(api.ServiceProviderClusterResourceID(cluster).String())
}

func (e *testEnv) placementReconciler() *placementController {
	return &placementController{d: e.deps, s: Settings{RequeueAfter: testRequeueAfter},
		clusters: e.deps.Informers.Clusters.Lister(), spcs: e.deps.Informers.ServiceProviderClusters.Lister(), mcs: e.deps.Informers.ManagementClusters.Lister()}
}

// Finding 1: a replica that sees a reservation before the SPC it was made for must not
// drop it, or the next placement overbooks the MC. One MC with room for one HA cluster:
// A holds the reservation, its SPC is in the store but not yet in this replica's cache.
func TestReservationIsKeptWhileItsSPCIsNotCachedYet(t *testing.T) {
	e, blind := newBlindPlacementEnv(t)
	mc := flowtest.CreateManagementCluster(t, e.fleet, "1", flowtest.RegisterShard(t, e.csClient, 1))
	a := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("A")))
	storeSPC(t, e.resources, a)
	blind.hide(spcItemID(a))
	flowtest.StoreScheduling(t, e.fleet, mc, 3, 0, a.Key())
	b := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("B")))
	storeSPC(t, e.resources, b)
	e.startCaches(t)
	require.Eventually(t, func() bool {
		return len(e.deps.Informers.ServiceProviderClusters.Lister().List()) == 1 &&
			len(e.deps.Informers.ManagementClusterSchedulings.Lister().List()) == 1 &&
			len(e.deps.Informers.Clusters.Lister().List()) == 2
	}, waitFor, tick)

	cleanup := &pendingCleanupController{d: e.deps}
	_, err := cleanup.reconcile(e.reconcileCtx(t, PendingCleanupName), mc.Key())
	require.NoError(t, err)
	assert.Equal(t, []string{a.Key()}, getScheduling(t, e.fleet, mc).Properties.Status.PendingAssignedClusters,
		"the SPC is only missing from the cache: the reservation stands")

	res, err := e.placementReconciler().reconcile(e.reconcileCtx(t, PlacementName), b.Key())
	require.NoError(t, err)
	assert.Equal(t, testRequeueAfter, res.RequeueAfter, "B waits for capacity")
	assert.Empty(t, flowtest.GetSPC(t, e.resources, b).Properties.IntendedManagementCluster(), "B is not placed on A's capacity")
	assert.Equal(t, []string{a.Key()}, getScheduling(t, e.fleet, mc).Properties.Status.PendingAssignedClusters, "6 NICs on a ceiling of 3 would follow")
	assert.Equal(t, 1.0, e.attempts(placement.OutcomeCapacityExhausted))
}

// A missing SPC is dropped only when the store confirms it: not found, or soft-deleted.
func TestReservationOfAConfirmedGoneSPCIsDropped(t *testing.T) {
	e, blind := newBlindPlacementEnv(t)
	mc := flowtest.CreateManagementCluster(t, e.fleet, "1", "")
	never := clusterID("NeverHadSPC")
	flowtest.StoreCluster(t, e.resources, newCluster(never))
	softDeleted := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("SoftDeleted")))
	storeSPC(t, e.resources, softDeleted)
	softDeleteSPC(t, e.resources, softDeleted)
	blind.hide(spcItemID(softDeleted))
	flowtest.StoreScheduling(t, e.fleet, mc, 30, 0, never.Key(), softDeleted.Key())
	e.startCaches(t)
	require.Eventually(t, func() bool {
		return len(e.deps.Informers.ManagementClusterSchedulings.Lister().List()) == 1
	}, waitFor, tick)

	_, err := (&pendingCleanupController{d: e.deps}).reconcile(e.reconcileCtx(t, PendingCleanupName), mc.Key())
	require.NoError(t, err)
	assert.Empty(t, getScheduling(t, e.fleet, mc).Properties.Status.PendingAssignedClusters)
	assert.Contains(t, e.logs.String(), dropNoSPC)
}

// The SPC that CreateServiceProviderCluster writes is in this process's cache at once,
// as every other write is: the replica that created it never judges it missing.
func TestCreatedSPCIsCachedAtOnce(t *testing.T) {
	e, blind := newBlindPlacementEnv(t)
	rid := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("Fresh")))
	blind.hide(spcItemID(rid))
	e.startCaches(t)
	require.Eventually(t, func() bool { return len(e.deps.Informers.Clusters.Lister().List()) == 1 }, waitFor, tick)

	_, err := newCreateServiceProviderCluster(e.deps).reconcile(e.reconcileCtx(t, CreateServiceProviderClusterName), rid.Key())
	require.NoError(t, err)
	cached, err := e.deps.Informers.ServiceProviderClusters.Lister().Get(api.ServiceProviderClusterResourceID(rid).String())
	require.NoError(t, err, "the created SPC is in the cache without waiting for the change feed")
	assert.Equal(t, flowtest.GetSPC(t, e.resources, rid).ETag, cached.ETag)
}

// Placement reuses a reservation only if the stored scheduling document still holds it:
// the cached copy may show one that was dropped since.
func TestReusedReservationIsCheckedAtApplyTime(t *testing.T) {
	e, blind := newBlindPlacementEnv(t)
	mc := flowtest.CreateManagementCluster(t, e.fleet, "1", flowtest.RegisterShard(t, e.csClient, 1))
	a := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("A")))
	storeSPC(t, e.resources, a)
	flowtest.StoreScheduling(t, e.fleet, mc, 3, 0, a.Key())
	e.startCaches(t)
	require.Eventually(t, func() bool {
		return len(e.deps.Informers.ServiceProviderClusters.Lister().List()) == 1 &&
			len(e.deps.Informers.ManagementClusterSchedulings.Lister().List()) == 1
	}, waitFor, tick)

	// Another replica drops the reservation; this replica's cache does not see it yet.
	blind.hide(api.CosmosID(api.SchedulingResourceID(mc).String()))
	stored := getScheduling(t, e.fleet, mc)
	stored.Properties.Status.PendingAssignedClusters = nil
	_, err := database.Replace(t.Context(), e.fleet, stored)
	require.NoError(t, err)

	res, err := e.placementReconciler().reconcile(e.reconcileCtx(t, PlacementName), a.Key())
	require.NoError(t, err)
	assert.Equal(t, DefaultPlacementConflictRequeue, res.RequeueAfter)
	assert.Empty(t, flowtest.GetSPC(t, e.resources, a).Properties.IntendedManagementCluster(),
		"not placed on a reservation that no longer stands")
	assert.Equal(t, 1.0, e.attempts(placement.OutcomeConflict))
	assert.Zero(t, e.attempts(placement.OutcomePlaced))
}
