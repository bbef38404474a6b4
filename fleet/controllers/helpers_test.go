package controllers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/dataflowtest"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/dev/informertest"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// Fixtures the tests start from: ARO-HCP documents, so every write is checked against
// real shapes with fields hcpsched does not know.
const (
	fixtureStamp1       = "constructed/fleet-stamp-1-auto-approved.json"
	fixtureStamp3       = "constructed/fleet-stamp-3-approval-revoked.json"
	fixtureMC1          = "constructed/fleet-managementcluster-1-ready-schedulable.json"
	fixtureMC3          = "constructed/fleet-managementcluster-3-cordoned-registration-checkfailed.json"
	fixtureScheduling1  = "constructed/fleet-scheduling-stamp-1-observed.json"
	fixtureScheduling3  = "constructed/fleet-scheduling-stamp-3-initial-empty.json"
	fixtureReadDesire1  = "constructed/readdesire-capacity-stamp-1.json"
	kubeApplierOfStamp1 = "Manifests-MC-1"
)

var (
	mc1 = api.ManagementClusterResourceID("1")
	mc3 = api.ManagementClusterResourceID("3")
	// testNow is the controllers' clock in tests.
	testNow = time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
)

// seed is one stored document: a fixture, changed by edits, in a container.
type seed struct {
	container string
	fixture   string
	edits     []edit
}

// edit sets (or, with value remove, deletes) the value at a JSON path.
type edit struct {
	path  string // dot-separated; a segment may be quoted with [] to hold dots: status.[aro.openshift.io/swift-nic]
	value any
}

type removeValue struct{}

var remove = removeValue{}

func fleetDoc(fixture string, edits ...edit) seed {
	return seed{container: api.FleetContainer, fixture: fixture, edits: edits}
}

func kubeApplierDoc(fixture string, edits ...edit) seed {
	return seed{container: kubeApplierOfStamp1, fixture: fixture, edits: edits}
}

// env is a memory store with the fleet's informers over it, and a fake Cluster Service
// behind a real HTTP listener.
type env struct {
	t     *testing.T
	mem   *memory.Store
	store *hookStore
	inf   Informers
	cs    *fakeclusterservice.Server
	csAPI *clusterservice.Client
	ctx   context.Context
}

