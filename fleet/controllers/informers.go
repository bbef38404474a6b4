package controllers

import (
	"errors"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// Informers are the Fleet-container caches the controllers read.
type Informers struct {
	ManagementClusters *informers.Informer[api.ManagementClusterProperties]
	Schedulings        *informers.Informer[api.ManagementClusterSchedulingProperties]
	Stamps             *informers.Informer[api.StampProperties]
}

// NewInformers registers the caches on f; call it before f.Start.
func NewInformers(f *informers.Factory) Informers {
	return Informers{
		ManagementClusters: informers.ManagementClusters(f),
		Schedulings:        informers.ManagementClusterSchedulings(f),
		Stamps:             informers.Register[api.StampProperties](f, api.FleetContainer, api.StampResourceType, nil),
	}
}

// keyForManagementCluster keys MCs and their scheduling documents by the MC.
var keyForManagementCluster = controller.KeyForType(api.ManagementClusterResourceType)

// keyForStampsManagementCluster keys a stamp by its one management cluster.
func keyForStampsManagementCluster(obj any) []string {
	d, ok := informers.DocumentOf[api.StampProperties](obj)
	if !ok {
		return nil
	}
	rid, err := d.ParsedResourceID()
	if err != nil || len(rid.Types) != 1 {
		return nil
	}
	return []string{api.ManagementClusterResourceID(rid.Name()).Key()}
}

// managementCluster returns the cached MC a key names and its parsed ID, or nil when it is
// gone or being deleted: there is nothing to do for it then.
func (i Informers) managementCluster(key string) (*api.ManagementCluster, *api.ResourceID, error) {
	mc, err := i.ManagementClusters.Lister().Get(key)
	if errors.Is(err, database.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if mc.IsDeleted() {
		return nil, nil, nil
	}
	id, err := mc.ParsedResourceID()
	if err != nil {
		return nil, nil, err
	}
	return mc, id, nil
}

// trigger is a cache whose events enqueue the keys keyFor maps them to.
type trigger struct {
	informer controller.Informer
	keyFor   controller.KeyFunc
}

func newController(opts controller.Options, reconcile controller.ReconcileFunc, triggers ...trigger) (*controller.Controller, error) {
	c, err := controller.New(opts, reconcile)
	if err != nil {
		return nil, err
	}
	for _, t := range triggers {
		if err := c.Watch(t.informer, t.keyFor); err != nil {
			return nil, err
		}
	}
	return c, nil
}
