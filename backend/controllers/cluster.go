package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// cachedCluster returns the cluster a key names and its parsed resource ID (with the
// casing it was stored with), or nil when the cache no longer holds it: a deleted
// cluster has nothing left to create.
func cachedCluster(clusters *informers.Lister[api.ClusterProperties], key string) (*api.Cluster, *api.ResourceID, error) {
	cluster, err := clusters.Get(key)
	if errors.Is(err, database.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	rid, err := cluster.ParsedResourceID()
	if err != nil {
		return nil, nil, fmt.Errorf("cached cluster %s: %w", key, err)
	}
	return cluster, rid, nil
}

// cachedServiceProviderCluster returns the cluster's SPC, or nil while the cache has
// none; its creation is an event that brings the caller back.
func cachedServiceProviderCluster(spcs *informers.Lister[api.ServiceProviderClusterProperties], cluster *api.ResourceID) (*api.ServiceProviderCluster, error) {
	spc, err := spcs.Get(api.ServiceProviderClusterID(cluster))
	if errors.Is(err, database.ErrNotFound) {
		return nil, nil
	}
	return spc, err
}

// settledUnless is the event filter (controller.Definition.Settled) of a cluster-keyed
// controller whose reconcile reads the cached cluster and SPC, returns at once unless
// needs holds, and keeps no state of its own: a key is settled while its cluster is
// cached and needs is false. A cluster not in the cache is never settled, so that its
// delete still reaches the reconcile.
func settledUnless(needs func(*api.Cluster, *api.ServiceProviderCluster) bool) func(Env) func(key string) bool {
	return func(e Env) func(string) bool {
		clusters, spcs := e.Caches.Clusters().Lister(), e.Caches.ServiceProviderClusters().Lister()
		return func(key string) bool {
			cluster, rid, err := cachedCluster(clusters, key)
			if err != nil || cluster == nil {
				return false
			}
			spc, err := cachedServiceProviderCluster(spcs, rid)
			return err == nil && !needs(cluster, spc)
		}
	}
}

// DefaultConflictRequeue is how soon a controller whose write lost an etag race (412)
// looks at the key again. The change feed normally brings the newer version well before
// (a poll is 1 s by default), the key is reconciled from it at once, and the requeue then
// finds nothing to do; the requeue matters when no newer version comes: a 412 of a gateway
// retry whose first attempt had applied, or an event the feed lost, which the relist would
// otherwise repair only after half an hour. Sooner than a poll, it would mostly repeat the
// write into another 412.
const DefaultConflictRequeue = 2 * time.Second

// lostRace is the result of a reconcile whose write lost an etag race: another writer
// changed the document first, or it is gone. The controller decides again on the newer
// state instead of forcing its write.
func lostRace(ctx context.Context, document string) controller.Result {
	controller.LoggerFrom(ctx).Debug("document changed since it was cached; looking again soon", "document", document)
	return controller.Result{RequeueAfter: DefaultConflictRequeue}
}

// shardOwner is the cached management cluster registered as a Cluster Service provision
// shard, found through the MC cache's shard index. No MC, or several, is an error retried
// with back-off: the fleet records the shard of every MC it registers, so either the
// cache lags or the fleet's data is inconsistent.
func shardOwner(mcs *informers.Lister[api.ManagementClusterProperties], shardID string) (*api.ManagementCluster, error) {
	shardHREF, err := clusterservice.ShardHREF(shardID)
	if err != nil {
		return nil, fmt.Errorf("provision shard reported by Cluster Service: %w", err)
	}
	owners, err := mcs.ByIndex(informers.IndexByProvisionShard, strings.ToLower(shardHREF))
	if err != nil {
		return nil, err
	}
	switch len(owners) {
	case 0:
		return nil, fmt.Errorf("no management cluster is registered as provision shard %s", shardHREF)
	case 1:
		return owners[0], nil
	default:
		ids := make([]string, len(owners))
		for i, mc := range owners {
			ids[i] = mc.ResourceID
		}
		return nil, fmt.Errorf("%d management clusters claim provision shard %s: %v", len(owners), shardHREF, ids)
	}
}
