package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
)

// CapacityReadDesireControllerName names the controller in logs and metrics.
const CapacityReadDesireControllerName = "CapacityReadDesireController"

// capacityReadDesireDefinition: CapacityReadDesire makes sure each management cluster's
// kube-applier container holds the ReadDesire ".../readdesires/capacity", which asks
// kube-applier to mirror the MC's CapacityReport CR into Cosmos. kube-applier owns the
// ReadDesire's status; this controller writes only its spec.
//
// No informer watches kube-applier containers, so the ReadDesire is point-read on every
// pass (MC events and the resync).
func capacityReadDesireDefinition() controller.Definition[Env] {
	return controller.Definition[Env]{
		Name:     CapacityReadDesireControllerName,
		Defaults: defaults(),
		Triggers: func(e Env) []controller.Trigger {
			return []controller.Trigger{{Informer: e.Caches.ManagementClusters(), KeyFor: keyForManagementCluster}}
		},
		New: func(e Env, s controller.Settings) (controller.ReconcileFunc, error) {
			d := &capacityReadDesire{
				managementClusters: e.Caches.ManagementClusters().Lister(),
				kubeApplier:        kubeApplier{store: e.Store},
				conflictRequeue:    orDefault(s.RequeueAfter, DefaultConflictRequeue),
			}
			return d.Reconcile, nil
		},
	}
}

// readDesireOwns is what CapacityReadDesire writes of the capacity ReadDesire: its spec,
// field by field (kube-applier owns the status).
var readDesireOwns = docwrite.Fields{
	"properties.spec.managementCluster",
	"properties.spec.targetItem.group",
	"properties.spec.targetItem.version",
	"properties.spec.targetItem.resource",
	"properties.spec.targetItem.namespace",
	"properties.spec.targetItem.name",
}

type capacityReadDesire struct {
	managementClusters managementClusterLister
	kubeApplier        kubeApplier
	conflictRequeue    time.Duration
}

// Reconcile ensures one management cluster's capacity ReadDesire.
func (d *capacityReadDesire) Reconcile(ctx context.Context, key string) (controller.Result, error) {
	logger := controller.LoggerFrom(ctx)
	mc, mcID, err := managementClusterOf(d.managementClusters, key)
	if mc == nil || err != nil {
		return controller.Result{}, err
	}
	c, err := d.kubeApplier.container(mc)
	if err != nil {
		// The MC's next update (register sets the name) brings it back.
		logger.Info("cannot ensure the capacity ReadDesire yet", "reason", err.Error())
		return controller.Result{}, nil
	}
	id := api.CapacityReadDesireResourceID(mcID)
	pk := api.KubeApplierPartitionKey(mcID)

	// No informer watches the container: nothing to write through to.
	w := docwrite.New(c, docwrite.NoCache[api.ReadDesireProperties]{})
	existing, err := database.Get[api.ReadDesireProperties](ctx, c, pk, id.String())
	if errors.Is(err, database.ErrNotFound) {
		doc := api.NewDocument(id, pk, api.ReadDesireProperties{Spec: &api.ReadDesireSpec{}})
		setCapacityReadDesireSpec(doc.Properties.Spec, mcID)
		res, err := w.Create(ctx, doc)
		if res.Outcome == docwrite.Written {
			logger.Info("capacity ReadDesire created", "readDesire", id.String(), "container", c.Name())
		}
		return controller.Result{}, err
	}
	if err != nil {
		return controller.Result{}, fmt.Errorf("reading %s from %s: %w", id, c.Name(), err)
	}

	res, err := w.Update(ctx, existing, readDesireOwns, func(rd *api.ReadDesire) error {
		if rd.Properties.Spec == nil {
			rd.Properties.Spec = &api.ReadDesireSpec{}
		}
		setCapacityReadDesireSpec(rd.Properties.Spec, mcID)
		return nil
	})
	if err != nil {
		return controller.Result{}, err
	}
	switch res.Outcome {
	case docwrite.LostRace:
		logger.Info("capacity ReadDesire changed while being fixed; retrying", "readDesire", id.String())
		return controller.Result{RequeueAfter: d.conflictRequeue}, nil
	case docwrite.Written:
		logger.Info("capacity ReadDesire spec restored", "readDesire", id.String())
	}
	return controller.Result{}, nil
}

// setCapacityReadDesireSpec points the spec at the cluster-scoped CapacityReport
// "cluster", changing the existing objects in place so that fields other components
// added to them survive.
func setCapacityReadDesireSpec(spec *api.ReadDesireSpec, mcID *api.ResourceID) {
	if !api.ResourceIDsEqual(spec.ManagementCluster, mcID.String()) {
		spec.ManagementCluster = mcID.String()
	}
	if spec.TargetItem == nil {
		spec.TargetItem = &api.TargetItem{}
	}
	t := spec.TargetItem
	t.Group, t.Version, t.Resource = api.CapacityReportGroup, api.CapacityReportVersion, api.CapacityReportResource
	t.Namespace, t.Name = "", api.CapacityReportName
}
