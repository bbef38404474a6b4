package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/fleet/agentpools"
	"github.com/hcpsched/hcpsched/fleet/capacity"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
)

// ScaleCeilingControllerName names the controller in logs and metrics.
const ScaleCeilingControllerName = "ScaleCeilingController"

// scaleCeilingDefinition: ScaleCeiling computes what each management cluster could hold
// with every worker pool scaled to its maximum, from the MC's AKS agent pools, and writes
// it with a lastReportedAt heartbeat into the scheduling document.
//
// Listing agent pools is an ARM call, so the cached scheduling document gates the work: a
// pass only recomputes once the ceiling's lastReportedAt is an interval old. Events in
// between (every capacity mirror writes the scheduling document) cost nothing.
//
// Its RequeueAfter is the recompute period.
func scaleCeilingDefinition() controller.Definition[Env] {
	return controller.Definition[Env]{
		Name:     ScaleCeilingControllerName,
		Defaults: periodicDefaults(DefaultScaleCeilingInterval),
		Triggers: func(e Env) []controller.Trigger {
			return []controller.Trigger{
				{Informer: e.Caches.ManagementClusters(), KeyFor: keyForManagementCluster},
				{Informer: e.Caches.ManagementClusterSchedulings(), KeyFor: keyForManagementCluster},
			}
		},
		New: func(e Env, s controller.Settings) (controller.ReconcileFunc, error) {
			if e.AgentPools == nil {
				return nil, errors.New("no agent pool source")
			}
			timer := periodic(s, DefaultScaleCeilingInterval)
			c := &scaleCeiling{
				managementClusters: e.Caches.ManagementClusters().Lister(),
				schedulings:        e.Caches.ManagementClusterSchedulings().Lister(),
				writer:             newSchedulingWriter(e),
				kubeApplier:        kubeApplier{store: e.Store},
				pools:              e.AgentPools,
				sizes:              e.VMSizes,
				interval:           timer.Interval,
				now:                e.now(),
			}
			return timer.Reconcile(c.pass)
		},
	}
}

// scaleCeilingOwns is what ScaleCeiling writes of a scheduling document.
var scaleCeilingOwns = docwrite.Fields{
	"properties.status.scaleCeiling.capacity",
	"properties.status.scaleCeiling.lastReportedAt",
	docwrite.ConditionField("properties.status.conditions", api.SchedulingConditionScalingDataCurrent),
}

type scaleCeiling struct {
	managementClusters managementClusterLister
	schedulings        schedulingLister
	writer             schedulingWriter
	kubeApplier        kubeApplier
	pools              agentpools.Source
	sizes              capacity.VMSizes
	interval           time.Duration
	now                func() time.Time
}

// pass recomputes one management cluster's ceiling when it is due.
func (s *scaleCeiling) pass(ctx context.Context, key string) (controller.Next, error) {
	logger := controller.LoggerFrom(ctx)
	mc, mcID, err := managementClusterOf(s.managementClusters, key)
	if mc == nil || err != nil {
		// A gone MC is polled no more: its pending timer, if any, fires once into here.
		return controller.Idle(), err
	}
	if mc.Properties.Status == nil || mc.Properties.Status.AKSResourceID == "" {
		// register sets it; that update brings the MC back.
		logger.Info("management cluster has no status.aksResourceID yet")
		return controller.Idle(), nil
	}
	cached, err := cachedScheduling(ctx, s.schedulings, s.writer, mcID)
	if cached == nil || err != nil {
		// Created: its arrival through the scheduling cache brings the MC back.
		return controller.Idle(), err
	}
	now := s.now()
	if wait := s.untilDue(cached, now); wait > 0 {
		return controller.DueIn(wait), nil
	}

	var syncErr error
	res, err := s.writer.Update(ctx, cached, scaleCeilingOwns, func(d *api.ManagementClusterScheduling) error {
		// A failure is recorded in the document, and then retried.
		syncErr = s.compute(ctx, d, mc, mcID, now)
		return nil
	})
	if err != nil {
		return controller.Next{}, err
	}
	switch res.Outcome {
	case docwrite.LostRace:
		logger.Info("scheduling document changed since it was cached; the change feed brings it back")
	case docwrite.Written:
		if ceiling := res.Stored.Properties.Status.ScaleCeiling; ceiling != nil {
			logger.Debug("scale ceiling written", "capacity", ceiling.Capacity)
		}
	}
	if syncErr != nil {
		return controller.Next{}, syncErr
	}
	return controller.Again(), nil
}

