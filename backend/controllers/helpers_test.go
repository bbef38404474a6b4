package controllers

import (
	"context"
	"encoding/json"
	"iter"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/backend/candidates"
	"github.com/hcpsched/hcpsched/backend/clusterbody"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/dataflowtest"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// The backend's side of the test kit (internal/dev/controllertest): its Env over a kit,
// the documents its tests store, and the stores that make a cache lag or a write lose.

const (
	// testRequeueAfter shortens every expected wait, so that a whole creation flow takes
	// a fraction of a second.
	testRequeueAfter = 20 * time.Millisecond
	waitFor          = controllertest.WaitFor
	tick             = controllertest.Tick

	// testSubscription is the subscription of the test clusters (clusterID), in ARM's
	// casing.
	testSubscription = "0465BC32-C654-41B8-8D87-9815D7ABE8F6"

	fixedCSID = "0123456789abcdefghijklmnopqrstuv"
	fixedHREF = clusterservice.ClustersPath + "/" + fixedCSID
	// unmappableHREF is a legacy clusterServiceID Cluster Service does not know.
	unmappableHREF = "/api/clusters_mgmt/v1/clusters/1243e9e9-d150-4ef1-9735-2bbc3cabc7d0"
)

// world is one test's kit and the backend's Env over it: the controllers write through
// the kit's recorded containers, and a test may wrap them in env before it builds a
// controller.
type world struct {
	*controllertest.Kit
	env Env
}

func newWorld(t *testing.T, opts ...controllertest.Option) *world {
	t.Helper()
	k := controllertest.New(t, opts...)
	m, err := NewPlacementMetrics(k.Registry)
	require.NoError(t, err)
	waits, err := NewCreationWaits(k.Registry)
	require.NoError(t, err)
	snapshot, err := candidates.New(k.Caches, placement.DefaultConfig())
	require.NoError(t, err)
	k.Synced = append(k.Synced, snapshot.HasSynced)
	return &world{Kit: k, env: Env{
		Caches:           k.Caches,
		Resources:        k.Container(api.ResourcesContainer),
		Fleet:            k.Container(api.FleetContainer),
		ClusterService:   k.CSClient,
		Snapshot:         snapshot,
		Waiting:          candidates.NewWaitingRoom(snapshot, time.Now),
		PlacementMetrics: m,
		CreationWaits:    waits,
	}}
}

// storeSubscription stores the Subscription document of the test clusters, under
// tenant ("" stores properties: null), as the frontend keeps it.
func (w *world) storeSubscription(t *testing.T, tenant string) *api.ResourceID {
	t.Helper()
	return controllertest.StoreSubscription(t, w.Resources, testSubscription, tenant)
}

// reconciler builds def's reconcile on the world's env with its defaults, but the
// expected waits of testSettings. Build every reconciler before Start: it registers the
// caches it reads.
func (w *world) reconciler(t *testing.T, def controller.Definition[Env]) *controllertest.Reconciler {
	t.Helper()
	s := testSettings(def)
	return controllertest.NewReconciler(t, w.Kit, w.env, def, &s)
}

// testSettings disables resync, so that every step a test sees was triggered by an event
// and not rescued by a periodic pass, and shortens the expected waits.
func testSettings(def controller.Definition[Env]) controller.Settings {
	s := def.Defaults
	s.ResyncPeriod = 0
	if s.RequeueAfter > 0 {
		s.RequeueAfter = testRequeueAfter
	}
	return s
}

// creationFlow are the controllers of the creation flow without placement and adoption,
// for the tests that play placement themselves (controllertest.Place).
func creationFlow() []controller.Definition[Env] {
	var out []controller.Definition[Env]
	for _, def := range Definitions() {
		switch def.Name {
		case PlacementName, PendingCleanupName, ClusterServiceAdoptionName:
		default:
			out = append(out, def)
		}
	}
	return out
}

// only are the named definitions, in flow order.
func only(names ...string) []controller.Definition[Env] {
	var out []controller.Definition[Env]
	for _, def := range Definitions() {
		for _, n := range names {
			if def.Name == n {
				out = append(out, def)
			}
		}
	}
	return out
}

// run runs defs with testSettings until the test ends, as the binary does.
func (w *world) run(t *testing.T, defs []controller.Definition[Env]) {
	t.Helper()
	cfg := map[string]controller.Settings{}
	for _, def := range defs {
		cfg[def.Name] = testSettings(def)
	}
	controllertest.Run(t, w.Kit, w.env, defs, cfg)
}

// csRequests counts the fake CS's logged requests whose path starts with prefix.
func (w *world) csRequests(method, prefix string) int {
	n := 0
	for _, r := range w.CS.Requests() {
		if r.Method == method && strings.HasPrefix(r.Path, prefix) {
			n++
		}
	}
	return n
}

func counterValue(c prometheus.Counter) float64 { return testutil.ToFloat64(c) }

func (w *world) attempts(outcome placement.Outcome) float64 {
	return counterValue(w.env.PlacementMetrics.attempts.WithLabelValues(string(outcome)))
}

// clusterID is a cluster resource ID in ARM casing, as the frontend writes it.
func clusterID(name string) *api.ResourceID {
	return api.MustParseResourceID("/subscriptions/" + testSubscription + "/resourceGroups/Some-RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name)
}

// newCluster is a freshly accepted cluster as the frontend writes it for a PUT of rid
// (controllertest.ClusterFor); mutate changes it before it is stored.
func newCluster(t *testing.T, rid *api.ResourceID, mutate ...func(*api.Cluster)) *api.Cluster {
	t.Helper()
	c := controllertest.ClusterFor(t, rid)
	for _, m := range mutate {
		m(c)
	}
	return c
}

func withPending(href string) func(*api.Cluster) {
	return func(c *api.Cluster) { c.Properties.ServiceProviderProperties.PendingClusterServiceID = href }
}

func withClusterServiceID(href string) func(*api.Cluster) {
	return func(c *api.Cluster) { c.Properties.ServiceProviderProperties.ClusterServiceID = href }
}

func withSpec(mc *api.ResourceID) func(*api.ServiceProviderCluster) {
	return func(s *api.ServiceProviderCluster) { s.Properties.Spec.ManagementClusterResourceID = mc.String() }
}

func withoutDesiredVersion(s *api.ServiceProviderCluster) {
	s.Properties.Spec.ControlPlaneVersion = nil
}

// resourcesSnapshot maps every cluster, SPC and Subscription document in the store to
// its etag.
func resourcesSnapshot(t *testing.T, resources database.Container) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, typ := range []string{api.ClusterResourceType, api.ServiceProviderClusterResourceType, api.SubscriptionResourceType} {
		for item, err := range resources.List(t.Context(), database.ListOptions{ResourceType: typ}) {
			require.NoError(t, err)
			out[item.ID] = item.ETag
		}
	}
	return out
}

func getScheduling(t testing.TB, fleet database.Container, mc *api.ResourceID) *api.ManagementClusterScheduling {
	t.Helper()
	pk, err := api.FleetPartitionKey(mc)
	require.NoError(t, err)
	s, err := database.Get[api.ManagementClusterSchedulingProperties](t.Context(), fleet, pk, api.SchedulingResourceID(mc).String())
	require.NoError(t, err)
	return s
}

func capacityCondition(spc *api.ServiceProviderCluster) *api.Condition {
	if spc.Properties.Status == nil || spc.Properties.Status.Placement == nil {
		return nil
	}
	return api.FindCondition(spc.Properties.Status.Placement.Conditions, placement.ConditionCapacityAvailable)
}

func mustShardOf(t *testing.T, w *world, mc *api.ResourceID) string {
	t.Helper()
	pk, err := api.FleetPartitionKey(mc)
	require.NoError(t, err)
	m, err := database.Get[api.ManagementClusterProperties](t.Context(), w.Fleet, pk, mc.String())
	require.NoError(t, err)
	id, err := clusterservice.ParseShardHREF(m.Properties.Status.ClusterServiceProvisionShardID)
	require.NoError(t, err)
	return id
}

// postCluster creates a CS cluster under id pinned to a shard, as an earlier backend or
// ARO-HCP's own controller would have: the whole body, built from the cluster, an SPC
// with the desired version and the subscription's tenant.
func postCluster(t *testing.T, w *world, c *api.Cluster, id, shard string) {
	t.Helper()
	earlier := c.DeepCopy()
	earlier.Properties.ServiceProviderProperties.PendingClusterServiceID = clusterservice.ClustersPath + "/" + id
	rid, err := c.ParsedResourceID()
	require.NoError(t, err)
	spc := api.NewDocument(api.ServiceProviderClusterResourceID(rid), c.PartitionKey, api.ServiceProviderClusterProperties{
		Spec: &api.ServiceProviderClusterSpec{ControlPlaneVersion: &api.ControlPlaneVersionSpec{DesiredVersion: controllertest.DesiredVersion}},
	})
	body, err := clusterbody.Build(clusterbody.Input{Cluster: earlier, SPC: spc, TenantID: controllertest.Tenant, ShardID: shard})
	require.NoError(t, err)
	_, err = w.CSClient.CreatePinnedCluster(t.Context(), body, shard)
	require.NoError(t, err)
}

// createInClusterService creates a stored cluster in the fake CS under fixedCSID on a
// shard.
func createInClusterService(t *testing.T, w *world, rid *api.ResourceID, shard string) {
	t.Helper()
	postCluster(t, w, controllertest.GetCluster(t, w.Resources, rid), fixedCSID, shard)
}

// leavesDeletingClustersAlone checks that a cluster being deleted gets nothing from the
// controller: no SPC, no IDs, no intent, no Cluster Service call, no observed placement.
func leavesDeletingClustersAlone(t *testing.T, def controller.Definition[Env]) {
	t.Helper()
	w := newWorld(t)
	shard := controllertest.RegisterShard(t, w.CSClient, 1)
	mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", shard)
	w.CS.ResetRequests()

	// Captured from a real database: Deleting, deletionTimestamp, a clusterServiceID.
	captured, err := api.Decode[api.ClusterProperties](arohcp.Get("realcosmos-hcpcluster-deleting-with-legacy-fields.json"))
	require.NoError(t, err)
	capturedID := controllertest.StoreCluster(t, w.Resources, captured)
	controllertest.StoreSPC(t, w.Resources, capturedID, withSpec(mc))
	// Deleting before it had anything.
	fresh := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("fresh"), func(c *api.Cluster) {
		c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateDeleting
	}))
	// Placed and pending creation when the DELETE arrived.
	deletedAt := time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC)
	pending := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("pending"), withPending(fixedHREF), func(c *api.Cluster) {
		c.Properties.ServiceProviderProperties.DeletionTimestamp = &deletedAt
	}))
	controllertest.StoreSPC(t, w.Resources, pending, withSpec(mc))
	// Deleting with a clusterServiceID, before any intent.
	unplaced := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("unplaced"), withClusterServiceID(fixedHREF), func(c *api.Cluster) {
		c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateDeleting
	}))
	controllertest.StoreSPC(t, w.Resources, unplaced)
	r := w.reconciler(t, def)
	w.Start(t)
	before := resourcesSnapshot(t, w.Resources)

	for _, rid := range []*api.ResourceID{capturedID, fresh, pending, unplaced} {
		res, err := r.Reconcile(rid.Key())
		require.NoError(t, err, "%s on %s", def.Name, rid)
		assert.Equal(t, controller.Result{}, res, "%s on %s", def.Name, rid)
	}

	assert.Equal(t, before, resourcesSnapshot(t, w.Resources), "no document was written or created")
	assert.Empty(t, w.CS.Requests(), "Cluster Service was not called")
}

