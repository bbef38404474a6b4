package controllers

import (
	"context"
	"errors"
	"fmt"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
)

// errNoKubeApplierContainer: the MC does not name its kube-applier container yet.
var errNoKubeApplierContainer = errors.New("management cluster has no status.kubeApplierCosmosContainerName")

// kubeApplier opens the management clusters' kube-applier containers. No informer
// watches them: a controller point-reads what it needs there.
type kubeApplier struct{ store database.Store }

// container is the MC's kube-applier container, which holds its ReadDesires.
func (k kubeApplier) container(mc *api.ManagementCluster) (database.Container, error) {
	if mc.Properties.Status == nil || mc.Properties.Status.KubeApplierCosmosContainerName == "" {
		return nil, errNoKubeApplierContainer
	}
	return k.store.Container(mc.Properties.Status.KubeApplierCosmosContainerName), nil
}

// readCapacityReport point-reads the MC's capacity ReadDesire and decodes its mirrored
// CapacityReport. A missing ReadDesire is database.ErrNotFound and one without
// kubeContent is api.ErrNoCapacityReport: both mean "not observed yet".
func (k kubeApplier) readCapacityReport(ctx context.Context, mc *api.ManagementCluster, mcID *api.ResourceID) (*api.CapacityReport, error) {
	c, err := k.container(mc)
	if err != nil {
		return nil, err
	}
	id := api.CapacityReadDesireResourceID(mcID)
	// Read every pass of every MC, and never written back: decoded lean.
	rd, err := database.GetLean[api.ReadDesireProperties](ctx, c, api.KubeApplierPartitionKey(mcID), id.String())
	if err != nil {
		return nil, fmt.Errorf("reading %s from container %s: %w", id, c.Name(), err)
	}
	if rd.IsDeleted() {
		return nil, fmt.Errorf("%s is deleted: %w", id, database.ErrNotFound)
	}
	var content []byte
	if rd.Properties.Status != nil {
		content = rd.Properties.Status.KubeContent
	}
	report, err := api.DecodeCapacityReport(content)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	return report, nil
}

// notObservedYet reports whether err only means that there is no report to read yet.
func notObservedYet(err error) bool {
	return errors.Is(err, database.ErrNotFound) || errors.Is(err, api.ErrNoCapacityReport) || errors.Is(err, errNoKubeApplierContainer)
}
