package controllers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/placement"
)

func TestPendingCleanupRules(t *testing.T) {
	w := newWorld(t)
	here := controllertest.CreateManagementCluster(t, w.Fleet, "1", "")
	elsewhere := controllertest.CreateManagementCluster(t, w.Fleet, "2", "")

	type entry struct {
		name    string
		cluster func(*api.Cluster) // nil: not stored
		noSPC   bool
		spec    *api.ResourceID
		status  *api.ResourceID
		// unmappable: adoption recorded that the cluster's clusterServiceID does not resolve.
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
			controllertest.StoreCluster(t, w.Resources, newCluster(t, rid, en.cluster))
		}
		if !en.noSPC {
			controllertest.StoreSPC(t, w.Resources, rid, func(s *api.ServiceProviderCluster) {
				if en.spec != nil {
					s.Properties.Spec.ManagementClusterResourceID = en.spec.String()
				}
				if en.status != nil {
					s.Properties.Status.ManagementClusterResourceID = en.status.String()
				}
				if en.unmappable {
					setCapacityCondition(s, api.ConditionFalse, placement.ConditionReasonClusterServiceIDUnmappable, placement.UnmappableMessage(unmappableHREF), time.Now())
				}
			})
		}
		pending = append(pending, rid.Key())
		if en.wantKeep {
			want = append(want, rid.Key())
		}
	}
	controllertest.StoreScheduling(t, w.Fleet, here, 300, 0, pending...)
	cleanup := w.reconciler(t, pendingCleanupDefinition())
	w.Start(t)
	require.Len(t, w.Caches.ServiceProviderClusters().Lister().List(), len(entries)-1)
	require.Len(t, w.Caches.ManagementClusterSchedulings().Lister().List(), 1)

	_, err := cleanup.Reconcile(here.Key())
	require.NoError(t, err)
	after := getScheduling(t, w.Fleet, here)
	assert.Equal(t, want, after.Properties.Status.PendingAssignedClusters, "kept in order: %v", want)

	// Nothing changed: nothing is written. The cache holds the written document at once.
	s, err := w.Caches.ManagementClusterSchedulings().Lister().Get(api.SchedulingResourceID(here).String())
	require.NoError(t, err)
	require.Equal(t, after.ETag, s.ETag)
	_, err = cleanup.Reconcile(here.Key())
	require.NoError(t, err)
	assert.Equal(t, after.ETag, getScheduling(t, w.Fleet, here).ETag, "no write when nothing changed")
}

// A missing SPC is dropped only when the store confirms it: not found, or soft-deleted.
func TestReservationOfAConfirmedGoneSPCIsDropped(t *testing.T) {
	w, blind := newBlindWorld(t)
	mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", "")
	never := clusterID("NeverHadSPC")
	controllertest.StoreCluster(t, w.Resources, newCluster(t, never))
	softDeleted := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("SoftDeleted")))
	controllertest.StoreSPC(t, w.Resources, softDeleted)
	softDeleteSPC(t, w.Resources, softDeleted)
	blind.hide(spcItemID(softDeleted))
	controllertest.StoreScheduling(t, w.Fleet, mc, 30, 0, never.Key(), softDeleted.Key())
	cleanup := w.reconciler(t, pendingCleanupDefinition())
	w.Start(t)
	require.Len(t, w.Caches.ManagementClusterSchedulings().Lister().List(), 1)

	_, err := cleanup.Reconcile(mc.Key())
	require.NoError(t, err)
	assert.Empty(t, getScheduling(t, w.Fleet, mc).Properties.Status.PendingAssignedClusters)
	assert.Contains(t, w.Logs.String(), dropNoSPC)
}