func newEnv(t *testing.T, seeds ...seed) *env {
	t.Helper()
	e := &env{t: t, mem: memory.New(), ctx: controller.WithLogger(t.Context(), slog.New(slog.DiscardHandler))}
	e.store = &hookStore{Store: dataflowtest.WrapStore(e.mem)}
	for _, s := range seeds {
		e.put(s)
	}
	factory, err := informers.NewFactory(e.store, informers.Options{PollInterval: 5 * time.Millisecond, Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	e.inf = NewInformers(factory)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	factory.Start(ctx)
	require.True(t, factory.WaitForCacheSync(t.Context()))
	informertest.DetectMutations(t, e.inf.ManagementClusters.SharedIndexInformer, e.inf.Schedulings.SharedIndexInformer, e.inf.Stamps.SharedIndexInformer)

	e.cs = fakeclusterservice.New(fakeclusterservice.WithSeed(1))
	srv := httptest.NewServer(e.cs)
	t.Cleanup(srv.Close)
	e.csAPI, err = clusterservice.New(t.Context(), clusterservice.Config{URL: srv.URL, DisableRetries: true, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.csAPI.Close() })
	return e
}

// as is the ctx a worker of the named controller hands its reconcile: the data-flow
// check credits the reconcile's writes to that name.
func (e *env) as(name string) context.Context { return controller.WithName(e.ctx, name) }

// put stores a seed document directly, bypassing every hook.
func (e *env) put(s seed) database.Item {
	e.t.Helper()
	body := applyEdits(e.t, arohcp.Get(s.fixture), s.edits...)
	var env struct {
		PartitionKey string `json:"partitionKey"`
	}
	require.NoError(e.t, json.Unmarshal(body, &env))
	item, err := e.mem.Container(s.container).Create(context.Background(), env.PartitionKey, body)
	require.NoError(e.t, err)
	return item
}

// item point-reads a stored document.
func (e *env) item(container string, rid *api.ResourceID) database.Item {
	e.t.Helper()
	pk := api.KubeApplierPartitionKey(rid.Parent())
	if container == api.FleetContainer {
		var err error
		pk, err = api.FleetPartitionKey(rid)
		require.NoError(e.t, err)
	}
	item, err := e.mem.Container(container).Get(context.Background(), pk, api.CosmosID(rid.String()))
	require.NoError(e.t, err)
	return item
}

// exists reports whether a document is stored.
func (e *env) exists(container, pk string, rid *api.ResourceID) bool {
	_, err := e.mem.Container(container).Get(context.Background(), pk, api.CosmosID(rid.String()))
	return err == nil
}

// replaceStored is another writer changing a stored document, as the backend would; a
// lost etag race is redone from a fresh read.
func (e *env) replaceStored(container string, rid *api.ResourceID, edits ...edit) database.Item {
	e.t.Helper()
	for range 100 {
		cur := e.item(container, rid)
		d, err := database.DecodeItem[api.RawProperties](cur)
		require.NoError(e.t, err)
		d.PrepareReplace()
		body, err := api.Encode(d)
		require.NoError(e.t, err)
		body = applyEdits(e.t, body, edits...)
		item, err := e.mem.Container(container).Replace(context.Background(), cur.PartitionKey, cur.ID, body, cur.ETag)
		if errors.Is(err, database.ErrPreconditionFailed) {
			continue
		}
		require.NoError(e.t, err)
		return item
	}
	e.t.Fatalf("%s kept changing", rid)
	return database.Item{}
}

// synced waits until the caches hold the stored version of every Fleet document.
func (e *env) synced() {
	e.t.Helper()
	require.Eventually(e.t, func() bool {
		for _, rtype := range []string{api.ManagementClusterResourceType, api.ManagementClusterSchedulingResourceType, api.StampResourceType} {
			for item, err := range e.mem.Container(api.FleetContainer).List(context.Background(), database.ListOptions{ResourceType: rtype}) {
				if err != nil {
					return false
				}
				_, rid, _ := api.Identify(item.Body)
				var etag string
				switch rtype {
				case api.ManagementClusterResourceType:
					etag = cachedETag(e.inf.ManagementClusters, rid)
				case api.ManagementClusterSchedulingResourceType:
					etag = cachedETag(e.inf.Schedulings, rid)
				default:
					etag = cachedETag(e.inf.Stamps, rid)
				}
				if etag != item.ETag {
					return false
				}
			}
		}
		return true
	}, 5*time.Second, 5*time.Millisecond, "caches did not catch up with the store")
}

func cachedETag[P any](inf *informers.Informer[P], rid string) string {
	d, err := inf.Lister().Get(rid)
	if err != nil {
		return ""
	}
	return d.ETag
}

// hookStore lets a test act just before a container's next Replace, to lose an etag race
// on purpose, and counts the writes that reached the store.
type hookStore struct {
	database.Store
	// inflight is held (shared) by every write from the store call until it is recorded,
	// so that writes() never misses a write that has already reached the store.
	inflight sync.RWMutex
	mu       sync.Mutex
	before   func()
	replaces []write
	creates  []write
	gets     map[string]int // point reads by container
}

type write struct {
	container string
	body      []byte
	err       error
}

func (s *hookStore) Container(name string) database.Container {
	return &hookContainer{Container: s.Store.Container(name), store: s}
}

// beforeNextReplace runs f once, just before the next Replace reaches the store.
func (s *hookStore) beforeNextReplace(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.before = f
}

func (s *hookStore) writes() (replaces, creates []write) {
	s.inflight.Lock()
	defer s.inflight.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]write(nil), s.replaces...), append([]write(nil), s.creates...)
}

type hookContainer struct {
	database.Container
	store *hookStore
}

func (c *hookContainer) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	c.store.mu.Lock()
	before := c.store.before
	c.store.before = nil
	c.store.mu.Unlock()
	if before != nil {
		before()
	}
	c.store.inflight.RLock()
	defer c.store.inflight.RUnlock()
	item, err := c.Container.Replace(ctx, pk, id, body, ifMatch)
	c.store.mu.Lock()
	c.store.replaces = append(c.store.replaces, write{container: c.Name(), body: body, err: err})
	c.store.mu.Unlock()
	return item, err
}

func (c *hookContainer) Get(ctx context.Context, pk, id string) (database.Item, error) {
	c.store.mu.Lock()
	if c.store.gets == nil {
		c.store.gets = map[string]int{}
	}
	c.store.gets[c.Name()]++
	c.store.mu.Unlock()
	return c.Container.Get(ctx, pk, id)
}

// pointReads counts the point reads of a container so far.
func (s *hookStore) pointReads(container string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets[container]
}

