package informers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/rawjson"
)

// Defaults for Options, defined once.
const (
	DefaultPollInterval = time.Second
	DefaultRelistPeriod = 30 * time.Minute
	DefaultRelistJitter = 0.2
	DefaultPageSize     = 1000
	// DefaultStallTimeout is how long a pump may go without completing a poll before
	// /readyz fails: far above a poll slowed by throttling retries (the Cosmos client
	// retries a 429 for up to 30 s), far below the relist that would repair the cache.
	DefaultStallTimeout = 2 * time.Minute
	// DefaultStartMargin moves the feed's starting point back so that a client clock
	// running ahead of Cosmos's cannot skip a change; replays are dropped by the gate
	// (same _etag).
	DefaultStartMargin = 5 * time.Second
	// DefaultDocuments is what caches keep of each document unless told otherwise: the
	// declared fields only, since every controller write sends the fields it owns and
	// nothing else (Cosmos PATCH), so no write is based on a whole cached document.
	DefaultDocuments = LeanDocuments
)

// Documents is what an informer's cache keeps of each document.
type Documents int

const (
	// FullDocuments keeps every field, unknown ones included (api.Decode), so a cached
	// document can be the base of a whole-document Replace that preserves what other
	// components own.
	FullDocuments Documents = iota + 1
	// LeanDocuments keeps the declared fields only (api.DecodeLean): a fraction of the
	// heap, for processes whose writes send the fields they own and nothing else.
	LeanDocuments
)

func (d Documents) String() string {
	switch d {
	case FullDocuments:
		return "full"
	case LeanDocuments:
		return "lean"
	}
	return fmt.Sprintf("Documents(%d)", int(d))
}

