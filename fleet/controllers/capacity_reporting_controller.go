package controllers

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/fleet/capacity"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// CapacityReportingControllerName names the controller in logs and metrics.
const CapacityReportingControllerName = "CapacityReportingController"

// CapacityReportsRefusedName counts the capacity reports CapacityReporting would not
// mirror, by reason.
const CapacityReportsRefusedName = "fleet_capacity_reports_refused_total"

// Reasons of fleet_capacity_reports_refused_total.
const (
	// RefusedFutureReport: the report's lastReportedAt lies further in the future than
	// placement.ClockSkewAllowance.
	RefusedFutureReport = "future_timestamp"
)

// capacityReportingDefinition: CapacityReporting mirrors each management cluster's
// capacity report into its scheduling document, and in the same write drops the
// reservations (pendingAssignedClusters) of the clusters the report now shows, ready or
// not: from then on the report counts them.
//
// The report is point-read on a timer rather than watched: one informer per kube-applier
// container would cost a change-feed pump per management cluster for a document that
// changes every 30 s anyway. Passes also start on MC and scheduling-document events, so a
// 412 (the backend reserved capacity meanwhile) is retried as soon as the cache has the
// newer document.
//
// A report dated in the future (beyond placement.ClockSkewAllowance) is not mirrored at
// all: mirrored, it would stay fresh for ever. The scheduling document keeps the last
// believable report, which goes stale, so placement stops using the MC within the
// maximum capacity age and CapacityReportStale fires. A report whose usage lacks a
// resource is mirrored as it is: which resources count is placement's configuration, and
// the engine makes such an MC StaleCapacityData itself.
//
// Its RequeueAfter is the polling period.
func capacityReportingDefinition() controller.Definition[Env] {
	return controller.Definition[Env]{
		Name:     CapacityReportingControllerName,
		Defaults: periodicDefaults(DefaultCapacityPollInterval),
		Triggers: func(e Env) []controller.Trigger {
			return []controller.Trigger{
				{Informer: e.Caches.ManagementClusters(), KeyFor: keyForManagementCluster},
				{Informer: e.Caches.ManagementClusterSchedulings(), KeyFor: keyForManagementCluster},
			}
		},
		New: newCapacityReporting,
	}
}

// reportingOwns is what CapacityReporting writes of a scheduling document: the mirror
// of the report, and the reservations it now counts.
var reportingOwns = docwrite.Fields{
	"properties.status.observedResources.lastReportedAt",
	"properties.status.observedResources.capacity",
	"properties.status.observedResources.usage",
	"properties.status.observedResources.requests",
	docwrite.ConditionField("properties.status.conditions", api.SchedulingConditionCapacityDataCurrent),
	"properties.status.readyResourceIDs",
	"properties.status.notReadyResourceIDs",
	"properties.status.pendingAssignedClusters",
}

type capacityReporting struct {
	managementClusters managementClusterLister
	schedulings        schedulingLister
	writer             schedulingWriter
	kubeApplier        kubeApplier
	now                func() time.Time
	refused            *prometheus.CounterVec
}

func newCapacityReporting(e Env, s controller.Settings) (controller.ReconcileFunc, error) {
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: CapacityReportsRefusedName,
		Help: "Capacity reports the fleet did not mirror into the scheduling document, by reason (future_timestamp: lastReportedAt further ahead than the clock-skew allowance). Counted once per poll of the management cluster.",
	}, []string{"reason"})
	// Exported at zero from the start, so that increase() sees the first refusal.
	refused.WithLabelValues(RefusedFutureReport)
	if e.Registerer != nil {
		if err := e.Registerer.Register(refused); err != nil {
			return nil, fmt.Errorf("registering %s: %w", CapacityReportsRefusedName, err)
		}
	}
	r := &capacityReporting{
		managementClusters: e.Caches.ManagementClusters().Lister(),
		schedulings:        e.Caches.ManagementClusterSchedulings().Lister(),
		writer:             newSchedulingWriter(e),
		kubeApplier:        kubeApplier{store: e.Store},
		now:                e.now(),
		refused:            refused,
	}
	return periodic(s, DefaultCapacityPollInterval).Reconcile(r.pass)
}

