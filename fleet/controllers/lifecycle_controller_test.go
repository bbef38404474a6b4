package controllers

import (
	"time"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
)

func newTestLifecycle(e *world) *controllertest.Reconciler {
	return e.reconciler(lifecycleDefinition(), nil)
}

func TestLifecycleReady(t *testing.T) {
	t.Parallel()
	csTrue := condition(api.ManagementClusterConditionClustersServiceRegistered, "True", "Registered", "Registration successful", testNow.Add(-time.Hour))
	csFalse := condition(api.ManagementClusterConditionClustersServiceRegistered, "False", "RegistrationFailed", "cluster service answered 500", testNow.Add(-time.Hour))
	maestroTrue := condition("MaestroRegistered", "True", "Registered", "Registration successful", testNow.Add(-time.Hour))
	maestroFalse := condition("MaestroRegistered", "False", "RegistrationFailed", "consumer exists", testNow.Add(-time.Hour))
	readyTrue := condition("Ready", "True", "AllRegistered", "All downstream registrations completed successfully", testNow.Add(-time.Hour))
	readyFalse := condition("Ready", "False", "RegistrationIncomplete", "Pending downstream registrations: ClustersServiceRegistered", testNow.Add(-time.Hour))

	tests := []struct {
		name    string
		mc      controllertest.Seed
		id      *api.ResourceID // mc1 unless set
		written []any           // the conditions written; nil means nothing is written
	}{
		{
			name: "all registrations True and Ready True: nothing to write",
			mc:   fleetDoc(fixtureMC1),
		},
		{
			name: "CheckFailed registrations still count as registered",
			mc:   fleetDoc(fixtureMC3),
			id:   mc3,
		},
		{
			name:    "no conditions: the required Cluster Service registration is pending",
			mc:      fleetDoc(fixtureMC1, unset("properties.status.conditions")),
			written: []any{condition("Ready", "False", "RegistrationIncomplete", "Pending downstream registrations: ClustersServiceRegistered", testNow)},
		},
		{
			name:    "only Cluster Service registered: Ready",
			mc:      fleetDoc(fixtureMC1, set("properties.status.conditions", []any{csTrue})),
			written: []any{csTrue, condition("Ready", "True", "AllRegistered", "All downstream registrations completed successfully", testNow)},
		},
		{
			name:    "Cluster Service registration failed: Ready turns False",
			mc:      fleetDoc(fixtureMC1, set("properties.status.conditions", []any{csFalse, maestroTrue, readyTrue})),
			written: []any{csFalse, maestroTrue, condition("Ready", "False", "RegistrationIncomplete", "Pending downstream registrations: ClustersServiceRegistered", testNow)},
		},
		{
			name:    "a foreign registration that is not True holds Ready back",
			mc:      fleetDoc(fixtureMC1, set("properties.status.conditions", []any{csTrue, maestroFalse, readyTrue})),
			written: []any{csTrue, maestroFalse, condition("Ready", "False", "RegistrationIncomplete", "Pending downstream registrations: MaestroRegistered", testNow)},
		},
		{
			name:    "registered after all: Ready turns True",
			mc:      fleetDoc(fixtureMC1, set("properties.status.conditions", []any{csTrue, readyFalse})),
			written: []any{csTrue, condition("Ready", "True", "AllRegistered", "All downstream registrations completed successfully", testNow)},
		},
		{
			name: "a changed list of pending registrations rewrites the message, not the transition time",
			mc: fleetDoc(fixtureMC1, set("properties.status.conditions", []any{csFalse, maestroFalse, readyFalse}),
				set("properties.status.futureField", map[string]any{"kept": true})),
			written: []any{csFalse, maestroFalse, condition("Ready", "False", "RegistrationIncomplete", "Pending downstream registrations: ClustersServiceRegistered, MaestroRegistered", testNow.Add(-time.Hour))},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id := mc1
			if tc.id != nil {
				id = tc.id
			}
			e := newWorld(t, tc.mc)
			before := e.item(api.FleetContainer, id)
			result, err := newTestLifecycle(e).Reconcile(id.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{}, result)

			after := e.item(api.FleetContainer, id)
			if tc.written == nil {
				assert.Equal(t, before.ETag, after.ETag, "nothing is written")
				replaces, _ := e.hooks.Writes()
				assert.Empty(t, replaces)
				return
			}
			assert.Equal(t, controllertest.ExpectReplaced(t, before, set("properties.status.conditions", tc.written)), controllertest.StoredTree(t, after))
			cached, err := e.Caches.ManagementClusters().Lister().Get(id.String())
			require.NoError(t, err)
			assert.Equal(t, after.ETag, cached.ETag, "the write is in the cache at once")
		})
	}
}

func TestLifecycleMissingOrDeletedManagementCluster(t *testing.T) {
	t.Parallel()
	e := newWorld(t, fleetDoc(fixtureMC3, unset("properties.status.conditions"),
		set("deletionTimestamp", "2026-08-30T00:00:00Z")))
	l := newTestLifecycle(e)
	for _, key := range []string{mc1.Key(), mc3.Key()} {
		result, err := l.Reconcile(key)
		require.NoError(t, err)
		assert.Equal(t, controller.Result{}, result)
	}
	replaces, creates := e.hooks.Writes()
	assert.Empty(t, replaces)
	assert.Empty(t, creates)
}

// A 412 is not an error but a requeue; the change feed brings the newer document, and the
// next pass works from it.
func TestLifecycleConflictRetriesFromTheCache(t *testing.T) {
	t.Parallel()
	e := newWorld(t, fleetDoc(fixtureMC1, unset("properties.status.conditions")))
	l := newTestLifecycle(e)
	csTrue := condition(api.ManagementClusterConditionClustersServiceRegistered, "True", "Registered", "Registration successful", testNow)
	e.hooks.LoseNextReplace(t, e.Kit, api.FleetContainer, mc1, set("properties.status.conditions", []any{csTrue}))
	result, err := l.Reconcile(mc1.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{RequeueAfter: DefaultConflictRequeue}, result)
	e.hooks.RequireLostRace(t)

	e.requireRetryWrites(l, mc1.Key(), api.FleetContainer, mc1,
		set("properties.status.conditions", []any{csTrue, condition("Ready", "True", "AllRegistered", "All downstream registrations completed successfully", testNow)}))
}
