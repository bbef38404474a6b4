package scenario

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// feedPageSize is large enough for the reader to keep up with `make chaos`'s writes.
const feedPageSize = 100

// feedView follows the Resources and Fleet change feeds itself and keeps the latest
// version of every cluster, SPC, MC and scheduling document. It shares no code with the
// informers under test (no instanceVersion gate, no relist, no Assume): a checker that
// saw the region through hcpsched's caches would miss what those caches miss. After every
// pass that read Resources to its end and changed something it calls onSample, which is
// where the invariants are sampled (see Run).
type feedView struct {
	resources, fleet database.Container
	interval         time.Duration
	logger           *slog.Logger
	onSample         func()

	mu          sync.Mutex
	clusters    map[string]*api.Cluster
	spcs        map[string]*api.ServiceProviderCluster // by the cluster's key
	mcs         map[string]*api.ManagementCluster
	schedulings map[string]*api.ManagementClusterScheduling // by the MC's key
	// pending are the documents read since the maps were last brought up to date, the
	// latest version of each only, in feed order. Decoding is most of what the view
	// costs, and the run's scenario process is built with -race and shares two cores
	// with the backends: decoding every version as it was read, the view fell behind
	// the region for good in some runs and took no sample. Decoded when the maps are
	// read, a document rewritten several times between two samples is decoded once.
	pending   []pendingDocument
	pendingAt map[string]int // index into pending, by resource type and id
	pages     int
	errors    int
	malformed int
	// caughtUp is, per feed range, when the last read that found nothing new began.
	caughtUp []time.Time
}

func newFeedView(store database.Store, interval time.Duration, logger *slog.Logger) *feedView {
	return &feedView{
		resources: store.Container(api.ResourcesContainer), fleet: store.Container(api.FleetContainer),
		interval: interval, logger: logger, onSample: func() {},
		clusters: map[string]*api.Cluster{}, spcs: map[string]*api.ServiceProviderCluster{},
		mcs: map[string]*api.ManagementCluster{}, schedulings: map[string]*api.ManagementClusterScheduling{},
		pendingAt: map[string]int{},
	}
}

// pendingDocument is a read document not decoded yet, with its resource type.
type pendingDocument struct {
	resourceType string
	item         database.Item
}

type feedCursor struct {
	container    database.Container
	r            database.FeedRange
	continuation string
}

// maxPagesPerPass bounds how many pages of one feed range a pass reads before it turns
// to the next range, so that a container written faster than it is read cannot starve
// the other.
const maxPagesPerPass = 20

// Run reads the feeds from their beginning until ctx ends, in passes over every feed
// range, Resources first. A pass that read every Resources range to its end and brought
// changes is complete, and only then is onSample called.
//
// Why Resources must be complete: in Cosmos's latest-version mode a feed read part-way
// holds some documents at an old version and others at a new one (a document rewritten
// later moves to the feed's end). A sample could then count a reservation as live
// because it has not read its cluster's intent elsewhere yet, next to a placement that
// rightly took the capacity once that reservation was dropped. Once Resources is read to
// its end at T, the view holds every intent as of T; each scheduling document is some
// version the store held, at T' before or after T. Either way every cluster counted on an
// MC was, at the later of the two, backed by a reservation or by reported usage there,
// which placement keeps within the ceiling; so correct code cannot fail a sample, and
// intents, which never go away, cannot be missed for long. A failed read is counted and
// retried in the next pass.
func (v *feedView) Run(ctx context.Context) {
	var cursors []*feedCursor
	for _, c := range []database.Container{v.resources, v.fleet} {
		for {
			ranges, err := c.FeedRanges(ctx)
			if err == nil {
				for _, r := range ranges {
					cursors = append(cursors, &feedCursor{container: c, r: r})
				}
				break
			}
			v.failed(c, err)
			if !sleepCtx(ctx, v.interval) {
				return
			}
		}
	}
	v.mu.Lock()
	v.caughtUp = make([]time.Time, len(cursors))
	v.mu.Unlock()
	sampled := false
	for {
		complete, changed := true, false
		for i, cur := range cursors {
			atEnd := false
			for range maxPagesPerPass {
				began := time.Now()
				items, err := v.read(ctx, cur)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					v.failed(cur.container, err)
					break
				}
				if len(items) == 0 {
					v.mu.Lock()
					v.caughtUp[i] = began
					v.mu.Unlock()
					atEnd = true
					break
				}
				changed = true
				v.apply(items)
			}
			if cur.container == v.resources {
				complete = complete && atEnd
			}
		}
		if complete && (changed || !sampled) {
			v.onSample()
			sampled = true
		}
		if !changed && !sleepCtx(ctx, v.interval) {
			return
		}
	}
}

