package controllers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/fleet/capacity"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
)

// Fixtures the tests start from: ARO-HCP documents, so every write is checked against
// real shapes with fields hcpsched does not know.
const (
	fixtureStamp1       = "constructed/fleet-stamp-1-auto-approved.json"
	fixtureStamp3       = "constructed/fleet-stamp-3-approval-revoked.json"
	fixtureMC1          = "constructed/fleet-managementcluster-1-ready-schedulable.json"
	fixtureMC3          = "constructed/fleet-managementcluster-3-cordoned-registration-checkfailed.json"
	fixtureScheduling1  = "constructed/fleet-scheduling-stamp-1-observed.json"
	fixtureReadDesire1  = "constructed/readdesire-capacity-stamp-1.json"
	kubeApplierOfStamp1 = "Manifests-MC-1"
)

var (
	mc1                   = api.ManagementClusterResourceID("1")
	mc3                   = api.ManagementClusterResourceID("3")
	schedulingOf1         = api.SchedulingResourceID(mc1)
	capacityReadDesireOf1 = api.CapacityReadDesireResourceID(mc1)
	// testNow is the controllers' clock in tests.
	testNow = time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
)

// The kit's JSON edits, as the tests spell them.
type edit = controllertest.Edit

var (
	set       = controllertest.Set
	unset     = controllertest.Unset
	condition = controllertest.ConditionTree
)

func fleetDoc(fixture string, edits ...edit) controllertest.Seed {
	return controllertest.Seed{Container: api.FleetContainer, Fixture: fixture, Edits: edits}
}

func kubeApplierDoc(fixture string, edits ...edit) controllertest.Seed {
	return controllertest.Seed{Container: kubeApplierOfStamp1, Fixture: fixture, Edits: edits}
}

// world is one fleet controller test: the kit with hooks on the store the controllers
// see, the seeds stored, the Fleet caches started over them, and the controllers'
// environment with the clock at testNow.
type world struct {
	*controllertest.Kit
	t     *testing.T
	hooks *controllertest.Hooks
	env   Env
}

func newWorld(t *testing.T, seeds ...controllertest.Seed) *world {
	t.Helper()
	hooks := &controllertest.Hooks{}
	k := controllertest.New(t, controllertest.WithStore(hooks.Wrap),
		// Each CS request the tests count is one request.
		controllertest.WithClusterServiceClient(func(c *clusterservice.Config) { c.DisableRetries = true }))
	k.Put(t, seeds...)
	// Every Fleet cache, whichever the controller under test reads, so that synced
	// waits on all of them.
	k.Caches.ManagementClusters()
	k.Caches.ManagementClusterSchedulings()
	k.Caches.Stamps()
	k.Start(t)
	return &world{Kit: k, t: t, hooks: hooks, env: Env{
		Store: k.Store, Caches: k.Caches, ClusterService: k.CSClient, VMSizes: capacity.DefaultVMSizes,
		Region: testRegion, Now: func() time.Time { return testNow },
	}}
}

// reconciler builds def on the world's environment; nil settings are def's defaults.
func (w *world) reconciler(def controller.Definition[Env], s *controller.Settings) *controllertest.Reconciler {
	return controllertest.NewReconciler(w.t, w.Kit, w.env, def, s)
}

// item point-reads a stored document.
func (w *world) item(container string, rid *api.ResourceID) database.Item {
	w.t.Helper()
	return w.Stored(w.t, container, rid)
}

// synced waits until the caches hold the stored version of every Fleet document.
func (w *world) synced() {
	w.t.Helper()
	w.WaitForCaches(w.t,
		controllertest.Cached(w.Caches.ManagementClusters(), api.FleetContainer, api.ManagementClusterResourceType),
		controllertest.Cached(w.Caches.ManagementClusterSchedulings(), api.FleetContainer, api.ManagementClusterSchedulingResourceType),
		controllertest.Cached(w.Caches.Stamps(), api.FleetContainer, api.StampResourceType),
	)
}

// requireRetryWrites lets the caches catch up with the store, runs the reconcile again
// and checks that it replaced the stored document with exactly edits.
func (w *world) requireRetryWrites(r *controllertest.Reconciler, key string, container string, rid *api.ResourceID, edits ...edit) {
	w.t.Helper()
	w.synced()
	before := w.item(container, rid)
	_, err := r.Reconcile(key)
	require.NoError(w.t, err)
	require.Equal(w.t, controllertest.ExpectReplaced(w.t, before, edits...), controllertest.StoredTree(w.t, w.item(container, rid)))
}

// assertNextPoll checks that a periodic controller's pass comes back after its interval,
// put off by no more than the jitter.
func assertNextPoll(t *testing.T, interval time.Duration, result controller.Result, msgAndArgs ...any) {
	t.Helper()
	assert.GreaterOrEqual(t, result.RequeueAfter, interval, msgAndArgs...)
	assert.LessOrEqual(t, result.RequeueAfter, interval+time.Duration(controller.DefaultPeriodicJitter*float64(interval)), msgAndArgs...)
}
