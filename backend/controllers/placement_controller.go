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
	// again, so it is placed within this long of capacity appearing.
	DefaultPlacementRequeueAfter = 30 * time.Second
	// DefaultPlacementConflictRequeue is how soon a placement that lost an etag race on
	// a scheduling document decides again. Its own process's winning write is already in
	// the cache (Assume); another writer's reaches it with the next change-feed poll.
	DefaultPlacementConflictRequeue = 250 * time.Millisecond
)

// placementController chooses the MC for each new cluster, reserves capacity on it and
// records the choice in the SPC's spec. See docs/placement.md.
type placementController struct {
	d        Deps
	s        Settings
	clusters *informers.Lister[api.ClusterProperties]
	spcs     *informers.Lister[api.ServiceProviderClusterProperties]
	mcs      *informers.Lister[api.ManagementClusterProperties]
}

// NewPlacement builds the PlacementController, cluster-keyed, woken by cluster and SPC
// events, and by events of the MC a cluster's intent names.
func NewPlacement(d Deps, s Settings) (*controller.Controller, error) {
	if len(d.Placement.Resources) == 0 {
		d.Placement = placement.DefaultConfig()
	}
	if err := d.Placement.Validate(); err != nil {
		return nil, err
	}
	if d.PlacementMetrics == nil {
		m, err := NewPlacementMetrics(prometheus.NewRegistry())
		if err != nil {
			return nil, err
		}
		d.PlacementMetrics = m
	}
	p := &placementController{
		d: d, s: s,
		clusters: d.Informers.Clusters.Lister(),
		spcs:     d.Informers.ServiceProviderClusters.Lister(),
		mcs:      d.Informers.ManagementClusters.Lister(),
	}
	c, err := newClusterKeyed(d, PlacementName, s, p.reconcile, d.Informers.Clusters, d.Informers.ServiceProviderClusters)
	if err != nil {
		return nil, err
	}
	// An MC event sends back to placement the clusters whose intent names that MC, so a
	// deleted or unregistered MC's not-yet-created clusters are placed again at once.
	intending := keysThroughIndex(p.spcs, informers.IndexByIntendedManagementCluster, api.ManagementClusterResourceType, api.ClusterResourceType)
	if err := c.Watch(d.Informers.ManagementClusters, intending); err != nil {
		return nil, err
	}
	return c, nil
}

// terminal provisioning states end a cluster's life without a control plane to place.
func terminal(c *api.Cluster) bool {
	switch c.Properties.ServiceProvider().ProvisioningState {
	case api.ProvisioningStateFailed, api.ProvisioningStateCanceled:
		return true
	}
	return false
}