// foreignWritesKey is the properties key a contending writer bumps: a field hcpsched does
// not know, so its survival also proves that the winner's write was preserved.
const foreignWritesKey = "testForeignWrites"

// contendedContainer makes every write the controllers attempt lose a race, once: before
// each Replace or Patch whose previous attempt on the same document went through, another writer
// changes the document (bumping instanceVersion, so the change feed carries it), and the
// write gets a real 412; before each Create another writer creates the same document,
// and the Create gets a real 409.
type contendedContainer struct {
	database.Container

	mu sync.Mutex
	// lost is true for documents whose last Replace or Patch was made to lose.
	lost map[string]bool
	// replaceConflicts and createConflicts count the lost writes per document id.
	replaceConflicts map[string]int
	createConflicts  map[string]int
}

// contend makes the writes of w's controllers to the Resources container contend, and
// records them for the data-flow check; the other writer's writes are not recorded.
func (w *world) contend() *contendedContainer {
	c := &contendedContainer{Container: w.Resources, lost: map[string]bool{}, replaceConflicts: map[string]int{}, createConflicts: map[string]int{}}
	w.env.Resources = dataflowtest.Wrap(c)
	return c
}

func (c *contendedContainer) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	if err := c.contend(ctx, pk, id); err != nil {
		return database.Item{}, err
	}
	return c.Container.Replace(ctx, pk, id, body, ifMatch)
}

