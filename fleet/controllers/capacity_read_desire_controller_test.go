package controllers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

var capacityReadDesireOf1 = api.CapacityReadDesireResourceID(mc1)

func TestCapacityReadDesire(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		readDesire []edit // nil: no ReadDesire stored
		// written are the edits of the one replace; nil means none.
		written []edit
	}{
		{
			name:       "the ReadDesire as ARO-HCP's fleet creates it, mirrored by kube-applier: nothing to do",
			readDesire: []edit{},
		},
		{
			name: "a wrong target is pointed back at the CapacityReport, keeping kube-applier's status and unknown fields",
			readDesire: []edit{
				{"properties.spec.targetItem.name", "other"},
				{"properties.spec.targetItem.namespace", "default"},
				{"properties.spec.targetItem.futureField", "kept"},
				{"properties.spec.managementCluster", "/providers/microsoft.redhatopenshift/stamps/2/managementclusters/default"},
			},
			written: []edit{
				{"properties.spec.targetItem.name", "cluster"},
				{"properties.spec.targetItem.namespace", remove},
				{"properties.spec.managementCluster", mc1.String()},
			},
		},
		{
			name:       "the management cluster's ID in another casing is left as it is",
			readDesire: []edit{{"properties.spec.managementCluster", "/providers/Microsoft.RedHatOpenShift/stamps/1/managementClusters/default"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			seeds := []seed{fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1)}
			if tc.readDesire != nil {
				seeds = append(seeds, kubeApplierDoc(fixtureReadDesire1, tc.readDesire...))
			}
			e := newEnv(t, seeds...)
			before := e.item(kubeApplierOfStamp1, capacityReadDesireOf1)
			result, err := NewCapacityReadDesire(e.inf, e.store).Reconcile(e.as(CapacityReadDesireControllerName), mc1.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{}, result)
			replaces, creates := e.store.writes()
			assert.Empty(t, creates)
			if tc.written == nil {
				assert.Empty(t, replaces, "nothing is written")
				return
			}
			require.Len(t, replaces, 1)
			assert.Equal(t, expectReplaced(t, before, tc.written...), storedTree(t, e.item(kubeApplierOfStamp1, capacityReadDesireOf1)))
		})
	}
}

// A created ReadDesire is ARO-HCP's, field for field, up to what kube-applier adds.
func TestCapacityReadDesireCreatesTheReadDesire(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1))
	result, err := NewCapacityReadDesire(e.inf, e.store).Reconcile(e.as(CapacityReadDesireControllerName), mc1.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{}, result)

	want := withoutSystem(tree(t, applyEdits(t, arohcp.Get(fixtureReadDesire1),
		edit{"properties.status", remove},
		edit{"properties.cosmosMetadata.etag", remove},
		edit{"properties.cosmosMetadata.instanceVersion", 1},
	)))
	assert.Equal(t, want, storedTree(t, e.item(kubeApplierOfStamp1, capacityReadDesireOf1)))

	// A second pass finds it and writes nothing.
	_, err = NewCapacityReadDesire(e.inf, e.store).Reconcile(e.as(CapacityReadDesireControllerName), mc1.Key())
	require.NoError(t, err)
	replaces, creates := e.store.writes()
	assert.Empty(t, replaces)
	assert.Len(t, creates, 1)
}

func TestCapacityReadDesireWaitsForTheContainerName(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1, edit{"properties.status.kubeApplierCosmosContainerName", remove}))
	result, err := NewCapacityReadDesire(e.inf, e.store).Reconcile(e.as(CapacityReadDesireControllerName), mc1.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{}, result, "the MC's update brings it back")
	_, creates := e.store.writes()
	assert.Empty(t, creates)
}

// No change feed watches the kube-applier container, so a 412 there is retried on a timer.
func TestCapacityReadDesireConflictRequeues(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1),
		kubeApplierDoc(fixtureReadDesire1, edit{"properties.spec.targetItem.name", "other"}))
	e.loseNextReplace(kubeApplierOfStamp1, capacityReadDesireOf1, edit{"properties.status.kubeContent", remove})
	d := NewCapacityReadDesire(e.inf, e.store)
	result, err := d.Reconcile(e.as(CapacityReadDesireControllerName), mc1.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{RequeueAfter: DefaultConflictRequeue}, result)
	e.requireLostRace()

	e.requireRetryWrites(CapacityReadDesireControllerName, d.Reconcile, mc1.Key(), kubeApplierOfStamp1, capacityReadDesireOf1, edit{"properties.spec.targetItem.name", "cluster"})
}