func (p *placementController) reconcile(ctx context.Context, key string) (controller.Result, error) {
	cluster, rid, err := cachedCluster(p.clusters, key)
	if err != nil || cluster == nil {
		return controller.Result{}, err
	}
	spc, err := cachedServiceProviderCluster(p.spcs, rid)
	if err != nil {
		return controller.Result{}, err
	}
	if spc == nil || deleting(cluster) {
		return controller.Result{}, nil
	}
	// needsWork: an SPC without intent, or one whose intended MC vanished before Cluster
	// Service got the cluster (the one case where spec changes, docs/placement.md).
	if spc.Properties.IntendedManagementCluster() != "" {
		return p.replaceIfIntendedVanished(ctx, cluster, spc)
	}
	if placement.UnmappableRecorded(cluster, spc) {
		return controller.Result{}, nil
	}
	logger := controller.LoggerFrom(ctx)

	// Old records: a cluster Cluster Service already has is never placed afresh; its
	// intent is where CS put it.
	existing, state, err := p.existingClusterServiceCluster(ctx, cluster)
	if err != nil {
		p.d.PlacementMetrics.count(placement.OutcomeError)
		return controller.Result{}, err
	}
	switch state {
	case clusterServiceKnows:
		return p.adopt(ctx, spc, existing)
	case clusterServiceUnmappable:
		return p.recordUnmappable(ctx, cluster, spc)
	}
	if terminal(cluster) {
		return controller.Result{}, nil
	}

	source := candidates.Source{ManagementClusters: p.mcs, ManagementClusterSchedulings: p.d.Informers.ManagementClusterSchedulings.Lister(), Clusters: p.clusters}
	snapshot := source.Snapshot()
	start := time.Now()
	decision := placement.Decide(placement.Cluster{ResourceID: rid.String(), SingleReplica: candidates.SingleReplica(cluster)},
		snapshot, p.d.Placement, source.SingleReplicaLookup(), p.d.now())
	p.d.PlacementMetrics.decision.Observe(time.Since(start).Seconds())

	if decision.Chosen == nil {
		p.d.PlacementMetrics.count(decision.Outcome)
		logger.Info("no management cluster fits; waiting for capacity", "outcome", decision.Outcome, "reason", decision.Message())
		if err := p.recordWait(ctx, spc, decision); err != nil {
			return controller.Result{}, err
		}
		return controller.Result{RequeueAfter: p.s.RequeueAfter}, nil
	}

	chosen := decision.Chosen
	if decision.Reused {
		// The decision counted this cluster's reservation as already paid for, from the
		// cache; the plan is checked at apply time against the stored document, or a
		// reservation dropped since would leave the cluster placed on capacity nobody holds.
		stands, err := p.reservationStands(ctx, chosen.Scheduling, rid)
		if err != nil {
			p.d.PlacementMetrics.count(placement.OutcomeError)
			return controller.Result{}, err
		}
		if !stands {
			p.d.PlacementMetrics.count(placement.OutcomeConflict)
			logger.Info("the reservation the decision reused is gone from the stored scheduling document; deciding again",
				"managementCluster", chosen.ManagementCluster.ResourceID)
			return controller.Result{RequeueAfter: DefaultPlacementConflictRequeue}, nil
		}
	} else {
		reserved, err := p.reserve(ctx, chosen.Scheduling, rid)
		if err != nil {
			p.d.PlacementMetrics.count(placement.OutcomeError)
			return controller.Result{}, err
		}
		if !reserved {
			p.d.PlacementMetrics.count(placement.OutcomeConflict)
			return controller.Result{RequeueAfter: DefaultPlacementConflictRequeue}, nil
		}
	}
	// From here a crash leaves a reservation that the next attempt reuses, or that
	// PendingCleanup drops once the SPC says the cluster went elsewhere.
	recorded, err := p.record(ctx, spc, chosen.ManagementCluster.ResourceID, decision)
	if err != nil {
		p.d.PlacementMetrics.count(placement.OutcomeError)
		return controller.Result{}, err
	}
	if !recorded {
		// The SPC changed since it was cached (another replica placed it, or the cluster
		// went away): the next look decides again from the newer copy, and a reservation
		// of ours that is now stale is PendingCleanup's.
		p.d.PlacementMetrics.count(placement.OutcomeConflict)
		return lostRace, nil
	}
	p.d.PlacementMetrics.count(placement.OutcomePlaced)
	logger.Info("placed", "managementCluster", chosen.ManagementCluster.ResourceID, "reusedReservation", decision.Reused)
	return controller.Result{}, nil
}

// What Cluster Service knows of a cluster before placement decides.
type clusterServiceState int

const (
	// clusterServiceNew: CS does not have the cluster; placement decides.
	clusterServiceNew clusterServiceState = iota
	// clusterServiceKnows: CS has the cluster; placement adopts its shard.
	clusterServiceKnows
	// clusterServiceUnmappable: the cluster has a clusterServiceID that neither API
	// resolves; hcpsched neither places nor adopts it.
	clusterServiceUnmappable
)

