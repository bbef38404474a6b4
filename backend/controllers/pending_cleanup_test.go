package controllers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/backend/controllers/flowtest"
	"github.com/hcpsched/hcpsched/internal/api"
)

// unmappableHREF is a legacy clusterServiceID Cluster Service does not know.
const unmappableHREF = "/api/clusters_mgmt/v1/clusters/1243e9e9-d150-4ef1-9735-2bbc3cabc7d0"

func TestPendingCleanupRules(t *testing.T) {
	e := newPlacementEnv(t)
	here := flowtest.CreateManagementCluster(t, e.fleet, "1", "")
	elsewhere := flowtest.CreateManagementCluster(t, e.fleet, "2", "")

	type entry struct {
		name    string
		cluster func(*api.Cluster) // nil: not stored
		noSPC   bool
		spec    *api.ResourceID
		status  *api.ResourceID
		// unmappable: placement recorded that the cluster's clusterServiceID does not resolve.
		unmappable bool
		wantKeep   bool
	}
	alive := func(*api.Cluster) {}
	entries := []entry{
		{name: "spc-gone", cluster: alive, noSPC: true, wantKeep: false},
		{name: "observed-here", cluster: alive, status: here, wantKeep: true},
		{name: "intended-here", cluster: alive, spec: here, wantKeep: true},
		{name: "observed-elsewhere-wins", cluster: alive, spec: here, status: elsewhere, wantKeep: false},
		{name: "intended-elsewhere", cluster: alive, spec: elsewhere, wantKeep: false},
		{name: "in-flight", cluster: alive, wantKeep: true},
		{name: "deleting", cluster: func(c *api.Cluster) {
			c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateDeleting
		}, wantKeep: false},
		{name: "failed", cluster: func(c *api.Cluster) {
			c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateFailed
		}, wantKeep: false},
		{name: "cluster-not-cached", cluster: nil, wantKeep: true},
		// Finding 2: a cluster that ended releases its reservation wherever it was placed.
		{name: "failed-after-placed-here", cluster: func(c *api.Cluster) {
			c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateFailed
		}, spec: here, wantKeep: false},
		{name: "deleting-after-observed-here", cluster: func(c *api.Cluster) {
			c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateDeleting
		}, spec: here, status: here, wantKeep: false},
		{name: "unmappable", cluster: withClusterServiceID(unmappableHREF), unmappable: true, wantKeep: false},
	}
	pending := []string{"", "not a resource ID"}
	var want []string
	for _, en := range entries {
		rid := clusterID("Cleanup-" + en.name)
		if en.cluster != nil {
			flowtest.StoreCluster(t, e.resources, newCluster(rid, en.cluster))
		}
		if !en.noSPC {
			storeSPC(t, e.resources, rid, func(s *api.ServiceProviderCluster) {
				if en.spec != nil {
					s.Properties.Spec.ManagementClusterResourceID = en.spec.String()
				}
				if en.status != nil {
					s.Properties.Status.ManagementClusterResourceID = en.status.String()
				}
				if en.unmappable {
					setCapacityCondition(s, api.ConditionFalse, ReasonClusterServiceIDUnmappable, UnmappableMessage(unmappableHREF), time.Now())
				}
			})
		}
		pending = append(pending, rid.Key())
		if en.wantKeep {
			want = append(want, rid.Key())
		}
	}
	flowtest.StoreScheduling(t, e.fleet, here, 300, 0, pending...)
	e.startCaches(t)
	require.Eventually(t, func() bool {
		return len(e.deps.Informers.ServiceProviderClusters.Lister().List()) == len(entries)-1 &&
			len(e.deps.Informers.ManagementClusterSchedulings.Lister().List()) == 1
	}, waitFor, tick)

	cleanup := &pendingCleanupController{d: e.deps}
	_, err := cleanup.reconcile(e.reconcileCtx(t, PendingCleanupName), here.Key())
	require.NoError(t, err)
	after := getScheduling(t, e.fleet, here)
	assert.Equal(t, want, after.Properties.Status.PendingAssignedClusters, "kept in order: %v", want)

	// Nothing changed: nothing is written, even from a stale cache.
	require.Eventually(t, func() bool {
		s, err := e.deps.Informers.ManagementClusterSchedulings.Lister().Get(api.SchedulingResourceID(here).String())
		return err == nil && s.ETag == after.ETag
	}, waitFor, tick)
	_, err = cleanup.reconcile(e.reconcileCtx(t, PendingCleanupName), here.Key())
	require.NoError(t, err)
	assert.Equal(t, after.ETag, getScheduling(t, e.fleet, here).ETag, "no write when nothing changed")
}