// read reads the next page of one feed range; no items means nothing new.
func (v *feedView) read(ctx context.Context, cur *feedCursor) ([]database.Item, error) {
	opts := database.ChangeFeedOptions{FeedRange: &cur.r, Continuation: cur.continuation, MaxItemCount: feedPageSize}
	if cur.continuation == "" {
		opts.Start = database.FromBeginning
	}
	page, err := cur.container.ChangeFeed(ctx, opts)
	if err != nil {
		return nil, err
	}
	cur.continuation = page.Continuation
	if page.NotModified {
		return nil, nil
	}
	return page.Items, nil
}

func (v *feedView) failed(c database.Container, err error) {
	v.mu.Lock()
	v.errors++
	v.mu.Unlock()
	v.logger.Debug("the checker's change-feed read failed; retrying", "container", c.Name(), "error", err.Error())
}

func (v *feedView) apply(items []database.Item) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.pages++
	for _, item := range items {
		_, _, resourceType := api.Identify(item.Body)
		switch {
		case strings.EqualFold(resourceType, api.ClusterResourceType),
			strings.EqualFold(resourceType, api.ServiceProviderClusterResourceType),
			strings.EqualFold(resourceType, api.ManagementClusterResourceType),
			strings.EqualFold(resourceType, api.ManagementClusterSchedulingResourceType):
		default:
			continue
		}
		key := strings.ToLower(resourceType) + "|" + item.ID
		if at, ok := v.pendingAt[key]; ok {
			v.pending[at] = pendingDocument{} // superseded by this newer version
		}
		v.pendingAt[key] = len(v.pending)
		v.pending = append(v.pending, pendingDocument{resourceType: resourceType, item: item})
	}
}

// decodeLocked brings the maps up to date with the pending documents; v.mu is held.
func (v *feedView) decodeLocked() {
	for _, p := range v.pending {
		var err error
		switch {
		case p.item.Body == nil:
			continue
		case strings.EqualFold(p.resourceType, api.ClusterResourceType):
			err = keep(v.clusters, p.item, func(rid *api.ResourceID) string { return rid.Key() })
		case strings.EqualFold(p.resourceType, api.ServiceProviderClusterResourceType):
			err = keep(v.spcs, p.item, func(rid *api.ResourceID) string { return rid.Parent().Key() })
		case strings.EqualFold(p.resourceType, api.ManagementClusterResourceType):
			err = keep(v.mcs, p.item, func(rid *api.ResourceID) string { return rid.Key() })
		case strings.EqualFold(p.resourceType, api.ManagementClusterSchedulingResourceType):
			err = keep(v.schedulings, p.item, func(rid *api.ResourceID) string { return rid.Parent().Key() })
		}
		if err != nil {
			v.malformed++
			v.logger.Warn("the checker could not decode a document from the change feed", "id", p.item.ID, "error", err.Error())
		}
	}
	v.pending = v.pending[:0]
	clear(v.pendingAt)
}

func keep[P any](m map[string]*api.Document[P], item database.Item, key func(*api.ResourceID) string) error {
	doc, err := database.DecodeItem[P](item)
	if err != nil {
		return err
	}
	rid, err := doc.ParsedResourceID()
	if err != nil {
		return err
	}
	m[key(rid)] = doc
	return nil
}