// Options tune the informers. Zero values take the defaults above.
type Options struct {
	PollInterval time.Duration
	RelistPeriod time.Duration
	// RelistJitter adds up to this fraction of RelistPeriod, at random, to each relist.
	RelistJitter float64
	PageSize     int
	StartMargin  time.Duration
	// StallTimeout is how long a pump may go without completing a poll (every feed range
	// read to its end without an error) before CheckFeeds reports it.
	StallTimeout time.Duration
	// Documents is what every informer of the factory keeps of each document, unless
	// registered with RegisterDocuments.
	Documents  Documents
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

func (o Options) withDefaults() Options {
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.RelistPeriod <= 0 {
		o.RelistPeriod = DefaultRelistPeriod
	}
	if o.RelistJitter <= 0 {
		o.RelistJitter = DefaultRelistJitter
	}
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.StartMargin <= 0 {
		o.StartMargin = DefaultStartMargin
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	if o.Documents == 0 {
		o.Documents = DefaultDocuments
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	return o
}

// Validate reports options that cannot work, naming their flags. Zero values are fine:
// they take the defaults.
func (o Options) Validate() error {
	o = o.withDefaults()
	if o.Documents != FullDocuments && o.Documents != LeanDocuments {
		return fmt.Errorf("informers: unknown documents mode %s", o.Documents)
	}
	if o.StallTimeout <= o.PollInterval {
		return fmt.Errorf("--changefeed-stall-timeout (%s) must be greater than --changefeed-poll-interval (%s)", o.StallTimeout, o.PollInterval)
	}
	return nil
}

// Factory owns the pumps (one per container) and the informers fed by them.
type Factory struct {
	store   database.Store
	opts    Options
	metrics *metrics
	created time.Time

	mu        sync.Mutex
	pumps     map[string]*Pump
	informers map[string]cache.SharedIndexInformer // by container + "|" + lowercased type
	overlays  map[string]*assumed
	documents map[string]Documents
	started   bool
	// running counts the goroutines Start started, for Shutdown.
	running sync.WaitGroup
}

// NewFactory prepares informers over store. Nothing runs until Start.
func NewFactory(store database.Store, opts Options) (*Factory, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("informer metrics: %w", err)
	}
	return &Factory{
		store: store, opts: opts, metrics: m, created: time.Now(),
		pumps: map[string]*Pump{}, informers: map[string]cache.SharedIndexInformer{}, overlays: map[string]*assumed{},
		documents: map[string]Documents{},
	}, nil
}

// Informer is a typed view of a shared informer.
type Informer[P any] struct {
	cache.SharedIndexInformer
	resourceType string
	overlay      *assumed
	documents    Documents
}

// Documents is what the informer's cache keeps of each document.
func (i *Informer[P]) Documents() Documents { return i.documents }

// Lister reads the informer's cache, including documents this process has written and
// Assumed but the change feed has not delivered yet.
func (i *Informer[P]) Lister() *Lister[P] {
	return &Lister[P]{indexer: i.GetIndexer(), resourceType: i.resourceType, overlay: i.overlay}
}

// Register returns the informer for a resource type in a container, creating it (and the
// container's pump) on first use, keeping what the factory's Options.Documents says.
// Register before Start.
func Register[P any](f *Factory, container, resourceType string, indexers cache.Indexers) *Informer[P] {
	return RegisterDocuments[P](f, container, resourceType, indexers, f.opts.Documents)
}

// RegisterDocuments is Register for an informer that keeps docs of each document
// whatever the factory's default: a caller whose writes replace whole documents needs
// FullDocuments. One informer serves every caller of a type, so asking for it again with
// another mode panics.
func RegisterDocuments[P any](f *Factory, container, resourceType string, indexers cache.Indexers, docs Documents) *Informer[P] {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := container + "|" + strings.ToLower(resourceType)
	if inf, ok := f.informers[id]; ok {
		if f.documents[id] != docs {
			panic(fmt.Sprintf("informers: %s registered with %s documents, asked for %s", id, f.documents[id], docs))
		}
		return &Informer[P]{SharedIndexInformer: inf, resourceType: resourceType, overlay: f.overlays[id], documents: docs}
	}
	if f.started {
		panic(fmt.Sprintf("informers: %s registered after Start", id))
	}
	if docs != FullDocuments && docs != LeanDocuments {
		panic(fmt.Sprintf("informers: %s registered with unknown documents mode %s", id, docs))
	}
	pump, ok := f.pumps[container]
	if !ok {
		pump = newPump(f.store.Container(container), f.opts, f.metrics, f.created.Add(-f.opts.StartMargin))
		f.pumps[container] = pump
	}
	if indexers == nil {
		indexers = cache.Indexers{}
	}
	overlay := newAssumed(indexers)
	reg := &registration{resourceType: resourceType, decode: decoder[P](docs), written: writtenCopy[P](overlay)}
	pump.register(reg)
	lw := &listWatch{pump: pump, reg: reg}
	inf := cache.NewSharedIndexInformer(lw, &Object[P]{}, 0, indexers)
	f.informers[id] = inf
	f.overlays[id] = overlay
	f.documents[id] = docs
	return &Informer[P]{SharedIndexInformer: inf, resourceType: resourceType, overlay: f.overlays[id], documents: docs}
}

// decodeFunc is how documents kept as docs are decoded.
func decodeFunc[P any](docs Documents) func([]byte) (*api.Document[P], error) {
	if docs == LeanDocuments {
		return api.DecodeLean[P]
	}
	return api.Decode[P]
}

func decoder[P any](docs Documents) func(database.Item) (decodedItem, error) {
	decode := decodeFunc[P](docs)
	return func(item database.Item) (decodedItem, error) {
		d, err := decode(item.Body)
		if err != nil {
			return decodedItem{}, err
		}
		rid, err := d.ParsedResourceID()
		if err != nil {
			return decodedItem{}, err
		}
		obj := newObject(d, rid)
		// The key is the object's own name: one string per cached document, not two.
		return decodedItem{obj: obj, key: obj.Name, deleted: d.IsDeleted()}, nil
	}
}

// writtenCopy returns the decoded copy of a feed item that is a write this process made
// through docwrite: the overlay holds what the store returned for it, decoded as the feed
// decodes (Informer.DecodeStored), and the item is that very version (same _etag). It
// differs only in what Cosmos stamps the item with: _lsn, which Cosmos adds to feed items
// alone and the caches order writes by, and _ts, which a patch's copy holds only as a
// lower bound (docwrite asks for no document back). The copy takes the item's. Most of
// what a busy backend's feed brings is its own writes, each decoded already when it was
// written.
func writtenCopy[P any](overlay *assumed) func(database.Item, string) (decodedItem, bool) {
	return func(item database.Item, resourceID string) (decodedItem, bool) {
		if resourceID == "" || item.ETag == "" {
			return decodedItem{}, false
		}
		obj, ok := overlay.write(KeyOf(resourceID), item.ETag)
		if !ok {
			return decodedItem{}, false
		}
		o, ok := obj.(*Object[P])
		if !ok || o.Doc == nil {
			return decodedItem{}, false
		}
		lsn, ts, err := feedStamps(item.Body)
		if err != nil {
			return decodedItem{}, false
		}
		doc := *o.Doc // shared, never changed: cached documents are read-only
		doc.LSN = lsn
		if ts != 0 {
			doc.Timestamp = ts
		}
		copied := &Object[P]{Name: o.Name, Doc: &doc}
		return decodedItem{obj: copied, key: copied.Name, deleted: doc.IsDeleted()}, true
	}
}

// feedStamps reads a change-feed item's _lsn and _ts (0 for one it lacks).
func feedStamps(body []byte) (lsn, ts int64, err error) {
	fields, err := rawjson.Fields(body, "_lsn", "_ts")
	if err != nil {
		return 0, 0, err
	}
	var out [2]int64
	for i, f := range fields {
		if f == nil {
			continue
		}
		if out[i], err = strconv.ParseInt(string(f), 10, 64); err != nil {
			return 0, 0, err
		}
	}
	return out[0], out[1], nil
}

// Start runs every pump and informer until ctx ends; Shutdown waits for them to stop.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started {
		return
	}
	f.started = true
	now := time.Now()
	for _, p := range f.pumps {
		// A pump that never completes a poll is stalled from its start.
		p.markPolled(now)
		f.running.Go(func() { p.Run(ctx) })
	}
	for _, inf := range f.informers {
		f.running.Go(func() { inf.Run(ctx.Done()) })
	}
}

