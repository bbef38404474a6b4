package informers

import (
	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/internal/api"
)

// Caches is the one bundle of typed informers both binaries read. An accessor registers
// its informer on first use and returns the same one after, so a process pumps only the
// containers and types its controllers read. Call the accessors a process needs before
// Start: registering after it panics.
type Caches struct{ f *Factory }

// NewCaches returns the bundle over f.
func NewCaches(f *Factory) Caches { return Caches{f: f} }

// Factory is the factory the caches are registered on, to start and wait for.
func (c Caches) Factory() *Factory { return c.f }

// Clusters is the HCPOpenShiftCluster informer (Resources container).
func (c Caches) Clusters() *Informer[api.ClusterProperties] { return clusters(c.f) }

// ServiceProviderClusters is the SPC informer (Resources container).
func (c Caches) ServiceProviderClusters() *Informer[api.ServiceProviderClusterProperties] {
	return serviceProviderClusters(c.f)
}

// ManagementClusters is the MC informer (Fleet container).
func (c Caches) ManagementClusters() *Informer[api.ManagementClusterProperties] {
	return managementClusters(c.f)
}

// ManagementClusterSchedulings is the scheduling-document informer (Fleet container).
func (c Caches) ManagementClusterSchedulings() *Informer[api.ManagementClusterSchedulingProperties] {
	return managementClusterSchedulings(c.f)
}

// Subscriptions is the ARM subscription informer (Resources container): the tenant a
// cluster is created under comes from its subscription.
func (c Caches) Subscriptions() *Informer[api.SubscriptionProperties] {
	return Register[api.SubscriptionProperties](c.f, api.ResourcesContainer, api.SubscriptionResourceType, nil)
}

// Stamps is the stamp informer (Fleet container).
func (c Caches) Stamps() *Informer[api.StampProperties] {
	return Register[api.StampProperties](c.f, api.FleetContainer, api.StampResourceType, nil)
}

// HCPResourceRequirements is the informer of ARO-HCP's per-HCP averages (Fleet container):
// phase-2 placement takes per-HCP costs from its "default" singleton. It needs no index,
// there being one document per sizing tier at most.
func (c Caches) HCPResourceRequirements() *Informer[api.HCPResourceRequirementsProperties] {
	return Register[api.HCPResourceRequirementsProperties](c.f, api.FleetContainer, api.HCPResourceRequirementsResourceType, nil)
}

// Registered returns every informer registered so far, for tests that watch them all
// (for in-place mutations, say).
func (c Caches) Registered() []cache.SharedIndexInformer {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	out := make([]cache.SharedIndexInformer, 0, len(c.f.informers))
	for _, inf := range c.f.informers {
		out = append(out, inf)
	}
	return out
}
