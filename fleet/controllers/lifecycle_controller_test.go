package controllers

import (
	"time"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
)

func newTestLifecycle(e *env) *Lifecycle {
	l := NewLifecycle(e.inf, e.store)
	l.now = func() time.Time { return testNow }
	return l
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
		mc      seed
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
			mc:      fleetDoc(fixtureMC1, edit{"properties.status.conditions", remove}),
			written: []any{condition("Ready", "False", "RegistrationIncomplete", "Pending downstream registrations: ClustersServiceRegistered", testNow)},
		},
		{
			name:    "only Cluster Service registered: Ready",
			mc:      fleetDoc(fixtureMC1, edit{"properties.status.conditions", []any{csTrue}}),
			written: []any{csTrue, condition("Ready", "True", "AllRegistered", "All downstream registrations completed successfully", testNow)},
		},
		{
			name:    "Cluster Service registration failed: Ready turns False",
			mc:      fleetDoc(fixtureMC1, edit{"properties.status.conditions", []any{csFalse, maestroTrue, readyTrue}}),
			written: []any{csFalse, maestroTrue, condition("Ready", "False", "RegistrationIncomplete", "Pending downstream registrations: ClustersServiceRegistered", testNow)},
		},
		{
			name:    "a foreign registration that is not True holds Ready back",
			mc:      fleetDoc(fixtureMC1, edit{"properties.status.conditions", []any{csTrue, maestroFalse, readyTrue}}),
			written: []any{csTrue, maestroFalse, condition("Ready", "False", "RegistrationIncomplete", "Pending downstream registrations: MaestroRegistered", testNow)},
		},
		{
			name:    "registered after all: Ready turns True",
			mc:      fleetDoc(fixtureMC1, edit{"properties.status.conditions", []any{csTrue, readyFalse}}),
			written: []any{csTrue, condition("Ready", "True", "AllRegistered", "All downstream registrations completed successfully", testNow)},
		},
		{
			name: "a changed list of pending registrations rewrites the message, not the transition time",
			mc: fleetDoc(fixtureMC1, edit{"properties.status.conditions", []any{csFalse, maestroFalse, readyFalse}},
				edit{"properties.status.futureField", map[string]any{"kept": true}}),
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
			e := newEnv(t, tc.mc)
			before := e.item(api.FleetContainer, id)
			result, err := newTestLifecycle(e).Reconcile(e.as(LifecycleControllerName), id.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{}, result)

			after := e.item(api.FleetContainer, id)
			if tc.written == nil {
				assert.Equal(t, before.ETag, after.ETag, "nothing is written")
				replaces, _ := e.store.writes()
				assert.Empty(t, replaces)
				return
			}
			assert.Equal(t, expectReplaced(t, before, edit{"properties.status.conditions", tc.written}), storedTree(t, after))
		})
	}
}

func TestLifecycleMissingOrDeletedManagementCluster(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fleetDoc(fixtureMC3, edit{"properties.status.conditions", remove},
		edit{"deletionTimestamp", "2026-08-30T00:00:00Z"}))
	l := newTestLifecycle(e)
	for _, key := range []string{mc1.Key(), mc3.Key()} {
		result, err := l.Reconcile(e.as(LifecycleControllerName), key)
		require.NoError(t, err)
		assert.Equal(t, controller.Result{}, result)
	}
	replaces, creates := e.store.writes()
	assert.Empty(t, replaces)
	assert.Empty(t, creates)
}

// A 412 is not an error but a requeue; the change feed brings the newer document, and the
// next pass works from it.
func TestLifecycleConflictRetriesFromTheCache(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fleetDoc(fixtureMC1, edit{"properties.status.conditions", remove}))
	l := newTestLifecycle(e)
	csTrue := condition(api.ManagementClusterConditionClustersServiceRegistered, "True", "Registered", "Registration successful", testNow)
	e.loseNextReplace(api.FleetContainer, mc1, edit{"properties.status.conditions", []any{csTrue}})
	result, err := l.Reconcile(e.as(LifecycleControllerName), mc1.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{RequeueAfter: DefaultConflictRequeue}, result)
	e.requireLostRace()

	e.requireRetryWrites(LifecycleControllerName, l.Reconcile, mc1.Key(), api.FleetContainer, mc1,
		edit{"properties.status.conditions", []any{csTrue, condition("Ready", "True", "AllRegistered", "All downstream registrations completed successfully", testNow)}})
}