// existingClusterServiceCluster asks Cluster Service where a cluster that it may already
// know lives: one with a clusterServiceID (an aro_hcp one, or a legacy clusters_mgmt one,
// which names the same cluster), or with a pending ID CS has seen (a backend before
// placement created clusters without it). A CS 404 for a pending ID means the cluster is
// new; for a clusterServiceID it means the reference cannot be mapped.
func (p *placementController) existingClusterServiceCluster(ctx context.Context, c *api.Cluster) (clusterservice.Placement, clusterServiceState, error) {
	sp := c.Properties.ServiceProvider()
	href := sp.ClusterServiceID
	if href == "" {
		href = sp.PendingClusterServiceID
	}
	if href == "" {
		return clusterservice.Placement{}, clusterServiceNew, nil
	}
	id, _, err := clusterservice.ParseAnyClusterHREF(href)
	if err != nil {
		if sp.ClusterServiceID != "" {
			return clusterservice.Placement{}, clusterServiceUnmappable, nil
		}
		return clusterservice.Placement{}, clusterServiceNew, fmt.Errorf("pending Cluster Service ID %q: %w", href, err)
	}
	where, err := p.d.ClusterService.GetClusterProvisionShard(ctx, id)
	switch {
	case errors.Is(err, clusterservice.ErrNotFound) && sp.ClusterServiceID == "":
		return clusterservice.Placement{}, clusterServiceNew, nil
	case errors.Is(err, clusterservice.ErrNotFound):
		return clusterservice.Placement{}, clusterServiceUnmappable, nil
	case err != nil:
		return clusterservice.Placement{}, clusterServiceNew, fmt.Errorf("asking Cluster Service where %s is: %w", id, err)
	}
	return where, clusterServiceKnows, nil
}

// recordUnmappable says once, in the SPC condition and the log, that the cluster cannot
// be mapped, and stops: no requeue, since waiting will not change Cluster Service's answer.
// A reservation the cluster holds is released by PendingCleanup on that condition.
func (p *placementController) recordUnmappable(ctx context.Context, c *api.Cluster, spc *api.ServiceProviderCluster) (controller.Result, error) {
	href := c.Properties.ServiceProvider().ClusterServiceID
	update := spc.DeepCopy()
	if !setCapacityCondition(update, api.ConditionFalse, placement.ConditionReasonClusterServiceIDUnmappable, placement.UnmappableMessage(href), p.d.now()) {
		return controller.Result{}, nil
	}
	written, err := p.replaceSPC(ctx, update)
	if err != nil {
		return controller.Result{}, err
	}
	if !written {
		return lostRace, nil
	}
	controller.LoggerFrom(ctx).Warn("cluster has a Cluster Service ID that does not resolve; leaving it unplaced", "clusterServiceID", href)
	return controller.Result{}, nil
}