func (c *hookContainer) Create(ctx context.Context, pk string, body []byte) (database.Item, error) {
	c.store.inflight.RLock()
	defer c.store.inflight.RUnlock()
	item, err := c.Container.Create(ctx, pk, body)
	c.store.mu.Lock()
	c.store.creates = append(c.store.creates, write{container: c.Name(), body: body, err: err})
	c.store.mu.Unlock()
	return item, err
}

// ---- JSON trees ----

func tree(t testing.TB, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	require.NoError(t, dec.Decode(&v))
	return v
}

// splitPath splits a dot path; [..] quotes a segment containing dots.
func splitPath(p string) []string {
	var out []string
	for p != "" {
		if strings.HasPrefix(p, "[") {
			end := strings.Index(p, "]")
			out = append(out, p[1:end])
			p = strings.TrimPrefix(p[end+1:], ".")
			continue
		}
		seg, rest, _ := strings.Cut(p, ".")
		out = append(out, seg)
		p = rest
	}
	return out
}

func setPath(t testing.TB, root map[string]any, path string, value any) {
	t.Helper()
	segs := splitPath(path)
	m := root
	for _, k := range segs[:len(segs)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	last := segs[len(segs)-1]
	if _, ok := value.(removeValue); ok {
		delete(m, last)
		return
	}
	m[last] = normalize(t, value)
}

// normalize turns a Go value into what tree() decodes, so trees compare with Equal.
func normalize(t testing.TB, v any) any {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	require.NoError(t, dec.Decode(&out))
	return out
}

func applyEdits(t testing.TB, body []byte, edits ...edit) []byte {
	t.Helper()
	if len(edits) == 0 {
		return body
	}
	root := tree(t, body)
	for _, e := range edits {
		setPath(t, root, e.path, e.value)
	}
	out, err := json.Marshal(root)
	require.NoError(t, err)
	return out
}

// systemKeys are the properties Cosmos (and the memory store) stamps on every write.
var systemKeys = []string{"_etag", "_ts", "_rid", "_self", "_attachments", "_lsn"}

// written is what a replace of before with the given edits must store: the edits, the
// write counter one up and cosmosMetadata.etag set to the etag that was read.
func expectReplaced(t testing.TB, before database.Item, edits ...edit) map[string]any {
	t.Helper()
	want := tree(t, before.Body)
	version := int64(1)
	if md, ok := want["properties"].(map[string]any)["cosmosMetadata"].(map[string]any); ok {
		if n, ok := md["instanceVersion"].(json.Number); ok {
			version, _ = n.Int64()
		}
	}
	setPath(t, want, "properties.cosmosMetadata.instanceVersion", version+1)
	setPath(t, want, "properties.cosmosMetadata.etag", before.ETag)
	for _, e := range edits {
		setPath(t, want, e.path, e.value)
	}
	return withoutSystem(want)
}

func withoutSystem(m map[string]any) map[string]any {
	for _, k := range systemKeys {
		delete(m, k)
	}
	return m
}

func storedTree(t testing.TB, item database.Item) map[string]any {
	return withoutSystem(tree(t, item.Body))
}

// condition is a condition as stored.
func condition(typ, status, reason, message string, at time.Time) map[string]any {
	return map[string]any{"type": typ, "status": status, "lastTransitionTime": at.UTC().Format(time.RFC3339), "reason": reason, "message": message}
}

// loseNextReplace makes the controller's next replace lose an etag race: just before it
// reaches the store, another writer applies edits to the stored document.
func (e *env) loseNextReplace(container string, rid *api.ResourceID, edits ...edit) {
	e.store.beforeNextReplace(func() { e.replaceStored(container, rid, edits...) })
}

// requireLostRace checks that the one replace so far failed with 412.
func (e *env) requireLostRace() {
	e.t.Helper()
	replaces, _ := e.store.writes()
	require.Len(e.t, replaces, 1)
	require.ErrorIs(e.t, replaces[0].err, database.ErrPreconditionFailed)
}

// requireRetryWrites lets the caches catch up with the store, runs reconcile again and
// checks that it replaced the stored document with exactly edits.
func (e *env) requireRetryWrites(name string, reconcile controller.ReconcileFunc, key string, container string, rid *api.ResourceID, edits ...edit) {
	e.t.Helper()
	e.synced()
	before := e.item(container, rid)
	_, err := reconcile(e.as(name), key)
	require.NoError(e.t, err)
	require.Equal(e.t, expectReplaced(e.t, before, edits...), storedTree(e.t, e.item(container, rid)))
}
