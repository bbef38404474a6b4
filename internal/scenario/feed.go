package scenario

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// feedPageSize keeps the feed's pages small, so that a sample follows each few changes
// rather than each few hundred.
const feedPageSize = 25

// feedView follows the Resources and Fleet change feeds itself and keeps the latest
// version of every cluster, SPC, MC and scheduling document. It shares no code with the
// informers under test (no instanceVersion gate, no relist, no Assume): a checker that
// saw the region through hcpsched's caches would miss what those caches miss. After every
// page that changed something it calls onPage, which is where the invariants are sampled.
type feedView struct {
	resources, fleet database.Container
	interval         time.Duration
	logger           *slog.Logger
	onPage           func()

	mu          sync.Mutex
	clusters    map[string]*api.Cluster
	spcs        map[string]*api.ServiceProviderCluster // by the cluster's key
	mcs         map[string]*api.ManagementCluster
	schedulings map[string]*api.ManagementClusterScheduling // by the MC's key
	pages       int
	errors      int
	malformed   int
	// rounds counts the polls that read every feed to its end.
	rounds int
}

func newFeedView(store database.Store, interval time.Duration, logger *slog.Logger) *feedView {
	return &feedView{
		resources: store.Container(api.ResourcesContainer), fleet: store.Container(api.FleetContainer),
		interval: interval, logger: logger, onPage: func() {},
		clusters: map[string]*api.Cluster{}, spcs: map[string]*api.ServiceProviderCluster{},
		mcs: map[string]*api.ManagementCluster{}, schedulings: map[string]*api.ManagementClusterScheduling{},
	}
}

type feedCursor struct {
	container    database.Container
	r            database.FeedRange
	continuation string
}

// Run reads the feeds from their beginning until ctx ends; a failed read is counted and
// retried on the next poll.
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
	for {
		complete := true
		for _, cur := range cursors {
			if !v.drain(ctx, cur) {
				complete = false
			}
		}
		if complete {
			v.mu.Lock()
			v.rounds++
			v.mu.Unlock()
		}
		if !sleepCtx(ctx, v.interval) {
			return
		}
	}
}

// drain reads one feed range to its end; false when a read failed.
func (v *feedView) drain(ctx context.Context, cur *feedCursor) bool {
	for {
		opts := database.ChangeFeedOptions{FeedRange: &cur.r, Continuation: cur.continuation, MaxItemCount: feedPageSize}
		if cur.continuation == "" {
			opts.Start = database.FromBeginning
		}
		page, err := cur.container.ChangeFeed(ctx, opts)
		if err != nil {
			if ctx.Err() == nil {
				v.failed(cur.container, err)
			}
			return false
		}
		cur.continuation = page.Continuation
		if page.NotModified || len(page.Items) == 0 {
			return true
		}
		v.apply(page.Items)
		v.onPage()
	}
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
		var err error
		switch {
		case strings.EqualFold(resourceType, api.ClusterResourceType):
			err = keep(v.clusters, item, func(rid *api.ResourceID) string { return rid.Key() })
		case strings.EqualFold(resourceType, api.ServiceProviderClusterResourceType):
			err = keep(v.spcs, item, func(rid *api.ResourceID) string { return rid.Parent().Key() })
		case strings.EqualFold(resourceType, api.ManagementClusterResourceType):
			err = keep(v.mcs, item, func(rid *api.ResourceID) string { return rid.Key() })
		case strings.EqualFold(resourceType, api.ManagementClusterSchedulingResourceType):
			err = keep(v.schedulings, item, func(rid *api.ResourceID) string { return rid.Parent().Key() })
		}
		if err != nil {
			v.malformed++
			v.logger.Warn("the checker could not decode a document from the change feed", "id", item.ID, "error", err.Error())
		}
	}
}

// keep stores the item's latest version; within a partition the feed delivers changes in
// order, and every document lives in one partition, so the latest delivered is the latest.
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

// round is how many complete polls the view has made; waiting for it to move on twice
// means the view holds every change made before the wait began.
func (v *feedView) round() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.rounds
}

// waitRounds waits until n more complete polls have been made.
func (v *feedView) waitRounds(ctx context.Context, n int) bool {
	target := v.round() + n
	for v.round() < target {
		if !sleepCtx(ctx, v.interval/2) {
			return false
		}
	}
	return true
}

// snapshot is the view's state as the ceiling check reads it. singleReplica says, for the
// clusters the run created, whether they are single-replica; others are learnt from their
// documents.
func (v *feedView) snapshot(at time.Duration, singleReplica func(key string) (bool, bool)) snapshot {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := snapshot{at: at, clusters: make(map[string]clusterState, len(v.spcs))}
	state := func(key string) clusterState {
		c := s.clusters[key]
		if single, ours := singleReplica(key); ours {
			c.singleReplica, c.known = single, true
		}
		if doc, ok := v.clusters[key]; ok {
			if !c.known {
				f := doc.Properties.ServiceProvider().ExperimentalFeatures
				c.singleReplica, c.known = f != nil && f.SingleReplica == api.SingleReplica, true
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
	return v.mcs[key]
}

// counts are what the view read, for the run's summary.
func (v *feedView) counts() (pages, errors, malformed int) {
	v.mu.Lock()
	defer v.mu.Unlock()
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
