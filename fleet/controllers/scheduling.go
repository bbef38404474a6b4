package controllers

import (
	"context"
	"errors"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// schedulingLister reads the scheduling-document cache.
type schedulingLister = *informers.Lister[api.ManagementClusterSchedulingProperties]

// schedulingWriter writes scheduling documents through to their cache.
type schedulingWriter = docwrite.Writer[api.ManagementClusterSchedulingProperties]

func newSchedulingWriter(e Env) schedulingWriter {
	return docwrite.New(e.Store.Container(api.FleetContainer), e.Caches.ManagementClusterSchedulings())
}

// cachedScheduling returns the MC's cached scheduling document. When the cache has none,
// it creates the document, empty as ARO-HCP creates it, and returns nil: the next pass
// works on it. Another writer may have created it since the cache was filled; that lost
// race is fine, the change feed brings the document either way.
func cachedScheduling(ctx context.Context, l schedulingLister, w schedulingWriter, mcID *api.ResourceID) (*api.ManagementClusterScheduling, error) {
	cached, err := l.Get(api.SchedulingResourceID(mcID).String())
	if !errors.Is(err, database.ErrNotFound) {
		return cached, err
	}
	doc, err := api.NewManagementClusterScheduling(mcID)
	if err != nil {
		return nil, err
	}
	_, err = w.Create(ctx, doc)
	return nil, err
}