// Patch contends as Replace does: docwrite writes owned fields as patches.
func (c *contendedContainer) Patch(ctx context.Context, pk, id string, ops []database.PatchOperation, opts database.PatchOptions) (database.Item, error) {
	if err := c.contend(ctx, pk, id); err != nil {
		return database.Item{}, err
	}
	return c.Container.Patch(ctx, pk, id, ops, opts)
}

// contend makes every other write of a document lose, by another writer's write first.
func (c *contendedContainer) contend(ctx context.Context, pk, id string) error {
	c.mu.Lock()
	contend := !c.lost[id]
	c.lost[id] = contend
	c.mu.Unlock()
	if !contend {
		return nil
	}
	if err := c.foreignReplace(ctx, pk, id); err != nil {
		return err
	}
	c.mu.Lock()
	c.replaceConflicts[id]++
	c.mu.Unlock()
	return nil
}

func (c *contendedContainer) Create(ctx context.Context, pk string, body []byte) (database.Item, error) {
	doc, err := api.Decode[api.RawProperties](body)
	if err != nil {
		return database.Item{}, err
	}
	doc.Properties.SetUnknown(foreignWritesKey, json.RawMessage("1"))
	doc.PrepareCreate()
	foreign, err := api.Encode(doc)
	if err != nil {
		return database.Item{}, err
	}
	if _, err := c.Container.Create(ctx, pk, foreign); err != nil {
		return database.Item{}, err
	}
	c.mu.Lock()
	c.createConflicts[doc.ID]++
	c.mu.Unlock()
	return c.Container.Create(ctx, pk, body)
}