// caughtUpSince reports whether every feed range was read to its end by a read that
// began after t: the view then holds every change made before t.
func (v *feedView) caughtUpSince(t time.Time) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.caughtUp) == 0 {
		return false
	}
	for _, at := range v.caughtUp {
		if at.Before(t) {
			return false
		}
	}
	return true
}

// waitCaughtUp waits until the view holds every change made before it was called.
func (v *feedView) waitCaughtUp(ctx context.Context) bool {
	since := time.Now()
	for !v.caughtUpSince(since) {
		if !sleepCtx(ctx, v.interval/2) {
			return false
		}
	}
	return true
}

// snapshot is the view's state as the ceiling check reads it. kind says, for the clusters
// the run created, what kind they are; others are learnt from their documents.
func (v *feedView) snapshot(at time.Duration, kind func(key string) (frontend.Kind, bool)) snapshot {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.decodeLocked()
	s := snapshot{at: at, clusters: make(map[string]clusterState, len(v.spcs))}
	state := func(key string) clusterState {
		c := s.clusters[key]
		if k, ours := kind(key); ours {
			c.singleReplica, c.nonSwift, c.known = k.SingleReplica, !k.Swift, true
		}
		if doc, ok := v.clusters[key]; ok {
			if !c.known {
				pc := placement.ClusterOf(key, doc)
				c.singleReplica, c.nonSwift, c.known = pc.SingleReplica, !pc.Swift, true
			}
			c.ended = ended(doc)
		}
		return c
	}
	for key := range v.clusters {
		s.clusters[key] = state(key)
	}
	for key, spc := range v.spcs {
		c := state(key)
		if spc.IsDeleted() {
			c.ended = true
		}
		c.intended, c.observed = spc.Properties.IntendedManagementCluster(), spc.Properties.ObservedManagementCluster()
		if st := spc.Properties.Status; st != nil && st.Placement != nil {
			if cond := api.FindCondition(st.Placement.Conditions, placement.ConditionCapacityAvailable); cond != nil {
				copied := *cond
				c.capacity = &copied
			}
		}
		s.clusters[key] = c
	}
	for key, sched := range v.schedulings {
		mc := mcState{id: key}
		if doc, ok := v.mcs[key]; ok {
			mc.id = doc.ResourceID
		}
		if st := sched.Properties.Status; st != nil && !sched.IsDeleted() {
			if st.ScaleCeiling != nil && st.ScaleCeiling.Capacity != nil {
				mc.ceiling = st.ScaleCeiling.Capacity
			}
			mc.reservations = append([]string(nil), st.PendingAssignedClusters...)
		}
		s.mcs = append(s.mcs, mc)
	}
	return s
}

// candidates are the MCs as placement would be given them by a cache holding the view.
func (v *feedView) candidates() []placement.Candidate {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.decodeLocked()
	out := make([]placement.Candidate, 0, len(v.mcs))
	for key, mc := range v.mcs {
		if mc.IsDeleted() {
			continue
		}
		out = append(out, placement.Candidate{ManagementCluster: mc, Scheduling: v.schedulings[key]})
	}
	return out
}

// managementCluster is the view's copy of an MC, nil when it has none.
func (v *feedView) managementCluster(key string) *api.ManagementCluster {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.decodeLocked()
	return v.mcs[key]
}

// counts are what the view read, for the run's summary.
func (v *feedView) counts() (pages, errors, malformed int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.decodeLocked()
	return v.pages, v.errors, v.malformed
}

// ended: the cluster is deleting or in a provisioning state that ends its life, as the
// backend judges it.
func ended(c *api.Cluster) bool {
	p := c.Properties.ServiceProvider()
	switch p.ProvisioningState {
	case api.ProvisioningStateFailed, api.ProvisioningStateCanceled, api.ProvisioningStateDeleting:
		return true
	}
	return c.IsDeleted() || p.DeletionTimestamp != nil
}

// sleepCtx waits d, false if ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
