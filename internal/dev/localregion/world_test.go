package localregion

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
)

// A world is the region's documents moved through the pipeline by the test instead of
// the processes: each cluster's SPC is created, gets its desired version, is reserved on
// an MC and placed there, is created in (the fake) Cluster Service on that MC's shard
// and is observed by the MC, which drops its reservation in the same write, as the
// fleet does. Every read the observer makes (a List of a container, a request to
// Cluster Service) first lets the world take a few steps, so that the observer's reads
// see the region at different moments, as the real region moves on between them.
type world struct {
	t     *testing.T
	store *memory.Store
	// stepsPerRead is how many steps the world may take before each read; 0 keeps it
	// still while it is read.
	stepsPerRead int
	// follow makes the world take on the clusters someone else (drive) writes to the
	// store, as the backend does.
	follow bool
	rng    *rand.Rand

	mu       sync.Mutex
	mcs      []*api.ResourceID
	shards   []string
	clusters []*worldCluster
	// onShard is what Cluster Service has on each shard, in creation order.
	onShard map[string][]*api.ResourceID
}

// The steps of one cluster, in the order the pipeline may take them.
const (
	stepSPC = iota
	stepVersion
	stepReserve
	stepPlace
	stepCreateInCS
	stepObserve
	steps
)

type worldCluster struct {
	rid  *api.ResourceID
	mc   int
	done [steps]bool
}

// enabled is whether step s may happen next: the version needs the SPC, the reservation
// comes before the placement, the Cluster Service create needs both the placement and the
// version, and an MC reports only what Cluster Service has on its shard.
func (c *worldCluster) enabled(s int) bool {
	if c.done[s] {
		return false
	}
	switch s {
	case stepSPC:
		return true
	case stepVersion, stepReserve:
		return c.done[stepSPC]
	case stepPlace:
		return c.done[stepReserve]
	case stepCreateInCS:
		return c.done[stepPlace] && c.done[stepVersion]
	default:
		return c.done[stepCreateInCS]
	}
}

// newWorld registers mcs MCs (stamps 1 to mcs, each with a provision shard and an empty
// scheduling document) and has created clusters clusters, none of which has an SPC yet.
func newWorld(t *testing.T, mcs, clusters int, seed uint64) *world {
	w := &world{
		t: t, store: memory.New(), rng: rand.New(rand.NewPCG(seed, seed)), stepsPerRead: 2,
		onShard: map[string][]*api.ResourceID{},
	}
	ctx := t.Context()
	fleet := w.store.Container(api.FleetContainer)
	for n := 1; n <= mcs; n++ {
		stamp := fmt.Sprint(n)
		mc := api.ManagementClusterResourceID(stamp)
		shard := fmt.Sprintf("%032d", n)
		href, err := clusterservice.ShardHREF(shard)
		require.NoError(t, err)
		_, err = database.Create(ctx, fleet, api.NewDocument(mc, stamp, api.ManagementClusterProperties{
			Spec:   &api.ManagementClusterSpec{SchedulingPolicy: api.Schedulable},
			Status: &api.ManagementClusterStatus{ClusterServiceProvisionShardID: href},
		}))
		require.NoError(t, err)
		_, err = database.Create(ctx, fleet, api.NewDocument(api.SchedulingResourceID(mc), stamp, api.ManagementClusterSchedulingProperties{
			Status: &api.SchedulingStatus{ObservedResources: &api.ObservedResources{
				LastReportedAt: time.Now(), Capacity: api.ResourceList{api.SwiftNIC: "48"}, Usage: api.ResourceList{api.SwiftNIC: "0"},
			}},
		}))
		require.NoError(t, err)
		w.mcs, w.shards = append(w.mcs, mc), append(w.shards, shard)
	}
	for n := 1; n <= clusters; n++ {
		doc, err := frontend.ClusterOfKind(n, frontend.Kind{Swift: true}, time.Now())
		require.NoError(t, err)
		rid, err := doc.ParsedResourceID()
		require.NoError(t, err)
		w.clusters = append(w.clusters, &worldCluster{rid: rid, mc: (n - 1) % mcs})
	}
	return w
}

// observer is the region's observer of this world: its store and its Cluster Service
// take steps before they answer.
func (w *world) observer() *observer {
	cs := httptest.NewServer(http.HandlerFunc(w.serveShard))
	w.t.Cleanup(cs.Close)
	obs := &observer{store: steppingStore{Store: w.store, step: w.stepSome}, csURL: cs.URL, client: cs.Client()}
	for _, c := range w.clusters {
		obs.add(c.rid.String(), time.Now(), frontend.Kind{Swift: true})
	}
	return obs
}

// serveShard answers the fake Cluster Service's admin listing of a shard's clusters.
func (w *world) serveShard(rw http.ResponseWriter, r *http.Request) {
	w.stepSome()
	shard, ok := strings.CutPrefix(r.URL.Path, "/_fake/provision_shards/")
	shard, ok2 := strings.CutSuffix(shard, "/resource_ids")
	if !ok || !ok2 {
		http.NotFound(rw, r)
		return
	}
	w.mu.Lock()
	ids := []string{}
	for _, rid := range w.onShard[shard] {
		ids = append(ids, rid.String())
	}
	w.mu.Unlock()
	body, err := json.Marshal(map[string][]string{"items": ids})
	if err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = rw.Write(body)
}

// stepSome takes up to stepsPerRead steps.
func (w *world) stepSome() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.follow {
		w.adoptLocked()
	}
	if w.stepsPerRead == 0 {
		return
	}
	for range w.rng.IntN(w.stepsPerRead + 1) {
		w.stepLocked()
	}
}

