package candidates_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/backend/candidates"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/informertest"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// Waits of the tests: the caches poll the memory store every few milliseconds.
const (
	within = 5 * time.Second
	tick   = 2 * time.Millisecond
)

// feedStore is a memory store whose change feed holds back the documents a test hides,
// to play a feed that has not delivered a write yet, until the test releases them.
type feedStore struct {
	database.Store
	mu     sync.Mutex
	hidden map[string]bool
	// held are the hidden documents' feed items by container, in feed order.
	held map[string][]database.Item
}

func (s *feedStore) Container(name string) database.Container {
	return feedContainer{Container: s.Store.Container(name), store: s}
}

// hide holds every later write of the document of Cosmos id back from the change feed.
func (s *feedStore) hide(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hidden[id] = true
}

// release lets the feed deliver what it held of the document of Cosmos id, first on its
// next page, and every later write of it.
func (s *feedStore) release(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.hidden, id)
}

type feedContainer struct {
	database.Container
	store *feedStore
}

func (c feedContainer) ChangeFeed(ctx context.Context, opts database.ChangeFeedOptions) (database.ChangeFeedPage, error) {
	page, err := c.Container.ChangeFeed(ctx, opts)
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	var kept, stillHeld []database.Item
	for _, it := range c.store.held[c.Name()] {
		if c.store.hidden[it.ID] {
			stillHeld = append(stillHeld, it)
		} else {
			kept = append(kept, it)
		}
	}
	for _, it := range page.Items {
		if c.store.hidden[it.ID] {
			stillHeld = append(stillHeld, it)
		} else {
			kept = append(kept, it)
		}
	}
	c.store.held[c.Name()] = stillHeld
	page.Items = kept
	return page, err
}

// world is the store a test fills, before or after the caches start.
type world struct {
	t         testing.TB
	store     *feedStore
	fleet     database.Container
	resources database.Container
}

func newWorld(t testing.TB) *world {
	s := &feedStore{Store: memory.New(), hidden: map[string]bool{}, held: map[string][]database.Item{}}
	return &world{t: t, store: s, fleet: s.Container(api.FleetContainer), resources: s.Container(api.ResourcesContainer)}
}