// Shutdown blocks until every pump and informer Start started has returned, which they
// do once Start's ctx ends: a process that must not read, log or write after it stops
// (a command line returning its exit code) cancels that ctx, then calls Shutdown.
func (f *Factory) Shutdown() {
	f.running.Wait()
}

// WaitForCacheSync blocks until every informer has listed once, or ctx ends.
func (f *Factory) WaitForCacheSync(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), f.syncedFuncs()...)
}

// HasSynced reports whether every informer has listed once (for /readyz).
func (f *Factory) HasSynced() bool {
	for _, s := range f.syncedFuncs() {
		if !s() {
			return false
		}
	}
	return true
}

// FeedReadinessCheck names the /readyz check that CheckFeeds backs.
const FeedReadinessCheck = "changefeed-polls"

// CheckFeeds fails, naming each container, when a pump has not completed a poll within
// the stall timeout: its caches are frozen (a hung or failing feed read) although they
// synced once. It passes again as soon as the pump completes a poll.
func (f *Factory) CheckFeeds(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.started {
		return errors.New("change-feed pumps have not started")
	}
	now := time.Now()
	var stalled []string
	for name, p := range f.pumps {
		if age := now.Sub(p.lastPolled()); age > f.opts.StallTimeout {
			stalled = append(stalled, fmt.Sprintf("%s (no completed poll for %s)", name, age.Round(time.Millisecond)))
		}
	}
	if len(stalled) == 0 {
		return nil
	}
	sort.Strings(stalled)
	return fmt.Errorf("change feeds stalled beyond %s: %s", f.opts.StallTimeout, strings.Join(stalled, ", "))
}

func (f *Factory) syncedFuncs() []cache.InformerSynced {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []cache.InformerSynced
	for _, inf := range f.informers {
		out = append(out, inf.HasSynced)
	}
	return out
}

// listWatch connects client-go's reflector to a pump registration.
type listWatch struct {
	pump *Pump
	reg  *registration
}

// List subscribes a new watch first and lists second, so every change after the list's
// snapshot reaches the watch; changes the list already holds are dropped by version, and
// a change queued during the list that the list then overtook is dropped before delivery.
func (lw *listWatch) List(options metav1.ListOptions) (runtime.Object, error) {
	w := newWatcher()
	lw.reg.subscribe(w)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	list := &metav1.List{}
	container := lw.pump.container
	for item, err := range container.List(ctx, database.ListOptions{ResourceType: lw.reg.resourceType}) {
		if err != nil {
			w.Stop()
			return nil, fmt.Errorf("listing %s in %s: %w", lw.reg.resourceType, container.Name(), err)
		}
		d, err := lw.reg.decode(item)
		if err != nil {
			lw.pump.malformed(lw.reg.resourceType, item, err)
			continue
		}
		w.listed(d.key, d.obj)
		if d.deleted {
			continue
		}
		list.Items = append(list.Items, runtime.RawExtension{Object: d.obj})
	}
	lw.pump.metrics.relists.WithLabelValues(container.Name(), lw.reg.resourceType).Inc()
	return list, nil
}

