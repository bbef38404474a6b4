package controllers

import (
	"context"
	"errors"

	"github.com/hcpsched/hcpsched/fleet/docwrite"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// schedulingLister reads the scheduling-document cache.
type schedulingLister = *informers.Lister[api.ManagementClusterSchedulingProperties]

// createScheduling creates the MC's scheduling document, empty, when the cache has none.
// Another writer may have created it since the cache was filled: a conflict is fine, the
// change feed brings the document either way.
func createScheduling(ctx context.Context, fleet database.Container, mcID *api.ResourceID) error {
	doc, err := api.NewManagementClusterScheduling(mcID)
	if err != nil {
		return err
	}
	_, err = docwrite.CreateIfAbsent(ctx, fleet, doc)
	return err
}

// cachedScheduling returns the MC's cached scheduling document. When the cache has none,
// it creates the document and returns nil: the creation comes back through the
// scheduling cache, and the next pass works on it.
func cachedScheduling(ctx context.Context, l schedulingLister, fleet database.Container, mcID *api.ResourceID) (*api.ManagementClusterScheduling, error) {
	cached, err := l.Get(api.SchedulingResourceID(mcID).String())
	if errors.Is(err, database.ErrNotFound) {
		return nil, createScheduling(ctx, fleet, mcID)
	}
	return cached, err
}
