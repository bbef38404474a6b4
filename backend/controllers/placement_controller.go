package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/backend/candidates"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// PlacementName names the controller in metrics and logs.
const PlacementName = "Placement"

// Placement defaults.
const (
	// DefaultPlacementWorkers: placements run in parallel; two placements collide only
	// on the same MC's scheduling document, where the etag decides (docs/placement.md).
	DefaultPlacementWorkers = 20
	// DefaultPlacementRequeueAfter is how soon a cluster that fits nowhere is evaluated
	// again when nothing woke it first. The WaitingRoom wakes it on every MC change that
	// could make it fit (docs/placement.md, "Waiting for capacity"), so this is a safety
	// net for what no event announces, such as a report dated in the future becoming
	// believable as the clock catches up.
	DefaultPlacementRequeueAfter = 2 * time.Minute
	// DefaultPlacementConflictRequeue is how soon a placement that lost an etag race on
	// a scheduling document decides again. Its own process's winning write is already in
	// the cache (Assume); another writer's reaches it with the next change-feed poll.
	DefaultPlacementConflictRequeue = 250 * time.Millisecond
)

// The SPC fields Placement writes: the intent, its time and the CapacityAvailable
// condition when it places (or withdraws a vanished MC's intent), the condition alone
// while it waits.
var (
	placementRecordFields = docwrite.Fields{
		"properties.spec.managementClusterResourceID",
		"properties.spec.managementClusterPlacementTime",
		capacityConditionField,
	}
	capacityConditionFields = docwrite.Fields{capacityConditionField}
)

var capacityConditionField = docwrite.ConditionField("properties.status.placement.conditions", placement.ConditionCapacityAvailable)

// placementDefinition: cluster-keyed, woken by cluster and SPC events, by events of
// the MC a cluster's intent names, and by the WaitingRoom when an MC changes so that a
// waiting cluster now fits there.
func placementDefinition() controller.Definition[Env] {
	// p is built by New; Settled, built next, reads its caches and waiting room.
	var p *placementController
	return controller.Definition[Env]{
		Name:       PlacementName,
		FlagPrefix: "placement",
		Defaults:   defaults(DefaultPlacementWorkers, DefaultResyncPeriod, DefaultPlacementRequeueAfter),
		Triggers: func(e Env) []controller.Trigger {
			// An MC event sends back to placement the clusters whose intent names that MC,
			// so a deleted or unregistered MC's not-yet-created clusters are placed again
			// at once.
			intending := keysThroughIndex(e.Caches.ServiceProviderClusters().Lister(), informers.IndexByIntendedManagementCluster,
				api.ManagementClusterResourceType, api.ClusterResourceType)
			return append(clusterKeyed(e.Caches.Clusters(), e.Caches.ServiceProviderClusters()),
				controller.Trigger{Informer: e.Caches.ManagementClusters(), KeyFor: intending},
				controller.Trigger{Informer: e.Waiting, KeyFor: candidates.WakeupKeys})
		},
		New: func(e Env, s controller.Settings) (controller.ReconcileFunc, error) {
			var err error
			if p, err = newPlacement(e, s); err != nil {
				return nil, err
			}
			return p.reconcile, nil
		},
		Settled: func(Env) func(string) bool { return p.settled },
	}
}

func newPlacement(e Env, s controller.Settings) (*placementController, error) {
	if e.Snapshot == nil || e.Waiting == nil {
		return nil, errors.New("placement needs the candidates snapshot and its waiting room")
	}
	metrics := e.PlacementMetrics
	if metrics == nil {
		m, err := NewPlacementMetrics(prometheus.NewRegistry())
		if err != nil {
			return nil, err
		}
		metrics = m
	}
	p := &placementController{
		clusters:     e.Caches.Clusters().Lister(),
		spcs:         e.Caches.ServiceProviderClusters().Lister(),
		mcs:          e.Caches.ManagementClusters().Lister(),
		schedulings:  e.Caches.ManagementClusterSchedulings().Lister(),
		snapshot:     e.Snapshot,
		waiting:      e.Waiting,
		fleet:        e.Fleet,
		spcWriter:    e.serviceProviderClusterWriter(),
		reservations: e.schedulingWriter(),
		cs:           e.ClusterService,
		metrics:      metrics,
		requeueAfter: s.RequeueAfter,
		now:          e.now(),
		prefer:       e.PreferMC,
	}
	return p, nil
}

