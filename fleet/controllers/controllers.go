package controllers

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/fleet/agentpools"
	"github.com/hcpsched/hcpsched/fleet/capacity"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// Env is what the fleet's controllers are built from. Each definition's New takes from it
// only what its reconciler uses, and registers the caches it reads.
type Env struct {
	// Store is the database: the Fleet container, written through the caches, and the
	// management clusters' kube-applier containers, which no informer watches.
	Store  database.Store
	Caches informers.Caches
	// ClusterService is where management clusters are registered as provision shards.
	ClusterService clusterservice.ProvisionShards
	AgentPools     agentpools.Source
	VMSizes        capacity.VMSizes
	// Region is where provision shards are created.
	Region string
	// Registerer takes the controllers' own metrics; nil leaves them unexported.
	Registerer prometheus.Registerer
	// Now is the clock of the times the controllers write and judge; nil is time.Now.
	Now func() time.Time
}

func (e Env) now() func() time.Time {
	if e.Now != nil {
		return e.Now
	}
	return time.Now
}

// Definitions lists the fleet's controllers: registration with Cluster Service and the
// Ready condition it leads to, then the capacity data placement reads (the ReadDesire
// that has the report mirrored, its mirror into the scheduling document, and the scale
// ceiling).
func Definitions() []controller.Definition[Env] {
	return []controller.Definition[Env]{
		clustersServiceRegistrationDefinition(),
		lifecycleDefinition(),
		capacityReadDesireDefinition(),
		capacityReportingDefinition(),
		scaleCeilingDefinition(),
	}
}

// defaults are the settings of a controller that revisits every management cluster on
// the resync and requeues after a 412.
func defaults() controller.Settings {
	return controller.Settings{
		Workers:          DefaultWorkers,
		ResyncPeriod:     DefaultResyncPeriod,
		RequeueAfter:     DefaultConflictRequeue,
		ReconcileTimeout: controller.DefaultReconcileTimeout,
	}
}

// periodicDefaults are the settings of a controller that times its own passes over each
// management cluster every interval: a resync would only add passes.
func periodicDefaults(interval time.Duration) controller.Settings {
	return controller.Settings{
		Workers:          DefaultWorkers,
		RequeueAfter:     interval,
		ReconcileTimeout: controller.DefaultReconcileTimeout,
	}
}

// periodic is the timer of a controller that polls every management cluster: its
// RequeueAfter (def when unset), jittered so that MCs seen together at startup drift
// apart.
func periodic(s controller.Settings, def time.Duration) controller.Periodic {
	return controller.Periodic{Interval: orDefault(s.RequeueAfter, def), Jitter: controller.DefaultPeriodicJitter}
}

// orDefault is d, or def when d is not positive.
func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
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

// managementClusterLister reads the MC cache.
type managementClusterLister = *informers.Lister[api.ManagementClusterProperties]

// managementClusterWriter writes management clusters through to their cache.
type managementClusterWriter = docwrite.Writer[api.ManagementClusterProperties]

func newManagementClusterWriter(e Env) managementClusterWriter {
	return docwrite.New(e.Store.Container(api.FleetContainer), e.Caches.ManagementClusters())
}

// managementClusterOf returns the cached MC a key names and its parsed ID, or nil when it
// is gone or being deleted: there is nothing to do for it then.
func managementClusterOf(l managementClusterLister, key string) (*api.ManagementCluster, *api.ResourceID, error) {
	mc, err := l.Get(key)
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
