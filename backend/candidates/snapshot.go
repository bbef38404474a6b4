// Package candidates keeps the placement engine's input ready from the backend's caches:
// every management cluster (MC) parsed with its scheduling document (placement.MC),
// rebuilt only when one of the documents it was parsed from changes. The
// PlacementController decides from it, and the metrics count capacity and headroom from
// the same MCs, so that both see what the engine sees. Its WaitingRoom wakes the
// clusters that fit nowhere when an MC changes so that they now could.
package candidates

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// Snapshot is every cached MC parsed for the engine. An MC is parsed again (and only
// then) when its MC or scheduling document changes in the cache, including through this
// process's own writes (Assume), when a cluster it lists as not ready or reserved comes
// into or goes out of the cache or changes kind, or, for every MC, when the
// HCPResourceRequirements document changes the cost model.
type Snapshot struct {
	cfg          placement.Config
	mcs          *informers.Lister[api.ManagementClusterProperties]
	schedulings  *informers.Lister[api.ManagementClusterSchedulingProperties]
	clusters     *informers.Lister[api.ClusterProperties]
	requirements *informers.Lister[api.HCPResourceRequirementsProperties]

	mu    sync.Mutex
	model *placement.Model
	// entries are the parsed MCs by MC key.
	entries map[string]*entry
	// keys are the entries' keys in order, and parsed their MCs, aligned: kept in order as
	// MCs come and go, so that publishing a view after a change copies the pointers
	// rather than sorting a thousand keys (a sort cost 200 µs at 1,000 MCs, four decisions'
	// worth, and under load every reservation changes an MC). Views get copies.
	keys   []string
	parsed []*placement.MC
	// listedBy maps a cluster key to the keys of the MCs whose entry lists it.
	listedBy map[string]map[string]bool
	// changed says that entries changed since view was published.
	changed bool
	// listeners hear of every MC parsed again (the WaitingRoom).
	listeners []func(old, updated *placement.MC)
	// synced are the registrations of the snapshot's event handlers, to tell when they
	// have seen what the caches first listed.
	synced []cache.ResourceEventHandlerRegistration

	view atomic.Pointer[View]
}

// entry is one parsed MC and the listed clusters its costs were counted with.
type entry struct {
	mc *placement.MC
	// mcETag and schedulingETag are the versions mc was parsed from ("" for no scheduling
	// document), and model the model it was parsed with.
	mcETag, schedulingETag string
	model                  *placement.Model
	// listed maps the key of each cluster the MC lists to its kind when it was parsed;
	// known says whether the cache had it.
	listed map[string]listedCluster
}

type listedCluster struct {
	cluster placement.Cluster
	known   bool
}

// View is one consistent state of the snapshot: a model and every MC parsed with it, in
// key order. It is never changed once published; read it only.
type View struct {
	Model *placement.Model
	MCs   []*placement.MC
}

// New keeps a snapshot of c's MCs for cfg, which must be valid. It registers event
// handlers on c's caches: call it before c's factory starts.
func New(c informers.Caches, cfg placement.Config) (*Snapshot, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Snapshot{
		cfg:          cfg,
		mcs:          c.ManagementClusters().Lister(),
		schedulings:  c.ManagementClusterSchedulings().Lister(),
		clusters:     c.Clusters().Lister(),
		requirements: c.HCPResourceRequirements().Lister(),
		entries:      map[string]*entry{},
		listedBy:     map[string]map[string]bool{},
	}
	s.model = placement.NewModel(cfg, nil)
	s.view.Store(&View{Model: s.model})

	mcKey := func(obj any) string {
		if d, ok := informers.DocumentOf[api.ManagementClusterProperties](obj); ok {
			return informers.KeyOf(d.ResourceID)
		}
		return ""
	}
	schedulingMC := func(obj any) string {
		if d, ok := informers.DocumentOf[api.ManagementClusterSchedulingProperties](obj); ok {
			return managementClusterOf(d.ResourceID)
		}
		return ""
	}
	for _, h := range []struct {
		inf interface {
			AddEventHandler(cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error)
		}
		handler cache.ResourceEventHandler
	}{
		{c.ManagementClusters(), keyHandler(mcKey, s.refresh)},
		{c.ManagementClusterSchedulings(), keyHandler(schedulingMC, s.refresh)},
		{c.Clusters(), clusterHandler(s.clusterChanged)},
		{c.HCPResourceRequirements(), keyHandler(func(any) string { return "all" }, func(string) { s.remodel() })},
	} {
		reg, err := h.inf.AddEventHandler(h.handler)
		if err != nil {
			return nil, fmt.Errorf("watching the caches for placement's snapshot: %w", err)
		}
		s.synced = append(s.synced, reg)
	}
	c.ManagementClusters().OnAssume(s.refresh)
	c.ManagementClusterSchedulings().OnAssume(func(key string) { s.refresh(managementClusterOf(key)) })
	return s, nil
}