// placementController chooses the MC for each new cluster, reserves capacity on it and
// records the choice in the SPC's spec. See docs/placement.md.
type placementController struct {
	clusters    *informers.Lister[api.ClusterProperties]
	spcs        *informers.Lister[api.ServiceProviderClusterProperties]
	mcs         *informers.Lister[api.ManagementClusterProperties]
	schedulings *informers.Lister[api.ManagementClusterSchedulingProperties]
	// snapshot is the engine's view of the caches; waiting holds the clusters that fit
	// nowhere until an MC changes so that they fit.
	snapshot *candidates.Snapshot
	waiting  *candidates.WaitingRoom
	// fleet is for the point reads that check a decision at apply time.
	fleet        database.Container
	spcWriter    docwrite.Writer[api.ServiceProviderClusterProperties]
	reservations docwrite.Writer[api.ManagementClusterSchedulingProperties]
	// reserving serialises this process's reservations per scheduling document.
	reserving keyedLocks
	// cs is asked only before withdrawing a vanished MC's intent (placement_replacement.go).
	cs           clusterservice.Clusters
	metrics      *PlacementMetrics
	requeueAfter time.Duration
	now          func() time.Time
	prefer       func(mcKey string) bool
}

// settled is Placement's event filter: the cluster waits for no capacity, and a pass
// would return at once because it is placed on an MC the cache holds with a provision
// shard, or Cluster Service has it already, or it ended. A cluster not placed yet, or
// whose intended MC the cache lacks (the pass asks the store), is never settled.
func (p *placementController) settled(key string) bool {
	if p.waiting.Holds(key) {
		return false
	}
	cluster, rid, err := cachedCluster(p.clusters, key)
	if err != nil || cluster == nil {
		return false
	}
	spc, err := cachedServiceProviderCluster(p.spcs, rid)
	if err != nil || spc == nil || api.ClusterDeleting(cluster) {
		return false
	}
	if spc.Properties.IntendedManagementCluster() != "" {
		return p.intentStands(cluster, spc)
	}
	return cluster.Properties.ServiceProvider().ClusterServiceID != "" || api.ClusterEnded(cluster)
}

func (p *placementController) reconcile(ctx context.Context, key string) (controller.Result, error) {
	// Whatever this pass finds, the cluster is not waiting any more unless it says so.
	p.waiting.Leave(key)
	cluster, rid, err := cachedCluster(p.clusters, key)
	if err != nil || cluster == nil {
		return controller.Result{}, err
	}
	spc, err := cachedServiceProviderCluster(p.spcs, rid)
	if err != nil {
		return controller.Result{}, err
	}
	if spc == nil || api.ClusterDeleting(cluster) {
		return controller.Result{}, nil
	}
	// needsWork: an SPC without intent, or one whose intended MC vanished before Cluster
	// Service got the cluster (the one case where spec changes, docs/placement.md).
	if spc.Properties.IntendedManagementCluster() != "" {
		return p.replaceIfIntendedVanished(ctx, cluster, spc)
	}
	// A cluster Cluster Service already has is never placed afresh: ClusterServiceAdoption
	// takes its intent from where CS put it. A pending ID alone does not say CS has the
	// cluster (docs/placement.md, "Clusters Cluster Service already has").
	if cluster.Properties.ServiceProvider().ClusterServiceID != "" || api.ClusterEnded(cluster) {
		return controller.Result{}, nil
	}
	logger := controller.LoggerFrom(ctx)

	want := placement.ClusterOf(rid.String(), cluster)
	// In the room before the snapshot is read: an MC change after the read wakes the
	// cluster, and one before it is in what the decision sees.
	p.waiting.Wait(key, want)
	decision, release := p.decide(want)
	defer release()

	if decision.Chosen == nil {
		p.metrics.count(decision.Outcome)
		logger.Info("no management cluster fits; waiting for capacity", "outcome", decision.Outcome, "reason", decision.Message())
		if err := p.recordWait(ctx, spc, decision); err != nil {
			return controller.Result{}, err
		}
		return controller.Result{RequeueAfter: p.requeueAfter}, nil
	}
	p.waiting.Leave(key)

	chosen := decision.Chosen
	if decision.Reused {
		// The decision counted this cluster's reservation as already paid for, from the
		// cache; the plan is checked at apply time against the stored document, or a
		// reservation dropped since would leave the cluster placed on capacity nobody holds.
		stands, err := p.reservationStands(ctx, chosen.Scheduling, rid)
		if err != nil {
			p.metrics.count(placement.OutcomeError)
			return controller.Result{}, err
		}
		if !stands {
			p.metrics.count(placement.OutcomeConflict)
			logger.Info("the reservation the decision reused is gone from the stored scheduling document; deciding again",
				"managementCluster", chosen.ID())
			return controller.Result{RequeueAfter: DefaultPlacementConflictRequeue}, nil
		}
	} else {
		reserved, err := p.reserve(ctx, chosen.Scheduling, rid)
		if err != nil {
			p.metrics.count(placement.OutcomeError)
			return controller.Result{}, err
		}
		if !reserved {
			p.metrics.count(placement.OutcomeConflict)
			return controller.Result{RequeueAfter: DefaultPlacementConflictRequeue}, nil
		}
	}
	// The chosen MC's scheduling document is written (or checked): other workers may
	// reserve on it again.
	release()
	// From here a crash leaves a reservation that the next attempt reuses, or that
	// PendingCleanup drops once the SPC says the cluster went elsewhere.
	placedAt, recorded, err := p.record(ctx, spc, chosen.ManagementCluster.ResourceID, decision)
	if err != nil {
		p.metrics.count(placement.OutcomeError)
		return controller.Result{}, err
	}
	if !recorded {
		// The SPC changed since it was cached (another replica placed it, or the cluster
		// went away): the next look decides again from the newer copy, and a reservation
		// of ours that is now stale is PendingCleanup's.
		p.metrics.count(placement.OutcomeConflict)
		return lostRace(ctx, spc.ResourceID), nil
	}
	p.metrics.count(placement.OutcomePlaced)
	p.metrics.placed(cluster, placedAt)
	logger.Info("placed", "managementCluster", chosen.ManagementCluster.ResourceID, "reusedReservation", decision.Reused)
	return controller.Result{}, nil
}

