package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/backend/clusterbody"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// ClusterServiceCreateName labels the controller's metrics and logs.
const ClusterServiceCreateName = "ClusterServiceCreate"

// clusterServiceIDFields is what ClusterServiceCreate writes: the created (or adopted)
// ID, and the pending one cleared in the same write.
var clusterServiceIDFields = docwrite.Fields{
	"properties.serviceProviderProperties.clusterServiceID",
	"properties.serviceProviderProperties.pendingClusterServiceID",
}

// clusterServiceCreateDefinition: cluster-keyed, triggered by the cluster and SPC
// informers (the SPC update that records placement, or the desired version, is what ends
// a deferral) and by the subscription informer, whose events reach every cluster in the
// subscription: a tenant arriving ends the wait for it. ids are the pending IDs this
// process minted and sent no create under (nil: none, so every create searches first).
func clusterServiceCreateDefinition(ids *unsentIDs) controller.Definition[Env] {
	// r is built by New; Settled, built next, reads its waits and unsent IDs.
	var r *clusterServiceCreate
	return controller.Definition[Env]{
		Name:       ClusterServiceCreateName,
		FlagPrefix: "cluster-service-create",
		Defaults:   defaults(DefaultCreationFlowWorkers, DefaultResyncPeriod, 0),
		Triggers: func(e Env) []controller.Trigger {
			return append(clusterKeyed(e.Caches.Clusters(), e.Caches.ServiceProviderClusters()), controller.Trigger{
				Informer: e.Caches.Subscriptions(),
				KeyFor: keysThroughIndex(e.Caches.Clusters().Lister(), informers.IndexBySubscription,
					api.SubscriptionResourceType, api.ClusterResourceType),
			})
		},
		New: func(e Env, _ controller.Settings) (controller.ReconcileFunc, error) {
			waits := e.CreationWaits
			if waits == nil {
				w, err := NewCreationWaits(prometheus.NewRegistry())
				if err != nil {
					return nil, err
				}
				waits = w
			}
			r = &clusterServiceCreate{
				clusters:      e.Caches.Clusters().Lister(),
				spcs:          e.Caches.ServiceProviderClusters().Lister(),
				subscriptions: e.Caches.Subscriptions().Lister(),
				mcs:           e.Caches.ManagementClusters().Lister(),
				writer:        e.clusterWriter(),
				cs:            e.ClusterService,
				waits:         waits,
				unsent:        ids.unlessKeysMove(e),
			}
			return r.reconcile, nil
		},
		Settled: func(Env) func(string) bool { return r.settled },
	}
}

// clusterServiceCreate creates the cluster in Cluster Service, pinned to the provision
// shard of the management cluster placement chose. Without the pin Cluster Service
// would pick a shard itself and placement would be mere advice.
type clusterServiceCreate struct {
	clusters      *informers.Lister[api.ClusterProperties]
	spcs          *informers.Lister[api.ServiceProviderClusterProperties]
	subscriptions *informers.Lister[api.SubscriptionProperties]
	mcs           *informers.Lister[api.ManagementClusterProperties]
	writer        docwrite.Writer[api.ClusterProperties]
	cs            clusterservice.Clusters
	waits         *CreationWaits
	// unsent are the pending IDs this process minted and sent no create under: for them
	// the adoption search is skipped (unsent_ids.go).
	unsent *unsentIDs
}

// needsClusterServiceCluster: a live cluster, not Failed or Canceled, with a pending
// Cluster Service ID and no Cluster Service ID yet. A terminal state in the cache is
// authoritative (it only ever follows a live one), and a cluster in it has nothing
// left to create.
func needsClusterServiceCluster(cluster *api.Cluster) bool {
	p := cluster.Properties.ServiceProvider()
	return !api.ClusterDeleting(cluster) && !api.ClusterEnded(cluster) && p.PendingClusterServiceID != "" && p.ClusterServiceID == ""
}

// settled is the controller's event filter: the cluster is cached and has nothing left
// to create, and the reconcile's no-op branch has nothing left to clear (no wait
// recorded, no unsent ID).
func (r *clusterServiceCreate) settled(key string) bool {
	cluster, _, err := cachedCluster(r.clusters, key)
	if err != nil || cluster == nil || needsClusterServiceCluster(cluster) {
		return false
	}
	return r.waits.Reason(key) == "" && !r.unsent.holds(key)
}