// reservationStands reads the stored scheduling document the decision reused a
// reservation from: the cached copy may show a reservation that was dropped since.
func (p *placementController) reservationStands(ctx context.Context, cached *api.ManagementClusterScheduling, cluster *api.ResourceID) (bool, error) {
	stored, err := database.Get[api.ManagementClusterSchedulingProperties](ctx, p.d.Fleet, cached.PartitionKey, cached.ResourceID)
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

// adopt sets the intent of a cluster CS already placed to the MC that owns its shard.
func (p *placementController) adopt(ctx context.Context, spc *api.ServiceProviderCluster, where clusterservice.Placement) (controller.Result, error) {
	if !where.Placed() {
		return controller.Result{RequeueAfter: p.s.RequeueAfter}, nil
	}
	href, err := clusterservice.ShardHREF(where.ShardID)
	if err != nil {
		return controller.Result{}, err
	}
	mcs, err := p.mcs.ByIndex(informers.IndexByProvisionShard, strings.ToLower(href))
	if err != nil {
		return controller.Result{}, err
	}
	if len(mcs) != 1 {
		return controller.Result{}, fmt.Errorf("provision shard %s maps to %d management clusters, want 1", where.ShardID, len(mcs))
	}
	update := spc.DeepCopy()
	if update.Properties.Spec == nil {
		update.Properties.Spec = &api.ServiceProviderClusterSpec{}
	}
	// No placement time: hcpsched did not place it, and its latency would be fiction.
	update.Properties.Spec.ManagementClusterResourceID = strings.ToLower(mcs[0].ResourceID)
	setCapacityCondition(update, api.ConditionTrue, placement.ConditionReasonAvailable, "adopted from Cluster Service's placement", p.d.now())
	written, err := p.replaceSPC(ctx, update)
	if err != nil || !written {
		return controller.Result{}, err
	}
	controller.LoggerFrom(ctx).Info("adopted existing placement", "managementCluster", update.Properties.Spec.ManagementClusterResourceID)
	return controller.Result{}, nil
}

// reserve appends the cluster to the chosen MC's pendingAssignedClusters, as a Replace
// of the very scheduling document the decision read. false means another writer changed
// it first (412): the decision is void.
func (p *placementController) reserve(ctx context.Context, sched *api.ManagementClusterScheduling, cluster *api.ResourceID) (bool, error) {
	update := sched.DeepCopy()
	update.Properties.Status.PendingAssignedClusters = append(update.Properties.Status.PendingAssignedClusters, cluster.Key())
	written, err := replaceCopy(ctx, p.d.Fleet, update)
	if err != nil || written == nil {
		return false, err
	}
	p.d.Informers.ManagementClusterSchedulings.Assume(written)
	return true, nil
}

// record writes the intent, the placement time and the condition in one Replace of the
// cached SPC.
func (p *placementController) record(ctx context.Context, spc *api.ServiceProviderCluster, mc string, d placement.Decision) (bool, error) {
	update := spc.DeepCopy()
	if update.Properties.Spec == nil {
		update.Properties.Spec = &api.ServiceProviderClusterSpec{}
	}
	// ARO-HCP's own timestamps carry 100 ns ticks; whole seconds would hide every
	// placement latency below a second from the metrics and the benchmark.
	t := p.d.now().UTC().Truncate(100 * time.Nanosecond)
	update.Properties.Spec.ManagementClusterResourceID = strings.ToLower(mc)
	update.Properties.Spec.ManagementClusterPlacementTime = t
	setCapacityCondition(update, api.ConditionTrue, placement.ConditionReasonAvailable, d.Message(), t)
	return p.replaceSPC(ctx, update)
}

// recordWait says why nothing fits, writing only when the condition changes.
func (p *placementController) recordWait(ctx context.Context, spc *api.ServiceProviderCluster, d placement.Decision) error {
	update := spc.DeepCopy()
	if !setCapacityCondition(update, api.ConditionFalse, d.Outcome.ConditionReason(), d.Message(), p.d.now()) {
		return nil
	}
	_, err := p.replaceSPC(ctx, update)
	return err
}

func (p *placementController) replaceSPC(ctx context.Context, update *api.ServiceProviderCluster) (bool, error) {
	written, err := replaceCopy(ctx, p.d.Resources, update)
	if err != nil || written == nil {
		return false, err
	}
	p.d.Informers.ServiceProviderClusters.Assume(written)
	return true, nil
}

// setCapacityCondition sets status.placement.conditions[CapacityAvailable] and reports
// whether it changed.
func setCapacityCondition(spc *api.ServiceProviderCluster, status, reason, message string, at time.Time) bool {
	if spc.Properties.Status == nil {
		spc.Properties.Status = &api.ServiceProviderClusterStatus{}
	}
	if spc.Properties.Status.Placement == nil {
		spc.Properties.Status.Placement = &api.PlacementStatus{}
	}
	return api.SetCondition(&spc.Properties.Status.Placement.Conditions, api.Condition{
		Type: placement.ConditionCapacityAvailable, Status: status, Reason: reason, Message: message,
	}, at)
}