// untilDue is how long the cached ceiling stays current; zero when it must be recomputed.
func (s *scaleCeiling) untilDue(doc *api.ManagementClusterScheduling, now time.Time) time.Duration {
	status := doc.Properties.Status
	if status == nil || status.ScaleCeiling == nil || status.ScaleCeiling.LastReportedAt.IsZero() ||
		api.FindCondition(status.Conditions, api.SchedulingConditionScalingDataCurrent) == nil {
		return 0
	}
	return max(status.ScaleCeiling.LastReportedAt.Add(s.interval).Sub(now), 0)
}

// compute sets scaleCeiling and ScalingDataCurrent on doc. When the agent pools cannot be
// listed it records that and keeps the previous ceiling, and returns the error to retry.
func (s *scaleCeiling) compute(ctx context.Context, doc *api.ManagementClusterScheduling, mc *api.ManagementCluster, mcID *api.ResourceID, now time.Time) error {
	if doc.Properties.Status == nil {
		doc.Properties.Status = &api.SchedulingStatus{}
	}
	status := doc.Properties.Status
	aks := mc.Properties.Status.AKSResourceID
	condition := api.Condition{Type: api.SchedulingConditionScalingDataCurrent}

	pools, err := s.pools.List(ctx, aks)
	if err != nil {
		// A fixed message: the error text changes per request and would rewrite the
		// document on every retry. The error itself is logged by the controller.
		condition.Status, condition.Reason = api.ConditionFalse, api.SchedulingReasonAgentPoolsUnavailable
		condition.Message = fmt.Sprintf("listing the agent pools of %s failed", aks)
		api.SetCondition(&status.Conditions, condition, now)
		return fmt.Errorf("scale ceiling of %s: %w", mcID, err)
	}
	report, err := s.kubeApplier.readCapacityReport(ctx, mc, mcID)
	switch {
	case notObservedYet(err):
		report = nil // the VM size table stands in until the report exists
	case err != nil:
		return err
	}
	ceiling, err := capacity.ComputeCeiling(report, pools, s.sizes)
	if err != nil {
		return fmt.Errorf("scale ceiling of %s: %w", mcID, err)
	}

	if status.ScaleCeiling == nil {
		status.ScaleCeiling = &api.ScaleCeiling{}
	}
	status.ScaleCeiling.Capacity = ceiling.Capacity
	status.ScaleCeiling.LastReportedAt = now.UTC().Truncate(time.Second)
	switch {
	case ceiling.WorkerPools == 0:
		condition.Status, condition.Reason = api.ConditionFalse, api.SchedulingReasonNoWorkerPools
		condition.Message = fmt.Sprintf("no agent pool of %s has the node label %s=%s", aks, agentpools.RoleLabel, agentpools.WorkerRole)
	case len(ceiling.Unresolved) > 0:
		condition.Status, condition.Reason = api.ConditionFalse, api.SchedulingReasonUnknownVMSize
		condition.Message = "per-node capacity unknown (not in the capacity report nor the VM size table): " + strings.Join(ceiling.Unresolved, ", ")
	default:
		condition.Status, condition.Reason = api.ConditionTrue, api.SchedulingReasonDataCollected
	}
	api.SetCondition(&status.Conditions, condition, now)
	return nil
}