// The steps follow ARO-HCP's own create controller: the SPC and its desired version
// first, then the tenant, the adoption search, the placement gate, and the pinned POST.
func (r *clusterServiceCreate) reconcile(ctx context.Context, key string) (controller.Result, error) {
	cluster, rid, err := cachedCluster(r.clusters, key)
	if err != nil {
		return controller.Result{}, err
	}
	if cluster == nil || !needsClusterServiceCluster(cluster) {
		r.waits.done(key)
		// Nothing left to create. Without a pending ID yet, an entry is a mint whose write
		// is in flight, and stays.
		if cluster == nil || cluster.Properties.ServiceProvider().PendingClusterServiceID != "" {
			r.unsent.forget(key)
		}
		return controller.Result{}, nil
	}
	logger := controller.LoggerFrom(ctx)
	spc, err := cachedServiceProviderCluster(r.spcs, rid)
	if err != nil {
		return controller.Result{}, err
	}
	if spc == nil {
		// CreateServiceProviderCluster writes it next: not a wait an operator needs to see.
		r.waits.done(key)
		logger.Info("deferring Cluster Service creation until the cluster has its ServiceProviderCluster")
		return controller.Result{}, nil
	}
	if spc.Properties.DesiredControlPlaneVersion() == "" {
		return r.wait(ctx, key, WaitDesiredVersion, "waiting for ARO-HCP to choose the control plane version (ServiceProviderCluster spec.control_plane_version.desired_version)")
	}
	tenant, reason, err := r.tenantOf(rid)
	if err != nil {
		return controller.Result{}, err
	}
	if reason != "" {
		return r.wait(ctx, key, reason, "waiting for the subscription's tenant (Subscription properties.properties.tenantId) before creating the cluster in Cluster Service",
			"subscription", api.SubscriptionResourceID(rid.SubscriptionID).String())
	}
	identity := clusterbody.Identity(cluster, tenant)
	if identity.ManagedResourceGroupName == "" {
		return r.wait(ctx, key, WaitManagedResourceGroup, "waiting for the cluster's managed resource group (customerProperties.platform.managedResourceGroup) before creating it in Cluster Service")
	}
	// Past every wait but the document's own, which only Build below decides: a cluster
	// still waiting for a corrected document keeps that reason until then, so that its
	// next wait is not news again.
	r.waits.doneUnless(key, WaitInvalidDocument)
	pending := cluster.Properties.ServiceProvider().PendingClusterServiceID

	// An earlier attempt may have created the cluster and crashed, timed out, or lost a
	// 412, before recording it; adopting what Cluster Service already has makes the
	// create idempotent. Only an ID this process minted and has sent no create under
	// proves that no create can have reached Cluster Service, and skips the search.
	if !r.unsent.unsent(key, pending) {
		existing, err := r.cs.SearchClusters(ctx, identity)
		if err != nil {
			return controller.Result{}, fmt.Errorf("searching Cluster Service for the cluster's Azure identity: %w", err)
		}
		if len(existing) > 0 {
			adopted, err := adoptable(existing, pending)
			if err != nil {
				return controller.Result{}, err
			}
			logger.Info("adopting the cluster Cluster Service already has", "clusterServiceClusterID", adopted.ID())
			return r.recordClusterServiceID(ctx, cluster, adopted.ID())
		}
	}

	mcID := spc.Properties.IntendedManagementCluster()
	if mcID == "" {
		r.waits.done(key)
		logger.Info(deferralMessage)
		return controller.Result{}, nil
	}
	shardID, err := r.provisionShardOf(mcID)
	if err != nil {
		return controller.Result{}, err
	}
	body, err := clusterbody.Build(clusterbody.Input{Cluster: cluster, SPC: spc, TenantID: tenant, ShardID: shardID})
	if err != nil {
		return r.wait(ctx, key, WaitInvalidDocument, "the cluster document cannot be created in Cluster Service until it is corrected", "error", err)
	}
	r.waits.done(key)
	// From the send on, the outcome may be unknown: every later attempt searches first.
	r.unsent.sending(key)
	created, err := r.cs.CreatePinnedCluster(ctx, body, shardID)
	if errors.Is(err, clusterservice.ErrConflict) {
		return controller.Result{}, fmt.Errorf("creating the cluster in Cluster Service (an earlier attempt may have created it; the retry adopts it): %w", err)
	}
	if err != nil {
		return controller.Result{}, fmt.Errorf("creating the cluster in Cluster Service: %w", err)
	}
	if created.ID() != body.ID() {
		// ARO-HCP chose the ID so that a retry finds the same cluster; one under another
		// ID would be bound to nothing. Left for a human, retried with back-off.
		return controller.Result{}, fmt.Errorf("the cluster was created in Cluster Service as %q, not under the pre-assigned ID %q", created.ID(), body.ID())
	}
	logger.Info("created the cluster in Cluster Service, pinned to the placed management cluster",
		"clusterServiceClusterID", created.ID(), "provisionShardID", shardID, "managementClusterResourceID", mcID)
	return r.recordClusterServiceID(ctx, cluster, created.ID())
}