// pass mirrors one management cluster's report; the next poll follows on the timer.
func (r *capacityReporting) pass(ctx context.Context, key string) (controller.Next, error) {
	logger := controller.LoggerFrom(ctx)
	mc, mcID, err := managementClusterOf(r.managementClusters, key)
	if mc == nil || err != nil {
		// A gone MC is polled no more: its pending timer, if any, fires once into here.
		return controller.Idle(), err
	}

	report, err := r.kubeApplier.readCapacityReport(ctx, mc, mcID)
	if notObservedYet(err) {
		logger.Debug("capacity report not observed yet", "reason", err.Error())
		return controller.Again(), nil
	}
	if err != nil {
		return controller.Next{}, err
	}

	cached, err := cachedScheduling(ctx, r.schedulings, r.writer, mcID)
	if cached == nil || err != nil {
		// Created: the next poll mirrors into it.
		return controller.Again(), err
	}

	now := r.now()
	if reported := report.Status.LastReportedAt; placement.ReportedInFuture(reported, now) {
		// Nothing of it is written, not even the clusters it shows: a report that cannot
		// be dated cannot say that a reservation is now counted.
		r.refused.WithLabelValues(RefusedFutureReport).Inc()
		logger.Warn("capacity report not mirrored: its lastReportedAt is in the future, so the mirrored figures are left to go stale",
			"lastReportedAt", reported, "now", now, "clockSkewAllowance", placement.ClockSkewAllowance)
		return controller.Again(), nil
	}

	var dropped []string
	res, err := r.writer.Update(ctx, cached, reportingOwns, func(d *api.ManagementClusterScheduling) error {
		var err error
		if dropped, err = mirrorReport(d, report, now, logger); err != nil {
			return fmt.Errorf("mirroring the capacity report of %s: %w", mcID, err)
		}
		return nil
	})
	if err != nil {
		return controller.Next{}, err
	}
	switch res.Outcome {
	case docwrite.LostRace:
		logger.Info("scheduling document changed since it was cached; retrying from the cache once the change feed delivers it")
	case docwrite.Written:
		logger.Debug("capacity report mirrored", "lastReportedAt", report.Status.LastReportedAt)
		if len(dropped) > 0 {
			logger.Info("reservations released: the clusters are now reported", "clusters", dropped)
		}
	}
	return controller.Again(), nil
}

// mirrorReport writes the report into the scheduling document's fields this controller
// owns and returns the reservations it dropped. Existing objects are changed in place so
// that fields it does not know survive.
func mirrorReport(doc *api.ManagementClusterScheduling, report *api.CapacityReport, now time.Time, logger *slog.Logger) ([]string, error) {
	observed, err := capacity.Observe(report)
	if err != nil {
		return nil, err
	}
	if doc.Properties.Status == nil {
		doc.Properties.Status = &api.SchedulingStatus{}
	}
	status := doc.Properties.Status
	if status.ObservedResources == nil {
		status.ObservedResources = &api.ObservedResources{}
	}
	o := status.ObservedResources
	o.LastReportedAt = report.Status.LastReportedAt
	o.Capacity, o.Usage, o.Requests = observed.Capacity, observed.Usage, observed.Requests

	current := api.Condition{
		Type: api.SchedulingConditionCapacityDataCurrent, Status: api.ConditionTrue,
		Reason: api.SchedulingReasonDataCollected,
	}
	if !api.IsConditionTrue(report.Status.Conditions, api.CapacityReportConditionReportCurrent) {
		current.Status, current.Reason = api.ConditionFalse, api.SchedulingReasonReportNotCurrent
		current.Message = "CapacityReport CR's ReportCurrent condition is not True"
	}
	api.SetCondition(&status.Conditions, current, now)

	hcps := report.Status.HostedControlPlanes
	status.ReadyResourceIDs = validResourceIDs(hcps.ReadyResourceIDs, "readyResourceIDs", logger)
	status.NotReadyResourceIDs = validResourceIDs(hcps.NotReadyResourceIDs, "notReadyResourceIDs", logger)

	reported := map[string]bool{}
	for _, id := range append(append([]string(nil), status.ReadyResourceIDs...), status.NotReadyResourceIDs...) {
		reported[strings.ToLower(id)] = true
	}
	var kept, dropped []string
	for _, id := range status.PendingAssignedClusters {
		if reported[strings.ToLower(id)] {
			dropped = append(dropped, id)
		} else {
			kept = append(kept, id)
		}
	}
	if len(dropped) > 0 {
		status.PendingAssignedClusters = kept
	}
	return dropped, nil
}

// validResourceIDs keeps the entries that parse as resource IDs, spelled as reported: IDs
// from the agent keep the casing of the namespace annotation they came from.
func validResourceIDs(ids []string, field string, logger *slog.Logger) []string {
	var out []string
	for _, id := range ids {
		if _, err := api.ParseResourceID(id); err != nil {
			logger.Warn("skipping an unusable entry of the capacity report", "field", field, "entry", id, "error", err.Error())
			continue
		}
		out = append(out, id)
	}
	return out
}
