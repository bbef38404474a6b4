package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
)

// Why an intent was withdrawn, as the replacement counter's reason label.
const (
	ReplacementManagementClusterDeleted = "management_cluster_deleted"
	ReplacementProvisionShardLost       = "provision_shard_lost"
)

// ReasonReplacing is the CapacityAvailable reason while a cluster whose intended MC
// vanished waits to be placed again.
const ReasonReplacing = "Replacing"

// intentStands: the intent of a placed cluster is beyond replacing, because Cluster
// Service has the cluster (or observed where it is), or the intended MC is cached with a
// provision shard. Otherwise only a read of the store can say whether the MC vanished.
func (p *placementController) intentStands(c *api.Cluster, spc *api.ServiceProviderCluster) bool {
	if c.Properties.ServiceProvider().ClusterServiceID != "" || spc.Properties.ObservedManagementCluster() != "" {
		return true
	}
	cached, err := p.mcs.Get(spc.Properties.IntendedManagementCluster())
	return err == nil && provisionShard(cached) != ""
}

// replaceIfIntendedVanished withdraws placement's intent when the intended MC was
// deleted, or lost its provision shard, before Cluster Service got the cluster: the
// cluster could never be created there, and would wait for ever. It is the one case in
// which spec changes (docs/placement.md), decided on authoritative signals only: a point
// read of the MC, and Cluster Service's 404 for the pre-assigned ID. Once CS has the
// cluster, spec never changes. The reservation on the old MC is released first, then the
// intent is cleared; the SPC event that follows places the cluster afresh.
func (p *placementController) replaceIfIntendedVanished(ctx context.Context, c *api.Cluster, spc *api.ServiceProviderCluster) (controller.Result, error) {
	if p.intentStands(c, spc) {
		return controller.Result{}, nil
	}
	sp := c.Properties.ServiceProvider()
	intended := spc.Properties.IntendedManagementCluster()
	// The cache says the MC or its shard is missing; only the store can say so for sure.
	why, err := p.intendedVanished(ctx, intended)
	if err != nil || why == "" {
		return controller.Result{}, err
	}
	logger := controller.LoggerFrom(ctx).With("managementCluster", intended, "why", why)
	if created, err := p.clusterServiceHas(ctx, sp.PendingClusterServiceID); err != nil || created {
		if created {
			logger.Warn("intended management cluster vanished, but Cluster Service already has the cluster; spec stays")
		}
		return controller.Result{}, err
	}
	if released, err := p.release(ctx, intended, c); err != nil || !released {
		if err == nil {
			return lostRace(ctx, "scheduling document of "+intended), nil
		}
		return controller.Result{}, err
	}
	message := fmt.Sprintf("placing again: management cluster %s %s before Cluster Service created the cluster", intended, replacementText(why))
	res, err := p.spcWriter.Update(ctx, spc, placementRecordFields, func(s *api.ServiceProviderCluster) error {
		s.Properties.Spec.ManagementClusterResourceID = ""
		s.Properties.Spec.ManagementClusterPlacementTime = time.Time{}
		setCapacityCondition(s, api.ConditionFalse, ReasonReplacing, message, p.now())
		return nil
	})
	if err != nil {
		return controller.Result{}, err
	}
	if res.Outcome == docwrite.LostRace {
		return lostRace(ctx, spc.ResourceID), nil
	}
	p.metrics.replaced(why)
	logger.Info("withdrew the intent of a cluster whose management cluster vanished; placing it again")
	return controller.Result{}, nil
}

func replacementText(why string) string {
	if why == ReplacementManagementClusterDeleted {
		return "was deleted"
	}
	return "lost its provision shard"
}

func provisionShard(mc *api.ManagementCluster) string {
	if mc.Properties.Status == nil {
		return ""
	}
	return mc.Properties.Status.ClusterServiceProvisionShardID
}

// intendedVanished point-reads the intended MC: "" while it stands with a shard, else
// the replacement reason.
func (p *placementController) intendedVanished(ctx context.Context, mcID string) (string, error) {
	rid, err := api.ParseResourceID(mcID)
	if err != nil {
		return "", fmt.Errorf("intended management cluster %q: %w", mcID, err)
	}
	pk, err := api.FleetPartitionKey(rid)
	if err != nil {
		return "", err
	}
	stored, err := database.Get[api.ManagementClusterProperties](ctx, p.fleet, pk, rid.String())
	switch {
	case errors.Is(err, database.ErrNotFound):
		return ReplacementManagementClusterDeleted, nil
	case err != nil:
		return "", fmt.Errorf("reading intended management cluster %s: %w", mcID, err)
	case stored.IsDeleted():
		return ReplacementManagementClusterDeleted, nil
	case provisionShard(stored) == "":
		return ReplacementProvisionShardLost, nil
	}
	return "", nil
}

// clusterServiceHas asks Cluster Service for the pre-assigned ID, the ID any create of
// this cluster carries. Without one, nothing can have been created yet.
func (p *placementController) clusterServiceHas(ctx context.Context, pendingHREF string) (bool, error) {
	if pendingHREF == "" {
		return false, nil
	}
	id, err := clusterservice.ParseClusterHREF(pendingHREF)
	if err != nil {
		return false, fmt.Errorf("pending Cluster Service ID %q: %w", pendingHREF, err)
	}
	_, err = p.cs.GetClusterProvisionShard(ctx, id)
	switch {
	case errors.Is(err, clusterservice.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("asking Cluster Service whether it has %s: %w", id, err)
	}
	return true, nil
}

// release drops the cluster's reservation from the old MC's cached scheduling document,
// if it has one. false means the document changed first (412).
func (p *placementController) release(ctx context.Context, mcID string, c *api.Cluster) (bool, error) {
	rid, err := api.ParseResourceID(mcID)
	if err != nil {
		return false, fmt.Errorf("intended management cluster %q: %w", mcID, err)
	}
	sched, err := p.schedulings.Get(api.SchedulingResourceID(rid).String())
	if errors.Is(err, database.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	cluster, err := c.ParsedResourceID()
	if err != nil {
		return false, err
	}
	if sched.Properties.Status == nil || !holdsReservation(sched.Properties.Status.PendingAssignedClusters, cluster) {
		return true, nil
	}
	res, err := p.reservations.Update(ctx, sched, reservationFields, func(s *api.ManagementClusterScheduling) error {
		var keep []string
		for _, entry := range s.Properties.Status.PendingAssignedClusters {
			if !api.ResourceIDsEqual(entry, cluster.String()) {
				keep = append(keep, entry)
			}
		}
		s.Properties.Status.PendingAssignedClusters = keep
		return nil
	})
	return res.Outcome == docwrite.Written, err
}
