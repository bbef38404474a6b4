// Package candidates reads the placement engine's input from the backend's caches: every
// management cluster (MC) with its scheduling document, and which clusters are
// single-replica. The PlacementController decides from it, and the metrics count
// capacity and headroom from the same input, so that both see what the engine sees.
package candidates

import (
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// Source is the caches the engine's input is read from; FromCaches makes one.
type Source struct {
	managementClusters *informers.Lister[api.ManagementClusterProperties]
	schedulings        *informers.Lister[api.ManagementClusterSchedulingProperties]
	clusters           *informers.Lister[api.ClusterProperties]
}

// FromCaches reads the MC, scheduling-document and cluster caches of c, registering
// them if nothing has yet; call it before c's factory starts.
func FromCaches(c informers.Caches) Source {
	return Source{
		managementClusters: c.ManagementClusters().Lister(),
		schedulings:        c.ManagementClusterSchedulings().Lister(),
		clusters:           c.Clusters().Lister(),
	}
}

// Snapshot pairs every cached MC with its cached scheduling document (nil when the cache
// has none), in the lister's order. The documents are the cache's own: read them, or
// DeepCopy before a change.
func (s Source) Snapshot() []placement.Candidate {
	mcs := s.managementClusters.List()
	out := make([]placement.Candidate, 0, len(mcs))
	for _, mc := range mcs {
		cand := placement.Candidate{ManagementCluster: mc}
		if rid, err := mc.ParsedResourceID(); err == nil {
			if sched, err := s.schedulings.Get(api.SchedulingResourceID(rid).String()); err == nil {
				cand.Scheduling = sched
			}
		}
		out = append(out, cand)
	}
	return out
}

// SingleReplicaLookup tells the engine, from the cluster cache as it is when asked,
// which reserved or not-ready clusters are single-replica. A cluster the cache lacks is
// unknown, and the engine charges it as an HA one.
func (s Source) SingleReplicaLookup() placement.SingleReplicaLookup {
	clusters := s.clusters
	return func(id string) (bool, bool) {
		c, err := clusters.Get(id)
		if err != nil {
			return false, false
		}
		return SingleReplica(c), true
	}
}

// SingleReplica says whether the cluster asks for a single-replica control plane, which
// costs less of the counted resources than an HA one.
func SingleReplica(c *api.Cluster) bool {
	f := c.Properties.ServiceProvider().ExperimentalFeatures
	return f != nil && f.SingleReplica == api.SingleReplica
}