// deferralMessage is logged while placement has not chosen a management cluster.
const deferralMessage = "deferring Cluster Service creation until placement is resolved"

// wait records why the cluster waits and logs it. The result has no requeue: the write
// that ends the wait is an event.
func (r *clusterServiceCreate) wait(ctx context.Context, key, reason, msg string, args ...any) (controller.Result, error) {
	// Every event of a waiting cluster reconciles it again (ARO-HCP writes the cluster
	// several times before it chooses a version): the wait is news once, when it starts.
	level := slog.LevelDebug
	if r.waits.wait(key, reason) {
		level = slog.LevelInfo
	}
	controller.LoggerFrom(ctx).Log(ctx, level, msg, append([]any{"reason", reason}, args...)...)
	return controller.Result{}, nil
}

// tenantOf reads the cluster's tenant from its cached Subscription document, or returns
// why there is none yet.
func (r *clusterServiceCreate) tenantOf(cluster *api.ResourceID) (tenant, waitReason string, err error) {
	sub, err := r.subscriptions.Get(api.SubscriptionResourceID(cluster.SubscriptionID).String())
	if errors.Is(err, database.ErrNotFound) {
		return "", WaitSubscription, nil
	}
	if err != nil {
		return "", "", err
	}
	if sub.IsDeleted() {
		return "", WaitSubscription, nil
	}
	if t := sub.Properties.TenantID(); t != "" {
		return t, "", nil
	}
	return "", WaitSubscriptionTenant, nil
}

// adoptable picks the Cluster Service cluster to adopt: the one created under the
// pending ID if there is one, else the only match. Several foreign matches are left for
// a human: adopting the wrong one would bind the cluster to someone else's.
func adoptable(matches []*arohcp.Cluster, pendingHREF string) (*arohcp.Cluster, error) {
	for _, m := range matches {
		if href, err := clusterservice.ClusterHREF(m.ID()); err == nil && href == pendingHREF {
			return m, nil
		}
	}
	if len(matches) == 1 {
		return matches[0], nil
	}
	ids := make([]string, len(matches))
	for i, m := range matches {
		ids[i] = m.ID()
	}
	return nil, fmt.Errorf("%d Cluster Service clusters match the cluster's Azure identity (%v); refusing to guess which to adopt", len(matches), ids)
}

// provisionShardOf resolves the bare provision shard ID of a management cluster from
// the cache. A missing MC or shard is an error, retried with back-off: placement only
// chooses registered MCs, so either the cache lags or the fleet's data is broken.
func (r *clusterServiceCreate) provisionShardOf(mcID string) (string, error) {
	mc, err := r.mcs.Get(mcID)
	if err != nil {
		return "", fmt.Errorf("management cluster %s chosen by placement: %w", mcID, err)
	}
	href := provisionShard(mc)
	if href == "" {
		return "", fmt.Errorf("management cluster %s has no status.clusterServiceProvisionShardID yet", mcID)
	}
	shardID, err := clusterservice.ParseShardHREF(href)
	if err != nil {
		return "", fmt.Errorf("management cluster %s: %w", mcID, err)
	}
	return shardID, nil
}

// recordClusterServiceID moves the cluster from pending to created: clusterServiceID is
// set and pendingClusterServiceID cleared, in one etag-guarded write.
func (r *clusterServiceCreate) recordClusterServiceID(ctx context.Context, cluster *api.Cluster, csID string) (controller.Result, error) {
	href, err := clusterservice.ClusterHREF(csID)
	if err != nil {
		return controller.Result{}, fmt.Errorf("recording Cluster Service cluster ID %q: %w", csID, err)
	}
	res, err := r.writer.Update(ctx, cluster, clusterServiceIDFields, func(c *api.Cluster) error {
		c.Properties.ServiceProviderProperties.ClusterServiceID = href
		c.Properties.ServiceProviderProperties.PendingClusterServiceID = ""
		return nil
	})
	if err != nil {
		return controller.Result{}, err
	}
	if res.Outcome == docwrite.LostRace {
		return lostRace(ctx, cluster.ResourceID), nil
	}
	controller.LoggerFrom(ctx).Info("recorded Cluster Service ID", "clusterServiceID", href)
	return controller.Result{}, nil
}
