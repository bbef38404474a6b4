package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// observer follows the region through caches of its own, fed by the change feed like
// the backend's, so that watching a run costs a poll per interval rather than a listing.
type observer struct {
	spcs        *informers.Informer[api.ServiceProviderClusterProperties]
	schedulings *informers.Informer[api.ManagementClusterSchedulingProperties]

	mu sync.Mutex
	// created is when each cluster of the run was created, by lowercased resource ID.
	created map[string]time.Time
}

func newObserver(ctx context.Context, r *region) (*observer, error) {
	f, err := informers.NewFactory(r.store, informers.Options{PollInterval: r.o.PollInterval, Logger: r.logger.With("component", "observer"), Registerer: prometheus.NewRegistry()})
	if err != nil {
		return nil, err
	}
	o := &observer{spcs: informers.NewCaches(f).ServiceProviderClusters(), schedulings: informers.NewCaches(f).ManagementClusterSchedulings(), created: map[string]time.Time{}}
	f.Start(ctx)
	if !f.WaitForCacheSync(ctx) {
		return nil, errors.New("the runner's caches did not sync")
	}
	return o, nil
}

func (o *observer) recordCreated(resourceID string, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.created[strings.ToLower(resourceID)] = at
}

func (o *observer) createdAt() map[string]time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[string]time.Time, len(o.created))
	for k, v := range o.created {
		out[k] = v
	}
	return out
}

// progress is how far the run's clusters got.
type progress struct {
	created, placed, observed, reservations int
	// placedAt is each placed cluster's spec.managementClusterPlacementTime, only in
	// what progressOf(true) returns.
	placedAt map[string]time.Time
}

func (p progress) settled(total int) bool {
	return p.created == total && p.placed == total && p.observed == total && p.reservations == 0
}

func (p progress) String() string {
	return fmt.Sprintf("created %d  placed %d  observed %d  reservations %d", p.created, p.placed, p.observed, p.reservations)
}

// progress runs ten times a second for the whole run, on the same CPU as the region it
// measures (all of it, on the memory store), so it reads the caches' stores as they are
// and derives each SPC's cluster by cutting its ID rather than parsing it.
func (o *observer) progress() progress { return o.progressOf(false) }

// progressOf is progress, with each placed cluster's placement time when times is set:
// the runner looks at the counts ten times a second and at the times once.
func (o *observer) progressOf(times bool) progress {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := progress{created: len(o.created)}
	if times {
		p.placedAt = map[string]time.Time{}
	}
	for _, obj := range o.spcs.GetStore().List() {
		cached, ok := obj.(*informers.Object[api.ServiceProviderClusterProperties])
		if !ok {
			continue
		}
		spc := cached.Doc
		// The cache names each document by its lowercased ID: no lowercasing per pass.
		cluster := parentKey(cached.Name)
		if _, ours := o.created[cluster]; !ours || spc.Properties.IntendedManagementCluster() == "" {
			continue
		}
		p.placed++
		if times {
			p.placedAt[cluster] = spc.Properties.Spec.ManagementClusterPlacementTime
		}
		if spc.Properties.ObservedManagementCluster() != "" {
			p.observed++
		}
	}
	for _, obj := range o.schedulings.GetStore().List() {
		s, ok := informers.DocumentOf[api.ManagementClusterSchedulingProperties](obj)
		if ok && s.Properties.Status != nil {
			p.reservations += len(s.Properties.Status.PendingAssignedClusters)
		}
	}
	return p
}

// parentKey is the cache key of a resource's parent: its own key (its lowercased ID)
// without the last type/name pair ("" for a top-level resource).
func parentKey(key string) string {
	for range 2 {
		i := strings.LastIndexByte(key, '/')
		if i < 0 {
			return ""
		}
		key = key[:i]
	}
	return key
}