// adoptLocked takes on the clusters in the store that the world does not move yet.
func (w *world) adoptLocked() {
	docs, err := database.ListDecoded[api.ClusterProperties](context.Background(), w.store.Container(api.ResourcesContainer), api.ClusterResourceType)
	require.NoError(w.t, err)
	for _, d := range docs {
		rid, err := d.ParsedResourceID()
		require.NoError(w.t, err)
		if !slices.ContainsFunc(w.clusters, func(c *worldCluster) bool { return c.rid.Equal(rid) }) {
			w.clusters = append(w.clusters, &worldCluster{rid: rid, mc: len(w.clusters) % len(w.mcs)})
		}
	}
}

// settledWorld is whether every cluster took every step.
func (w *world) settledWorld() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.clusters {
		if slices.Contains(c.done[:], false) {
			return false
		}
	}
	return true
}

// stepLocked takes one step of one cluster, chosen at random among those allowed.
func (w *world) stepLocked() {
	type move struct {
		c    *worldCluster
		step int
	}
	var moves []move
	for _, c := range w.clusters {
		for s := range steps {
			if c.enabled(s) {
				moves = append(moves, move{c, s})
			}
		}
	}
	if len(moves) == 0 {
		return
	}
	m := moves[w.rng.IntN(len(moves))]
	w.apply(m.c, m.step)
}

// advance takes these steps of the cluster with index i (from 0), in this order, whatever
// the random order would have done.
func (w *world) advance(i int, steps ...int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.clusters[i]
	for _, s := range steps {
		require.True(w.t, c.enabled(s), "step %d of cluster %d", s, i)
		w.apply(c, s)
	}
}

// through is every step of the pipeline, in order.
var through = []int{stepSPC, stepVersion, stepReserve, stepPlace, stepCreateInCS, stepObserve}

// apply writes one step to the documents, as the component that owns it would.
func (w *world) apply(c *worldCluster, step int) {
	ctx := context.Background()
	t := w.t
	resources := w.store.Container(api.ResourcesContainer)
	fleet := w.store.Container(api.FleetContainer)
	spcID := api.ServiceProviderClusterResourceID(c.rid)
	pk, err := api.ResourcesPartitionKey(c.rid)
	require.NoError(t, err)
	mc := w.mcs[c.mc]
	stamp, err := api.FleetPartitionKey(mc)
	require.NoError(t, err)
	spc := func(change func(*api.ServiceProviderClusterProperties)) {
		doc, err := database.Get[api.ServiceProviderClusterProperties](ctx, resources, pk, spcID.String())
		require.NoError(t, err)
		if doc.Properties.Spec == nil {
			doc.Properties.Spec = &api.ServiceProviderClusterSpec{}
		}
		change(&doc.Properties)
		_, err = database.Replace(ctx, resources, doc)
		require.NoError(t, err)
	}
	scheduling := func(change func(*api.SchedulingStatus)) {
		doc, err := database.Get[api.ManagementClusterSchedulingProperties](ctx, fleet, stamp, api.SchedulingResourceID(mc).String())
		require.NoError(t, err)
		change(doc.Properties.Status)
		_, err = database.Replace(ctx, fleet, doc)
		require.NoError(t, err)
	}
	switch step {
	case stepSPC:
		_, err := database.Create(ctx, resources, api.NewDocument(spcID, pk, api.ServiceProviderClusterProperties{}))
		require.NoError(t, err)
	case stepVersion:
		spc(func(p *api.ServiceProviderClusterProperties) {
			p.Spec.ControlPlaneVersion = &api.ControlPlaneVersionSpec{DesiredVersion: "4.20.1"}
		})
	case stepReserve:
		scheduling(func(s *api.SchedulingStatus) {
			s.PendingAssignedClusters = append(s.PendingAssignedClusters, c.rid.String())
		})
	case stepPlace:
		spc(func(p *api.ServiceProviderClusterProperties) {
			p.Spec.ManagementClusterResourceID = mc.String()
			p.Spec.ManagementClusterPlacementTime = time.Now()
		})
	case stepCreateInCS:
		w.onShard[w.shards[c.mc]] = append(w.onShard[w.shards[c.mc]], c.rid)
	case stepObserve:
		scheduling(func(s *api.SchedulingStatus) {
			s.NotReadyResourceIDs = append(s.NotReadyResourceIDs, c.rid.String())
			s.PendingAssignedClusters = slices.DeleteFunc(s.PendingAssignedClusters, func(id string) bool {
				return api.ResourceIDsEqual(id, c.rid.String())
			})
		})
	}
	c.done[step] = true
}

// truth is the counters as they are in the world now, as one instant sees them.
func (w *world) truth() snapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := snapshot{created: len(w.clusters)}
	for _, c := range w.clusters {
		d := c.done
		s.placed += b2i(d[stepPlace])
		s.versioned += b2i(d[stepVersion])
		s.inCS += b2i(d[stepCreateInCS])
		s.observed += b2i(d[stepObserve])
		s.pending += b2i(d[stepReserve] && !d[stepObserve])
	}
	return s
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// steppingStore lets the world step before every List.
type steppingStore struct {
	database.Store
	step func()
}

func (s steppingStore) Container(name string) database.Container {
	return steppingContainer{Container: s.Store.Container(name), step: s.step}
}

type steppingContainer struct {
	database.Container
	step func()
}

func (c steppingContainer) List(ctx context.Context, opts database.ListOptions) iter.Seq2[database.Item, error] {
	c.step()
	return c.Container.List(ctx, opts)
}
