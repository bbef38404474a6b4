package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
)

const drainSubscription = "00000000-0000-0000-0000-000000000001"

func drainClusterID(name string) *api.ResourceID {
	return api.MustParseResourceID("/subscriptions/" + drainSubscription + "/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name)
}

// storeClusterOfKind stores the cluster the frontend writes for a PUT of name, of kind k.
func (r *testRegion) storeClusterOfKind(t *testing.T, name string, k frontend.Kind, edit func(*api.Cluster)) *api.ResourceID {
	t.Helper()
	rid := drainClusterID(name)
	c, err := frontend.ClusterOfKindAt(rid, "mrg-"+name, k, r.now)
	require.NoError(t, err)
	if edit != nil {
		edit(c)
	}
	return controllertest.StoreCluster(t, r.resources(), c)
}

// storeSPC stores the cluster's ServiceProviderCluster with placement's intent and the
// placement Cluster Service was observed to make ("" for none).
func (r *testRegion) storeSPC(t *testing.T, cluster *api.ResourceID, intent, observed *api.ResourceID) {
	t.Helper()
	p := api.ServiceProviderClusterProperties{Spec: &api.ServiceProviderClusterSpec{}, Status: &api.ServiceProviderClusterStatus{}}
	if intent != nil {
		p.Spec.ManagementClusterResourceID = intent.String()
		p.Spec.ManagementClusterPlacementTime = r.reportedAt.Add(-time.Hour)
	}
	if observed != nil {
		p.Status.ManagementClusterResourceID = observed.String()
	}
	_, err := database.Create(t.Context(), r.resources(), api.NewDocument(api.ServiceProviderClusterResourceID(cluster), drainSubscription, p))
	require.NoError(t, err)
}

// etags are every stored document's etag, by container and id.
func (r *testRegion) etags(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range []database.Container{r.fleet(), r.resources()} {
		for _, typ := range []string{api.ManagementClusterResourceType, api.ManagementClusterSchedulingResourceType, api.ClusterResourceType, api.ServiceProviderClusterResourceType} {
			for item, err := range c.List(t.Context(), database.ListOptions{ResourceType: typ}) {
				require.NoError(t, err)
				out[c.Name()+"/"+item.ID] = item.ETag
			}
		}
	}
	return out
}

// drain-plan plans every cluster of the MC, costliest first, and charges each move to
// its destination before planning the next: a and b each fit on stamp 2 alone, but not
// together, so b is stuck once a is planned there. It writes nothing.
func TestDrainPlanEmulator(t *testing.T) {
	r := newTestRegion(t)
	c := drainClusterID("c")
	mc1 := r.mc(t, "1", 64, 10, c.String())
	mc2 := r.mc(t, "2", 32, 27) // room for one SWIFT HA cluster (3 NICs) of 5
	r.mc(t, "3", 32, 31)        // room for a single-replica one (1 NIC)

	swiftHA := frontend.Kind{Swift: true}
	a := r.storeClusterOfKind(t, "a", swiftHA, nil)
	r.storeSPC(t, a, mc1, mc1)
	b := r.storeClusterOfKind(t, "b", swiftHA, nil)
	r.storeSPC(t, b, mc1, nil)
	r.storeClusterOfKind(t, "c", frontend.Kind{Swift: true, SingleReplica: true}, nil) // reserved on 1, no SPC yet
	d := r.storeClusterOfKind(t, "d", frontend.Kind{}, nil)
	r.storeSPC(t, d, mc1, mc1)
	e := r.storeClusterOfKind(t, "e", swiftHA, func(c *api.Cluster) {
		deleted := r.now.Add(-time.Minute)
		c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateDeleting
		c.Properties.ServiceProviderProperties.DeletionTimestamp = &deleted
	})
	r.storeSPC(t, e, mc1, mc1)
	f := r.storeClusterOfKind(t, "f", swiftHA, nil)
	r.storeSPC(t, f, mc2, mc1) // a mismatch: observed on 1
	r.storeSPC(t, r.storeClusterOfKind(t, "elsewhere", swiftHA, nil), mc2, mc2)

	// Alone, a and b each fit on stamp 2.
	for _, cluster := range []*api.ResourceID{a, b} {
		require.Empty(t, verdictOn(t, r.decide(t, cluster), "2").Reason, "%s fits on stamp 2 alone", cluster.Name())
	}

	before := r.etags(t)
	hooks := &controllertest.Hooks{}
	out, errOut, code := r.cliThrough(t, hooks.Wrap, "drain-plan", "1")
	require.Equal(t, exitOK, code, errOut)
	want := `drain plan for stamp 1 (/providers/microsoft.redhatopenshift/stamps/1/managementclusters/default): what-if only, nothing is written

CLUSTER  KIND                  COST(aro.openshift.io/swift-nic)  ON               DESTINATION
rg/a     SWIFT HA              3                                 intent,observed  2
rg/b     SWIFT HA              3                                 intent           nowhere: 0 of 3 management clusters fit: stamp 1: Unschedulable (cordoned); stamp 2: InsufficientCapacity (aro.openshift.io/swift-nic 2 available, 3 needed); stamp 3: InsufficientCapacity (aro.openshift.io/swift-nic 1 available, 3 needed)
rg/e     SWIFT HA              3                                 intent,observed  not planned: the cluster is being deleted: nothing to move
rg/f     SWIFT HA              3                                 observed         nowhere: 0 of 3 management clusters fit: stamp 1: Unschedulable (cordoned); stamp 2: InsufficientCapacity (aro.openshift.io/swift-nic 2 available, 3 needed); stamp 3: InsufficientCapacity (aro.openshift.io/swift-nic 1 available, 3 needed)
rg/c     SWIFT single-replica  1                                 reserved         3
rg/d     non-SWIFT HA          0                                 intent,observed  3

6 clusters: 3 movable, 2 stuck, 1 being deleted (not planned); to stamp 2: 1, stamp 3: 2
Planned costliest first (compared resource by resource, in the order of --placement-resource-costs), then by lowercased resource ID; stamp 1 counted as cordoned; each move is charged to its destination before the next is planned.
`
	assert.Equal(t, want, out)

	out, errOut, code = r.cliThrough(t, hooks.Wrap, "drain-plan", mc1.String(), "-o", "json")
	require.Equal(t, exitOK, code, errOut)
	var plan drainPlan
	require.NoError(t, json.Unmarshal([]byte(out), &plan))
	assert.Equal(t, []int{3, 2, 1}, []int{plan.Movable, plan.Stuck, plan.LeftOut})
	assert.Equal(t, []drainDestination{{ManagementCluster: mc2.String(), Stamp: "2", Clusters: 1},
		{ManagementCluster: api.ManagementClusterResourceID("3").String(), Stamp: "3", Clusters: 2}}, plan.Destinations)
	require.Len(t, plan.Clusters, 6)
	assert.Equal(t, drainMove{ResourceID: b.String(), Kind: "SWIFT HA", Cost: []string{"3"}, On: []string{"intent"}, Outcome: "capacity_exhausted",
		Reason: "0 of 3 management clusters fit: stamp 1: Unschedulable (cordoned); stamp 2: InsufficientCapacity (aro.openshift.io/swift-nic 2 available, 3 needed); stamp 3: InsufficientCapacity (aro.openshift.io/swift-nic 1 available, 3 needed)"},
		plan.Clusters[1])
	assert.Equal(t, c.String(), plan.Clusters[4].ResourceID)
	assert.Equal(t, []string{"reserved"}, plan.Clusters[4].On)

	// YAML renders the same plan.
	out, errOut, code = r.cliThrough(t, hooks.Wrap, "drain-plan", "1", "-o", "yaml")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "movable: 3\n")

	replaces, creates := hooks.Writes()
	assert.Empty(t, replaces, "drain-plan replaces nothing")
	assert.Empty(t, creates, "drain-plan creates nothing")
	assert.Equal(t, before, r.etags(t), "every stored document is as it was")
}
