package controllers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

func newTestReadDesire(e *world) *controllertest.Reconciler {
	return e.reconciler(capacityReadDesireDefinition(), nil)
}

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
				set("properties.spec.targetItem.name", "other"),
				set("properties.spec.targetItem.namespace", "default"),
				set("properties.spec.targetItem.futureField", "kept"),
				set("properties.spec.managementCluster", "/providers/microsoft.redhatopenshift/stamps/2/managementclusters/default"),
			},
			written: []edit{
				set("properties.spec.targetItem.name", "cluster"),
				unset("properties.spec.targetItem.namespace"),
				set("properties.spec.managementCluster", mc1.String()),
			},
		},
		{
			name:       "the management cluster's ID in another casing is left as it is",
			readDesire: []edit{set("properties.spec.managementCluster", "/providers/Microsoft.RedHatOpenShift/stamps/1/managementClusters/default")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			seeds := []controllertest.Seed{fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1)}
			if tc.readDesire != nil {
				seeds = append(seeds, kubeApplierDoc(fixtureReadDesire1, tc.readDesire...))
			}
			e := newWorld(t, seeds...)
			before := e.item(kubeApplierOfStamp1, capacityReadDesireOf1)
			result, err := newTestReadDesire(e).Reconcile(mc1.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{}, result)
			replaces, creates := e.hooks.Writes()
			assert.Empty(t, creates)
			if tc.written == nil {
				assert.Empty(t, replaces, "nothing is written")
				return
			}
			require.Len(t, replaces, 1)
			assert.Equal(t, controllertest.ExpectReplaced(t, before, tc.written...), controllertest.StoredTree(t, e.item(kubeApplierOfStamp1, capacityReadDesireOf1)))
		})
	}
}

// A created ReadDesire is ARO-HCP's, field for field, up to what kube-applier adds.
func TestCapacityReadDesireCreatesTheReadDesire(t *testing.T) {
	t.Parallel()
	e := newWorld(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1))
	result, err := newTestReadDesire(e).Reconcile(mc1.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{}, result)

	want := controllertest.WithoutSystem(controllertest.Tree(t, controllertest.ApplyEdits(t, arohcp.Get(fixtureReadDesire1),
		unset("properties.status"),
		unset("properties.cosmosMetadata.etag"),
		set("properties.cosmosMetadata.instanceVersion", 1),
	)))
	assert.Equal(t, want, controllertest.StoredTree(t, e.item(kubeApplierOfStamp1, capacityReadDesireOf1)))

	// A second pass finds it and writes nothing.
	_, err = newTestReadDesire(e).Reconcile(mc1.Key())
	require.NoError(t, err)
	replaces, creates := e.hooks.Writes()
	assert.Empty(t, replaces)
	assert.Len(t, creates, 1)
}

func TestCapacityReadDesireWaitsForTheContainerName(t *testing.T) {
	t.Parallel()
	e := newWorld(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1, unset("properties.status.kubeApplierCosmosContainerName")))
	result, err := newTestReadDesire(e).Reconcile(mc1.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{}, result, "the MC's update brings it back")
	_, creates := e.hooks.Writes()
	assert.Empty(t, creates)
}

// No change feed watches the kube-applier container, so a 412 there is retried on a timer.
func TestCapacityReadDesireConflictRequeues(t *testing.T) {
	t.Parallel()
	e := newWorld(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1),
		kubeApplierDoc(fixtureReadDesire1, set("properties.spec.targetItem.name", "other")))
	e.hooks.LoseNextReplace(t, e.Kit, kubeApplierOfStamp1, capacityReadDesireOf1, unset("properties.status.kubeContent"))
	d := newTestReadDesire(e)
	result, err := d.Reconcile(mc1.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{RequeueAfter: DefaultConflictRequeue}, result)
	e.hooks.RequireLostRace(t)

	e.requireRetryWrites(d, mc1.Key(), kubeApplierOfStamp1, capacityReadDesireOf1, set("properties.spec.targetItem.name", "cluster"))
}
