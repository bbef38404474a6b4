package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
)

// LifecycleControllerName names the controller in logs and metrics.
const LifecycleControllerName = "LifecycleController"

// lifecycleDefinition: Lifecycle keeps a management cluster's Ready condition: True
// exactly when every registration condition on the document is True,
// ClustersServiceRegistered being required. Registrations by other components (ARO-HCP's
// MaestroRegistered) count when present, so hcpsched and ARO-HCP agree on Ready when
// both run.
func lifecycleDefinition() controller.Definition[Env] {
	return controller.Definition[Env]{
		Name:     LifecycleControllerName,
		Defaults: defaults(),
		Triggers: func(e Env) []controller.Trigger {
			return []controller.Trigger{{Informer: e.Caches.ManagementClusters(), KeyFor: keyForManagementCluster}}
		},
		New: func(e Env, s controller.Settings) (controller.ReconcileFunc, error) {
			l := &lifecycle{
				managementClusters: e.Caches.ManagementClusters().Lister(),
				writer:             newManagementClusterWriter(e),
				conflictRequeue:    orDefault(s.RequeueAfter, DefaultConflictRequeue),
				now:                e.now(),
			}
			return l.Reconcile, nil
		},
	}
}

// lifecycleOwns is what Lifecycle writes of a management cluster.
var lifecycleOwns = docwrite.Fields{docwrite.ConditionField("properties.status.conditions", api.ManagementClusterConditionReady)}

type lifecycle struct {
	managementClusters managementClusterLister
	writer             managementClusterWriter
	conflictRequeue    time.Duration
	now                func() time.Time
}

// Reconcile aggregates one management cluster's registrations into Ready.
func (l *lifecycle) Reconcile(ctx context.Context, key string) (controller.Result, error) {
	cached, _, err := managementClusterOf(l.managementClusters, key)
	if cached == nil || err != nil {
		return controller.Result{}, err
	}
	var conditions []api.Condition
	if cached.Properties.Status != nil {
		conditions = cached.Properties.Status.Conditions
	}
	want := readyCondition(conditions)
	if !l.needsWork(cached, want) {
		return controller.Result{}, nil
	}

	res, err := l.writer.Update(ctx, cached, lifecycleOwns, func(mc *api.ManagementCluster) error {
		if mc.Properties.Status == nil {
			mc.Properties.Status = &api.ManagementClusterStatus{}
		}
		api.SetCondition(&mc.Properties.Status.Conditions, want, l.now())
		return nil
	})
	if err != nil {
		return controller.Result{}, err
	}
	logger := controller.LoggerFrom(ctx)
	switch res.Outcome {
	case docwrite.LostRace:
		logger.Info("management cluster changed since it was cached; looking again")
		return controller.Result{RequeueAfter: l.conflictRequeue}, nil
	case docwrite.Written:
		logger.Info("Ready condition set", "status", want.Status, "reason", want.Reason)
	}
	return controller.Result{}, nil
}

// needsWork: the MC's Ready condition says something else than it should.
func (l *lifecycle) needsWork(mc *api.ManagementCluster, want api.Condition) bool {
	var conditions []api.Condition
	if mc.Properties.Status != nil {
		conditions = mc.Properties.Status.Conditions
	}
	have := api.FindCondition(conditions, api.ManagementClusterConditionReady)
	return have == nil || have.Status != want.Status || have.Reason != want.Reason || have.Message != want.Message
}

// readyCondition derives Ready from the registration conditions, listing the pending ones
// in document order.
func readyCondition(conditions []api.Condition) api.Condition {
	var pending []string
	if api.FindCondition(conditions, api.ManagementClusterConditionClustersServiceRegistered) == nil {
		pending = append(pending, api.ManagementClusterConditionClustersServiceRegistered)
	}
	for _, c := range conditions {
		if strings.HasSuffix(c.Type, api.ManagementClusterRegistrationSuffix) && c.Status != api.ConditionTrue {
			pending = append(pending, c.Type)
		}
	}
	if len(pending) == 0 {
		return api.Condition{
			Type: api.ManagementClusterConditionReady, Status: api.ConditionTrue,
			Reason: api.ManagementClusterReasonAllRegistered, Message: "All downstream registrations completed successfully",
		}
	}
	return api.Condition{
		Type: api.ManagementClusterConditionReady, Status: api.ConditionFalse,
		Reason:  api.ManagementClusterReasonRegistrationIncomplete,
		Message: fmt.Sprintf("Pending downstream registrations: %s", strings.Join(pending, ", ")),
	}
}