// HasSynced says whether the snapshot has parsed every document the caches first
// listed. The caches' own sync is not enough: the snapshot hears of what they listed
// through its event handlers, which run behind them, so a process that decides or
// exports metrics as soon as the caches synced would see MCs missing, or without their
// scheduling documents. Wait for it after the caches (cache.WaitForCacheSync).
func (s *Snapshot) HasSynced() bool {
	for _, r := range s.synced {
		if !r.HasSynced() {
			return false
		}
	}
	return true
}

// managementClusterOf is the MC key of a scheduling document's resource ID.
func managementClusterOf(schedulingID string) string {
	rid, err := api.ParseResourceID(schedulingID)
	if err != nil {
		return ""
	}
	if mc, ok := rid.Ancestor(api.ManagementClusterResourceType); ok {
		return mc.Key()
	}
	return ""
}

// Current is the snapshot as it stands: the model and every cached MC parsed with it.
// It costs nothing when no MC changed since the last call, one copy of the MC pointers
// when some did.
func (s *Snapshot) Current() *View {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed {
		s.view.Store(&View{Model: s.model, MCs: slices.Clone(s.parsed)})
		s.changed = false
	}
	return s.view.Load()
}

// Listen calls f, under the snapshot's lock, with each MC parsed again: old is nil for a
// new MC, updated nil for one gone. f must be quick and must not call the snapshot.
func (s *Snapshot) Listen(f func(old, updated *placement.MC)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, f)
}

// refresh parses the MC of key again from the caches.
func (s *Snapshot) refresh(key string) {
	if key == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked(key)
}

func (s *Snapshot) refreshLocked(key string) { s.refreshWith(key, "") }

// refreshWith parses the MC key again. A cluster it listed before keeps the kind it was
// parsed with, unless it is changed (a cluster key, or ""): clusterChanged parses an MC
// again precisely when a listed cluster's kind changed, so every other one is as it was,
// and a scheduling document's every event (its reservations, the fleet's mirror of each
// report) need not look up every cluster it lists again.
func (s *Snapshot) refreshWith(key, changed string) {
	old := s.entries[key]
	var oldMC *placement.MC
	if old != nil {
		oldMC = old.mc
	}
	mc, err := s.mcs.Get(key)
	if err != nil {
		// Gone from the cache (or never there): nothing to place on.
		s.unlist(key, old, nil)
		if old != nil {
			delete(s.entries, key)
			if i, found := slices.BinarySearch(s.keys, key); found {
				s.keys = slices.Delete(s.keys, i, i+1)
				s.parsed = slices.Delete(s.parsed, i, i+1)
			}
			s.changed = true
			s.tell(oldMC, nil)
		}
		return
	}
	var sched *api.ManagementClusterScheduling
	if rid, err := mc.ParsedResourceID(); err == nil {
		if d, err := s.schedulings.Get(api.SchedulingResourceID(rid).String()); err == nil {
			sched = d
		}
	}
	if changed == "" && old.parsedFrom(mc, sched, s.model) {
		// The change feed's copy of a write this process already parsed when it assumed
		// it (each reservation, each mirrored report): the MC would parse the same.
		return
	}
	e := &entry{listed: map[string]listedCluster{}, mcETag: mc.ETag, model: s.model}
	if sched != nil {
		e.schedulingETag = sched.ETag
	}
	e.mc = s.model.NewMC(mc, sched, func(id string) (placement.Cluster, bool) {
		k := informers.KeyOf(id)
		if was, ok := old.listedCluster(k); ok && k != changed {
			was.cluster.ResourceID = id
			e.listed[k] = was
			return was.cluster, was.known
		}
		c, known := s.Lookup(id)
		e.listed[k] = listedCluster{cluster: c, known: known}
		return c, known
	})
	s.unlist(key, old, e.listed)
	for id := range e.listed {
		if s.listedBy[id] == nil {
			s.listedBy[id] = map[string]bool{}
		}
		s.listedBy[id][key] = true
	}
	s.entries[key] = e
	if i, found := slices.BinarySearch(s.keys, key); found {
		s.parsed[i] = e.mc
	} else {
		s.keys = slices.Insert(s.keys, i, key)
		s.parsed = slices.Insert(s.parsed, i, e.mc)
	}
	s.changed = true
	s.tell(oldMC, e.mc)
}