func (lw *listWatch) Watch(options metav1.ListOptions) (watch.Interface, error) {
	w := lw.reg.takePending()
	if w == nil {
		// A watch without a preceding list could miss changes: ask for a relist instead.
		w = newWatcher()
		w.expire()
		w.start()
		return w, nil
	}
	w.start()
	timer := time.AfterFunc(lw.pump.relistAfter(), w.expire)
	go func() {
		<-w.stop
		timer.Stop()
	}()
	return w, nil
}

// Resource types of the caches the binaries use, with their indexes.
const (
	// IndexByCluster maps SPCs to their lowercased cluster resource ID. Clusters have no
	// such index: their own key is that value already (Lister.Get), and an index would
	// hold one more copy of the key and one set per cached cluster.
	IndexByCluster = "byCluster"
	// IndexBySubscription maps clusters to their subscription's key (the lowercased
	// /subscriptions/{id}), so that a subscription's event reaches the clusters in it.
	IndexBySubscription = "bySubscription"
	// IndexByProvisionShard maps MCs to their lowercased CS provision shard path.
	IndexByProvisionShard = "byProvisionShard"
	// IndexByIntendedManagementCluster maps SPCs to the lowercased MC their spec (the
	// placement intent) names.
	IndexByIntendedManagementCluster = "byIntendedManagementCluster"
	// IndexByPendingCluster maps scheduling documents to each cluster they hold a
	// reservation for (lowercased).
	IndexByPendingCluster = "byPendingCluster"
)

func indexByAncestor[P any](resourceType string) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		d, ok := DocumentOf[P](obj)
		if !ok {
			return nil, nil
		}
		rid, err := d.ParsedResourceID()
		if err != nil {
			return nil, nil
		}
		if a, ok := rid.Ancestor(resourceType); ok {
			return []string{a.Key()}, nil
		}
		return nil, nil
	}
}

// clusters registers the HCPOpenShiftCluster informer; Caches is the way in.
func clusters(f *Factory) *Informer[api.ClusterProperties] {
	return Register[api.ClusterProperties](f, api.ResourcesContainer, api.ClusterResourceType, cache.Indexers{
		IndexBySubscription: func(obj any) ([]string, error) {
			d, ok := DocumentOf[api.ClusterProperties](obj)
			if !ok {
				return nil, nil
			}
			rid, err := d.ParsedResourceID()
			if err != nil || rid.SubscriptionID == "" {
				return nil, nil
			}
			return []string{api.SubscriptionResourceID(rid.SubscriptionID).Key()}, nil
		},
	})
}

// serviceProviderClusters registers the SPC informer.
func serviceProviderClusters(f *Factory) *Informer[api.ServiceProviderClusterProperties] {
	return Register[api.ServiceProviderClusterProperties](f, api.ResourcesContainer, api.ServiceProviderClusterResourceType, cache.Indexers{
		IndexByCluster: indexByAncestor[api.ServiceProviderClusterProperties](api.ClusterResourceType),
		IndexByIntendedManagementCluster: func(obj any) ([]string, error) {
			d, ok := DocumentOf[api.ServiceProviderClusterProperties](obj)
			if !ok || d.Properties.IntendedManagementCluster() == "" {
				return nil, nil
			}
			return []string{KeyOf(d.Properties.IntendedManagementCluster())}, nil
		},
	})
}

// managementClusters registers the MC informer.
func managementClusters(f *Factory) *Informer[api.ManagementClusterProperties] {
	return Register[api.ManagementClusterProperties](f, api.FleetContainer, api.ManagementClusterResourceType, cache.Indexers{
		IndexByProvisionShard: func(obj any) ([]string, error) {
			d, ok := DocumentOf[api.ManagementClusterProperties](obj)
			if !ok || d.Properties.Status == nil || d.Properties.Status.ClusterServiceProvisionShardID == "" {
				return nil, nil
			}
			return []string{strings.ToLower(d.Properties.Status.ClusterServiceProvisionShardID)}, nil
		},
	})
}

// managementClusterSchedulings registers the scheduling-document informer.
func managementClusterSchedulings(f *Factory) *Informer[api.ManagementClusterSchedulingProperties] {
	return Register[api.ManagementClusterSchedulingProperties](f, api.FleetContainer, api.ManagementClusterSchedulingResourceType, cache.Indexers{
		IndexByPendingCluster: func(obj any) ([]string, error) {
			d, ok := DocumentOf[api.ManagementClusterSchedulingProperties](obj)
			if !ok || d.Properties.Status == nil {
				return nil, nil
			}
			var keys []string
			for _, id := range d.Properties.Status.PendingAssignedClusters {
				if id != "" {
					keys = append(keys, KeyOf(id))
				}
			}
			return keys, nil
		},
	})
}