// localRedecisions bounds how often one pass decides again because another worker of
// this process wrote the chosen MC's scheduling document while the pass waited for it.
// Each such write is in the snapshot at once (Assume), so a new decision sees it; the
// bound only stops a pass from chasing an MC that keeps changing.
const localRedecisions = 5

// decide runs the engine on the current snapshot and, when it chooses an MC, returns
// holding that MC's reservation lock, with the cached scheduling document unchanged
// since the decision read it. Without the lock, workers that chose one MC at once all
// sent a write guarded by the same etag, and all but the first got a 412, a wasted
// request and a requeue: most of the 412s of a burst. The lock serialises this
// process's writers of one MC only; another process (the fleet, another replica) still
// meets the etag at the store. release is idempotent and never nil.
func (p *placementController) decide(want placement.Cluster) (placement.Decision, func()) {
	for attempt := 0; ; attempt++ {
		start := time.Now()
		view := p.snapshot.Current()
		decision := p.preferOwn(want, view, view.Model.Decide(want, view.MCs, p.now()))
		p.metrics.decision.Observe(time.Since(start).Seconds())
		if decision.Chosen == nil || decision.Chosen.Scheduling == nil {
			return decision, func() {}
		}
		id := decision.Chosen.Scheduling.ResourceID
		release := p.reserving.lock(strings.ToLower(id))
		current, err := p.schedulings.Get(id)
		if err != nil || current == nil || current.ETag == decision.Chosen.Scheduling.ETag || attempt >= localRedecisions {
			// Unchanged, or gone from the cache, or chased long enough: the write's
			// If-Match is the judge.
			return decision, release
		}
		release()
	}
}