// foreignReplace is another ARO-HCP component writing the document in between: it
// keeps every field and bumps instanceVersion, as a compatible writer does.
func (c *contendedContainer) foreignReplace(ctx context.Context, pk, id string) error {
	item, err := c.Container.Get(ctx, pk, id)
	if err != nil {
		return err
	}
	doc, err := database.DecodeItem[api.RawProperties](item)
	if err != nil {
		return err
	}
	n := 0
	if raw, ok := doc.Properties.Unknown(foreignWritesKey); ok {
		n, _ = strconv.Atoi(string(raw))
	}
	doc.Properties.SetUnknown(foreignWritesKey, json.RawMessage(strconv.Itoa(n+1)))
	doc.ETag = item.ETag
	_, err = database.Replace(ctx, c.Container, doc)
	return err
}

func (c *contendedContainer) conflicts(id string) (replace, create int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replaceConflicts[id], c.createConflicts[id]
}

// blindStore is the store as the caches see it: items the test hides never reach a
// list or a change-feed page, so a cache can be made to lag the store exactly where a
// test needs it. Point reads and writes reach the real store.
type blindStore struct {
	database.Store
	mu     sync.Mutex
	hidden map[string]bool // by item id
}

// newBlindWorld is a world whose caches read through a blindStore.
func newBlindWorld(t *testing.T) (*world, *blindStore) {
	t.Helper()
	blind := &blindStore{hidden: map[string]bool{}}
	w := newWorld(t, controllertest.WithStore(func(s database.Store) database.Store {
		blind.Store = s
		return blind
	}))
	return w, blind
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
	return api.CosmosID(api.ServiceProviderClusterID(cluster))
}
