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

// kubeApplierContainer is the MC's kube-applier container, which holds its ReadDesires.
func kubeApplierContainer(store database.Store, mc *api.ManagementCluster) (database.Container, error) {
	if mc.Properties.Status == nil || mc.Properties.Status.KubeApplierCosmosContainerName == "" {
		return nil, errNoKubeApplierContainer
	}
	return store.Container(mc.Properties.Status.KubeApplierCosmosContainerName), nil
}

// readCapacityReport point-reads the MC's capacity ReadDesire and decodes its mirrored
// CapacityReport. A missing ReadDesire is database.ErrNotFound and one without
// kubeContent is api.ErrNoCapacityReport: both mean "not observed yet".
func readCapacityReport(ctx context.Context, store database.Store, mc *api.ManagementCluster, mcID *api.ResourceID) (*api.CapacityReport, error) {
	c, err := kubeApplierContainer(store, mc)
	if err != nil {
		return nil, err
	}
	id := api.CapacityReadDesireResourceID(mcID)
	rd, err := database.Get[api.ReadDesireProperties](ctx, c, api.KubeApplierPartitionKey(mcID), id.String())
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