// start runs the caches over the store with a snapshot for cfg taken before they start,
// as the backend takes it, waits until the snapshot has parsed what the caches first
// listed, and fails the test if anything changes a cached document in place.
func (w *world) start(cfg placement.Config) (*candidates.Snapshot, informers.Caches) {
	w.t.Helper()
	f, err := informers.NewFactory(w.store, informers.Options{PollInterval: 5 * time.Millisecond, RelistPeriod: time.Hour, Registerer: prometheus.NewRegistry()})
	require.NoError(w.t, err)
	caches := informers.NewCaches(f)
	snapshot, err := candidates.New(caches, cfg)
	require.NoError(w.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	w.t.Cleanup(cancel)
	f.Start(ctx)
	require.True(w.t, f.WaitForCacheSync(ctx))
	require.True(w.t, cache.WaitForCacheSync(ctx.Done(), snapshot.HasSynced))
	informertest.DetectMutations(w.t, caches.Registered()...)
	return snapshot, caches
}

func fleetPK(t testing.TB, rid *api.ResourceID) string {
	t.Helper()
	pk, err := api.FleetPartitionKey(rid)
	require.NoError(t, err)
	return pk
}

// mc stores a ready, schedulable MC registered as a provision shard, as the fleet
// keeps it; edits change it first.
func (w *world) mc(rid *api.ResourceID, edits ...func(*api.ManagementClusterProperties)) *api.ResourceID {
	w.t.Helper()
	p := api.ManagementClusterProperties{
		LegacyResourceID: rid.String(),
		Spec:             &api.ManagementClusterSpec{SchedulingPolicy: api.Schedulable},
		Status: &api.ManagementClusterStatus{
			Conditions:                     []api.Condition{{Type: api.ManagementClusterConditionReady, Status: api.ConditionTrue, Reason: "AllRegistered"}},
			ClusterServiceProvisionShardID: "/api/aro_hcp/v1alpha1/provision_shards/shard-" + strings.ToLower(rid.Names[0]),
		},
	}
	for _, e := range edits {
		e(&p)
	}
	_, err := database.Create(w.t.Context(), w.fleet, api.NewDocument(rid, fleetPK(w.t, rid), p))
	require.NoError(w.t, err)
	return rid
}

// report is a capacity report as ARO-HCP's fleet mirrors it into the scheduling
// document: swift-NIC ceiling, usage and requests, beside cpu and memory, which the
// default configuration does not count.
type report struct {
	ceiling, usage, requests int
	notReady, pending        []string
	// at is when the report was taken; zero is now.
	at time.Time
}

func (r report) status() *api.SchedulingStatus {
	at := r.at
	if at.IsZero() {
		at = time.Now().UTC().Truncate(time.Second)
	}
	return &api.SchedulingStatus{
		Conditions: []api.Condition{
			{Type: api.SchedulingConditionCapacityDataCurrent, Status: api.ConditionTrue, Reason: "DataCollected", LastTransitionTime: at},
			{Type: api.SchedulingConditionScalingDataCurrent, Status: api.ConditionTrue, Reason: "DataCollected", LastTransitionTime: at},
		},
		ObservedResources: &api.ObservedResources{
			LastReportedAt: at,
			Capacity:       api.ResourceList{api.SwiftNIC: "128", "cpu": "126560m", "memory": "602245408Ki"},
			Usage:          api.ResourceList{api.SwiftNIC: fmt.Sprint(r.usage), "cpu": "3617m", "memory": "21783532Ki"},
			Requests:       api.ResourceList{api.SwiftNIC: fmt.Sprint(r.requests), "cpu": "7260m", "memory": "28416Mi"},
		},
		ScaleCeiling: &api.ScaleCeiling{
			LastReportedAt: at,
			Capacity:       api.ResourceList{api.SwiftNIC: fmt.Sprint(r.ceiling), "cpu": "316400m", "memory": "1691633152Ki"},
		},
		NotReadyResourceIDs:     r.notReady,
		PendingAssignedClusters: r.pending,
	}
}

// scheduling stores the MC's scheduling document with the report.
func (w *world) scheduling(mc *api.ResourceID, r report) {
	w.t.Helper()
	_, err := database.Create(w.t.Context(), w.fleet, api.NewDocument(api.SchedulingResourceID(mc), fleetPK(w.t, mc), api.ManagementClusterSchedulingProperties{Status: r.status()}))
	require.NoError(w.t, err)
}

// editMC is a read-modify-write of the stored MC; it returns what was written.
func (w *world) editMC(rid *api.ResourceID, edit func(*api.ManagementClusterProperties)) *api.ManagementCluster {
	w.t.Helper()
	doc, err := database.Get[api.ManagementClusterProperties](w.t.Context(), w.fleet, fleetPK(w.t, rid), rid.String())
	require.NoError(w.t, err)
	edit(&doc.Properties)
	written, err := database.Replace(w.t.Context(), w.fleet, doc)
	require.NoError(w.t, err)
	return written
}

// editScheduling is a read-modify-write of the MC's stored scheduling status; it
// returns what was written.
func (w *world) editScheduling(mc *api.ResourceID, edit func(*api.SchedulingStatus)) *api.ManagementClusterScheduling {
	w.t.Helper()
	doc, err := database.Get[api.ManagementClusterSchedulingProperties](w.t.Context(), w.fleet, fleetPK(w.t, mc), api.SchedulingResourceID(mc).String())
	require.NoError(w.t, err)
	edit(doc.Properties.Status)
	written, err := database.Replace(w.t.Context(), w.fleet, doc)
	require.NoError(w.t, err)
	return written
}

// softDelete deletes a stored document as ARO-HCP does.
func (w *world) softDelete(c database.Container, pk, resourceID string) {
	w.t.Helper()
	item, err := c.Get(w.t.Context(), pk, api.CosmosID(resourceID))
	require.NoError(w.t, err)
	_, err = database.SoftDelete(w.t.Context(), c, item, time.Now())
	require.NoError(w.t, err)
}

func clusterID(name string) *api.ResourceID {
	return api.MustParseResourceID("/subscriptions/0000000A-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name)
}

const subnet = "/subscriptions/0000000A-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet/subnets/hcp"

// clusterKind is what decides a cluster's cost: VNet integration (SWIFT) and replicas.
type clusterKind struct{ swift, singleReplica bool }

var (
	swiftHA     = clusterKind{swift: true}
	swiftSingle = clusterKind{swift: true, singleReplica: true}
	nonSwiftHA  = clusterKind{}
)

// cluster stores the cluster ARO-HCP's frontend writes for rid, of the given kind.
func (w *world) cluster(rid *api.ResourceID, k clusterKind) {
	w.t.Helper()
	c := controllertest.ClusterFor(w.t, rid)
	setKind(&c.Properties, k)
	_, err := database.Create(w.t.Context(), w.resources, c)
	require.NoError(w.t, err)
}

func setKind(p *api.ClusterProperties, k clusterKind) {
	p.CustomerProperties.Platform.VnetIntegrationSubnetID = ""
	if k.swift {
		p.CustomerProperties.Platform.VnetIntegrationSubnetID = subnet
	}
	p.ServiceProviderProperties.ExperimentalFeatures = nil
	if k.singleReplica {
		p.ServiceProviderProperties.ExperimentalFeatures = &api.ExperimentalFeatures{SingleReplica: api.SingleReplica}
	}
}

// editCluster is a read-modify-write of the stored cluster.
func (w *world) editCluster(rid *api.ResourceID, edit func(*api.ClusterProperties)) {
	w.t.Helper()
	pk, err := api.ResourcesPartitionKey(rid)
	require.NoError(w.t, err)
	doc, err := database.Get[api.ClusterProperties](w.t.Context(), w.resources, pk, rid.String())
	require.NoError(w.t, err)
	edit(&doc.Properties)
	_, err = database.Replace(w.t.Context(), w.resources, doc)
	require.NoError(w.t, err)
}

func (w *world) deleteCluster(rid *api.ResourceID) {
	w.t.Helper()
	pk, err := api.ResourcesPartitionKey(rid)
	require.NoError(w.t, err)
	w.softDelete(w.resources, pk, rid.String())
}

// mcIn is the MC of rid in the view, nil when the view has none.
func mcIn(v *candidates.View, rid *api.ResourceID) *placement.MC {
	for _, mc := range v.MCs {
		if strings.EqualFold(mc.ID(), rid.String()) {
			return mc
		}
	}
	return nil
}

// nicsLeft is what the MC of rid has left of swift NICs in the view, in NICs; ok is
// false when the view has no such MC or the MC cannot be counted.
func nicsLeft(v *candidates.View, rid *api.ResourceID) (int64, bool) {
	mc := mcIn(v, rid)
	if mc == nil {
		return 0, false
	}
	available, ok := mc.Available()
	if !ok {
		return 0, false
	}
	for i, name := range v.Model.Resources() {
		if name == api.SwiftNIC {
			return available[i] / 1000, true
		}
	}
	return 0, false
}

// leftIs waits until the snapshot says the MC of rid has want swift NICs left.
func leftIs(t testing.TB, s *candidates.Snapshot, rid *api.ResourceID, want int64, msg string) *placement.MC {
	t.Helper()
	require.Eventually(t, func() bool {
		got, ok := nicsLeft(s.Current(), rid)
		return ok && got == want
	}, within, tick, "%s: %s should have %d swift NICs left", msg, rid, want)
	return mcIn(s.Current(), rid)
}