// reservationStands reads the stored scheduling document the decision reused a
// reservation from: the cached copy may show a reservation that was dropped since.
func (p *placementController) reservationStands(ctx context.Context, cached *api.ManagementClusterScheduling, cluster *api.ResourceID) (bool, error) {
	stored, err := database.Get[api.ManagementClusterSchedulingProperties](ctx, p.fleet, cached.PartitionKey, cached.ResourceID)
	switch {
	case errors.Is(err, database.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading scheduling document %s to check the reused reservation: %w", cached.ResourceID, err)
	}
	if stored.ETag == cached.ETag {
		return true, nil
	}
	st := stored.Properties.Status
	return st != nil && holdsReservation(st.PendingAssignedClusters, cluster), nil
}

func holdsReservation(pending []string, cluster *api.ResourceID) bool {
	for _, entry := range pending {
		if api.ResourceIDsEqual(entry, cluster.String()) {
			return true
		}
	}
	return false
}

// reserve appends the cluster to the chosen MC's pendingAssignedClusters, in a patch under
// the etag of the very scheduling document the decision read. false means another writer changed
// it first (412): the decision is void.
//
// On a lost race the stored document is read into the cache (docwrite.Writer.Refresh).
// This process's own writes are in the cache already and serialised per MC (decide), so
// the writer was another process, nearly always the fleet mirroring a capacity report;
// until the change feed brought that write, every reservation on the MC met the same
// 412. With the read, the next decision on the MC, this cluster's or another's, is made
// from what the store holds.
func (p *placementController) reserve(ctx context.Context, sched *api.ManagementClusterScheduling, cluster *api.ResourceID) (bool, error) {
	res, err := p.reservations.Update(ctx, sched, reservationFields, func(s *api.ManagementClusterScheduling) error {
		s.Properties.Status.PendingAssignedClusters = append(s.Properties.Status.PendingAssignedClusters, cluster.Key())
		return nil
	})
	if err == nil && res.Outcome == docwrite.LostRace {
		if err := p.reservations.Refresh(ctx, sched); err != nil {
			// Only sooner than the change feed: the decision is void either way.
			controller.LoggerFrom(ctx).Warn("could not read the scheduling document after a lost race; the change feed will bring it",
				"managementCluster", sched.ResourceID, "error", err)
		}
	}
	return res.Outcome == docwrite.Written, err
}

// record writes the intent, the placement time and the condition in one Replace of the
// cached SPC, and returns the placement time it wrote. false means the SPC changed since
// it was cached.
func (p *placementController) record(ctx context.Context, spc *api.ServiceProviderCluster, mc string, d placement.Decision) (time.Time, bool, error) {
	// ARO-HCP's own timestamps carry 100 ns ticks; whole seconds would hide every
	// placement latency below a second from the metrics and the benchmark.
	t := p.now().UTC().Truncate(100 * time.Nanosecond)
	res, err := p.spcWriter.Update(ctx, spc, placementRecordFields, func(s *api.ServiceProviderCluster) error {
		if s.Properties.Spec == nil {
			s.Properties.Spec = &api.ServiceProviderClusterSpec{}
		}
		s.Properties.Spec.ManagementClusterResourceID = strings.ToLower(mc)
		s.Properties.Spec.ManagementClusterPlacementTime = t
		setCapacityCondition(s, api.ConditionTrue, placement.ConditionReasonAvailable, d.Message(), t)
		return nil
	})
	return t, res.Outcome == docwrite.Written, err
}

// recordWait says why nothing fits, writing only when the condition changes; a lost
// race is left to the next evaluation, which comes after the wait anyway.
func (p *placementController) recordWait(ctx context.Context, spc *api.ServiceProviderCluster, d placement.Decision) error {
	_, err := p.spcWriter.Update(ctx, spc, capacityConditionFields, func(s *api.ServiceProviderCluster) error {
		setCapacityCondition(s, api.ConditionFalse, d.Outcome.ConditionReason(), d.Message(), p.now())
		return nil
	})
	return err
}

// setCapacityCondition sets status.placement.conditions[CapacityAvailable]; whether it
// changed is docwrite's to see.
func setCapacityCondition(spc *api.ServiceProviderCluster, status, reason, message string, at time.Time) {
	if spc.Properties.Status == nil {
		spc.Properties.Status = &api.ServiceProviderClusterStatus{}
	}
	if spc.Properties.Status.Placement == nil {
		spc.Properties.Status.Placement = &api.PlacementStatus{}
	}
	api.SetCondition(&spc.Properties.Status.Placement.Conditions, api.Condition{
		Type: placement.ConditionCapacityAvailable, Status: status, Reason: reason, Message: message,
	}, at)
}

// preferOwn decides again among the preferred MCs when the best MC overall is not one
// of them (and the decision reuses no reservation): leaderless replicas then reserve
// mostly on MCs of their own shards instead of all racing for the same best one. When
// none of them fits, the overall decision stands.
func (p *placementController) preferOwn(want placement.Cluster, view *candidates.View, d placement.Decision) placement.Decision {
	if p.prefer == nil || d.Chosen == nil || d.Reused || p.prefer(d.Chosen.ID()) {
		return d
	}
	own := make([]*placement.MC, 0, len(view.MCs))
	for _, mc := range view.MCs {
		if p.prefer(mc.ID()) {
			own = append(own, mc)
		}
	}
	if len(own) == 0 {
		return d
	}
	if mine := view.Model.Decide(want, own, p.now()); mine.Chosen != nil {
		return mine
	}
	return d
}