// parsedFrom reports whether e was parsed from these very versions of the MC and its
// scheduling document, with this model. Versions are told by _etag, so a document without
// one (never one the store returned) is never the same.
func (e *entry) parsedFrom(mc *api.ManagementCluster, sched *api.ManagementClusterScheduling, model *placement.Model) bool {
	if e == nil || e.model != model || mc.ETag == "" || e.mcETag != mc.ETag {
		return false
	}
	if sched == nil {
		return e.schedulingETag == ""
	}
	return sched.ETag != "" && e.schedulingETag == sched.ETag
}

// unlist forgets that the MC key lists the clusters old listed, but those in keep.
func (s *Snapshot) unlist(key string, old *entry, keep map[string]listedCluster) {
	if old == nil {
		return
	}
	for id := range old.listed {
		if _, still := keep[id]; still {
			continue
		}
		if set := s.listedBy[id]; set != nil {
			delete(set, key)
			if len(set) == 0 {
				delete(s.listedBy, id)
			}
		}
	}
}

// listedCluster is what e was parsed with for the cluster key k; e may be nil.
func (e *entry) listedCluster(k string) (listedCluster, bool) {
	if e == nil {
		return listedCluster{}, false
	}
	lc, ok := e.listed[k]
	return lc, ok
}

func (s *Snapshot) tell(old, updated *placement.MC) {
	for _, f := range s.listeners {
		f(old, updated)
	}
}

// Lookup is the kind of a listed cluster, from the cluster cache: the placement.ClusterLookup
// every MC of the snapshot is parsed with.
func (s *Snapshot) Lookup(id string) (placement.Cluster, bool) {
	c, err := s.clusters.Get(id)
	if err != nil {
		return placement.Cluster{ResourceID: id}, false
	}
	return placement.ClusterOf(id, c), true
}

// clusterChanged parses again the MCs that list the cluster, when what they charged for
// it is no longer right: it came into or went out of the cache, or its kind changed.
func (s *Snapshot) clusterChanged(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mcs := s.listedBy[key]
	if len(mcs) == 0 {
		return
	}
	now, known := s.Lookup(key)
	for mcKey := range mcs {
		was := s.entries[mcKey].listed[key]
		if was.known != known || (known && kindChanged(was.cluster, now)) {
			s.refreshWith(mcKey, key)
		}
	}
}

func kindChanged(a, b placement.Cluster) bool {
	return a.Swift != b.Swift || a.SingleReplica != b.SingleReplica
}

// remodel resolves the cost model again from the HCPResourceRequirements document and,
// when it changed, parses every MC again. The fleet rewrites the document every few
// minutes whether or not its averages moved (lastReportedAt at least); a rewrite that
// leaves every cost as it was keeps the model and the MCs, or each would hold the lock
// for the time it takes to parse every MC (some 17 ms at 1,000, going by
// BenchmarkSnapshotCurrent), decisions waiting.
func (s *Snapshot) remodel() {
	if s.cfg.CostSource != placement.CostSourceRequirements {
		return
	}
	doc, err := s.requirements.Get(api.HCPResourceRequirementsDefaultID)
	if err != nil {
		doc = nil
	}
	model := placement.NewModel(s.cfg, doc)
	s.mu.Lock()
	defer s.mu.Unlock()
	if sameCosts(s.model, model) {
		return
	}
	s.model = model
	for key := range s.entries {
		s.refreshLocked(key)
	}
	s.changed = true
}

// sameCosts says whether two models of one configuration resolved the same costs from
// the same source: then they judge every MC alike.
func sameCosts(a, b *placement.Model) bool {
	sourceA, reasonA := a.Costs()
	sourceB, reasonB := b.Costs()
	if sourceA != sourceB || reasonA != reasonB {
		return false
	}
	for _, swift := range []bool{false, true} {
		for _, single := range []bool{false, true} {
			c := placement.Cluster{Swift: swift, SingleReplica: single}
			if !slices.Equal(a.Cost(c), b.Cost(c)) {
				return false
			}
		}
	}
	return true
}

// keyHandler calls f with key(obj) on every add, update and delete.
func keyHandler(key func(obj any) string, f func(key string)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { f(key(obj)) },
		UpdateFunc: func(_, obj any) { f(key(obj)) },
		DeleteFunc: func(obj any) { f(key(obj)) },
	}
}

// clusterHandler calls f with the cluster's key on every add, update and delete.
func clusterHandler(f func(key string)) cache.ResourceEventHandler {
	return keyHandler(func(obj any) string {
		if d, ok := informers.DocumentOf[api.ClusterProperties](obj); ok {
			return strings.ToLower(d.ResourceID)
		}
		return ""
	}, f)
}
