package controllers

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/backend/controllers/flowtest"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/placement"
)

func getScheduling(t testing.TB, fleet database.Container, mc *api.ResourceID) *api.ManagementClusterScheduling {
	t.Helper()
	pk, err := api.FleetPartitionKey(mc)
	require.NoError(t, err)
	s, err := database.Get[api.ManagementClusterSchedulingProperties](t.Context(), fleet, pk, api.SchedulingResourceID(mc).String())
	require.NoError(t, err)
	return s
}

func capacityCondition(spc *api.ServiceProviderCluster) *api.Condition {
	if spc.Properties.Status == nil || spc.Properties.Status.Placement == nil {
		return nil
	}
	return api.FindCondition(spc.Properties.Status.Placement.Conditions, placement.ConditionCapacityAvailable)
}

func (e *testEnv) attempts(outcome placement.Outcome) float64 {
	return testutil.ToFloat64(e.deps.PlacementMetrics.attempts.WithLabelValues(string(outcome)))
}

func newPlacementEnv(t *testing.T) *testEnv {
	e := newTestEnv(t)
	e.placement = true
	m, err := NewPlacementMetrics(e.reg)
	require.NoError(t, err)
	e.deps.PlacementMetrics = m
	e.deps.Placement = placement.DefaultConfig()
	require.NoError(t, e.reg.Register(NewCapacityCollector(e.deps.Informers, e.deps.Placement)))
	return e
}

// The whole flow with real placement: the reservation, the recorded intent, and a CS
// create pinned to the shard of the MC placement chose.
func TestPlacementHappyPath(t *testing.T) {
	e := newPlacementEnv(t)
	full := flowtest.CreateManagementCluster(t, e.fleet, "1", flowtest.RegisterShard(t, e.csClient, 1))
	roomy := flowtest.CreateManagementCluster(t, e.fleet, "2", flowtest.RegisterShard(t, e.csClient, 2))
	flowtest.StoreScheduling(t, e.fleet, full, 30, 28)
	flowtest.StoreScheduling(t, e.fleet, roomy, 30, 3)
	e.run(t)

	cluster := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("Placed")))
	spc := flowtest.WaitForSPC(t, e.resources, cluster, waitFor, "placed", func(s *api.ServiceProviderCluster) bool {
		return s.Properties.IntendedManagementCluster() != ""
	})
	assert.Equal(t, roomy.String(), spc.Properties.Spec.ManagementClusterResourceID)
	assert.False(t, spc.Properties.Spec.ManagementClusterPlacementTime.IsZero())
	cond := capacityCondition(spc)
	require.NotNil(t, cond)
	assert.Equal(t, api.ConditionTrue, cond.Status)
	assert.Equal(t, placement.ConditionReasonAvailable, cond.Reason)
	assert.Equal(t, []string{cluster.Key()}, getScheduling(t, e.fleet, roomy).Properties.Status.PendingAssignedClusters, "reserved on the chosen MC")
	assert.Empty(t, getScheduling(t, e.fleet, full).Properties.Status.PendingAssignedClusters)

	require.Eventually(t, func() bool { return len(flowtest.CreatedClusters(t, e.cs)) == 1 }, waitFor, tick)
	onShard, err := e.cs.ClustersOnShard(mustShardOf(t, e, roomy))
	require.NoError(t, err)
	require.Len(t, onShard, 1)
	assert.Equal(t, flowtest.CreatedClusters(t, e.cs)[0].ID, onShard[0].ID(), "CS put it on the chosen MC's shard")
	assert.Equal(t, 1.0, e.attempts(placement.OutcomePlaced))

	// The capacity gauges read the caches.
	assert.Equal(t, 24.0, gaugeByMC(t, e, "backend_management_cluster_available_capacity", roomy.Key()), "30 − 3 used − 3 reserved")
	assert.Equal(t, 1.0, gaugeByMC(t, e, "backend_management_cluster_pending_reservations", roomy.Key()))
}

// gaugeByMC reads one series of a gathered gauge by its MC label; -1 when absent.
func gaugeByMC(t *testing.T, e *testEnv, name, mc string) float64 {
	t.Helper()
	families, err := e.reg.Gather()
	require.NoError(t, err)
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "management_cluster_resource_id" && l.GetValue() == mc {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

// Waiting for capacity: the reason is recorded once, the wait is not an error, and the
// cluster is placed soon after capacity appears.
func TestPlacementWaitsForCapacity(t *testing.T) {
	e := newPlacementEnv(t)
	mc := flowtest.CreateManagementCluster(t, e.fleet, "1", flowtest.RegisterShard(t, e.csClient, 1))
	flowtest.StoreScheduling(t, e.fleet, mc, 30, 29)
	e.run(t)
	cluster := flowtest.StoreCluster(t, e.resources, newCluster(clusterID("Waiting")))

	spc := flowtest.WaitForSPC(t, e.resources, cluster, waitFor, "waiting condition", func(s *api.ServiceProviderCluster) bool {
		c := capacityCondition(s)
		return c != nil && c.Status == api.ConditionFalse
	})
	cond := capacityCondition(spc)
	assert.Equal(t, placement.ConditionReasonInsufficientCapacity, cond.Reason)
	assert.Contains(t, cond.Message, "stamp 1: InsufficientCapacity (aro.openshift.io/swift-nic 1 available, 3 needed)")
	require.Eventually(t, func() bool { return e.attempts(placement.OutcomeCapacityExhausted) >= 3 }, waitFor, tick, "evaluated again after each wait")
	assert.Equal(t, spc.ETag, flowtest.GetSPC(t, e.resources, cluster).ETag, "an unchanged condition is not rewritten")
	assert.Zero(t, e.reconciles(t, PlacementName, "error"), "waiting is not an error")

	// Capacity appears: the fleet lowers usage.
	sched := getScheduling(t, e.fleet, mc)
	sched.Properties.Status.ObservedResources.Usage[api.SwiftNIC] = "20"
	_, err := database.Replace(t.Context(), e.fleet, sched)
	require.NoError(t, err)
	flowtest.WaitForSPC(t, e.resources, cluster, waitFor, "placed after capacity appeared", func(s *api.ServiceProviderCluster) bool {
		return s.Properties.IntendedManagementCluster() == mc.String()
	})
}

// A reservation a crash left behind is reused, not doubled.
func TestPlacementReusesReservation(t *testing.T) {
	e := newPlacementEnv(t)
	cluster := clusterID("Crashed")
	roomy := flowtest.CreateManagementCluster(t, e.fleet, "1", "shard-1")
	reserved := flowtest.CreateManagementCluster(t, e.fleet, "2", "shard-2")
	flowtest.StoreScheduling(t, e.fleet, roomy, 300, 0)
	flowtest.StoreScheduling(t, e.fleet, reserved, 30, 0, cluster.Key())
	// The cluster and its SPC were stored before the crash, with the reservation.
	flowtest.StoreCluster(t, e.resources, newCluster(cluster))
	storeSPC(t, e.resources, cluster)
	e.run(t)
	flowtest.WaitForSPC(t, e.resources, cluster, waitFor, "placed", func(s *api.ServiceProviderCluster) bool {
		return s.Properties.IntendedManagementCluster() == reserved.String()
	})
	assert.Equal(t, []string{cluster.Key()}, getScheduling(t, e.fleet, reserved).Properties.Status.PendingAssignedClusters)
	assert.Empty(t, getScheduling(t, e.fleet, roomy).Properties.Status.PendingAssignedClusters)
}

// Old records are never freshly placed: their intent is the MC owning the CS cluster's
// shard. A pending ID CS has never seen means a new cluster.
func TestPlacementOfClustersClusterServiceKnows(t *testing.T) {
	tests := []struct {
		name        string
		csKnows     bool
		asPending   bool
		wantOnShard bool
	}{
		{"clusterServiceID", true, false, true},
		{"pending ID CS knows", true, true, true},
		{"pending ID CS does not know", false, true, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newPlacementEnv(t)
			owner := flowtest.CreateManagementCluster(t, e.fleet, "1", flowtest.RegisterShard(t, e.csClient, 1))
			other := flowtest.CreateManagementCluster(t, e.fleet, "2", flowtest.RegisterShard(t, e.csClient, 2))
			flowtest.StoreScheduling(t, e.fleet, owner, 30, 27)
			flowtest.StoreScheduling(t, e.fleet, other, 300, 0)
			csID := clusterservice.NewClusterID()
			href, err := clusterservice.ClusterHREF(csID)
			require.NoError(t, err)
			rid := clusterID(fmt.Sprintf("Old%d", i))
			c := newCluster(rid, func(c *api.Cluster) {
				if tt.asPending {
					c.Properties.ServiceProviderProperties.PendingClusterServiceID = href
				} else {
					c.Properties.ServiceProviderProperties.ClusterServiceID = href
					c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateSucceeded
				}
			})
			if tt.csKnows {
				postCluster(t, e, c, csID, mustShardOf(t, e, owner))
			}
			flowtest.StoreCluster(t, e.resources, c)
			// Only placement runs: the old record already has its SPC.
			storeSPC(t, e.resources, rid)
			e.runOnly(t, PlacementName)
			spc := flowtest.WaitForSPC(t, e.resources, rid, waitFor, "intent set", func(s *api.ServiceProviderCluster) bool {
				return s.Properties.IntendedManagementCluster() != ""
			})
			if tt.wantOnShard {
				assert.Equal(t, owner.String(), spc.Properties.Spec.ManagementClusterResourceID, "the MC of the CS cluster's shard")
				assert.True(t, spc.Properties.Spec.ManagementClusterPlacementTime.IsZero(), "adoption is not a placement")
				assert.Empty(t, getScheduling(t, e.fleet, owner).Properties.Status.PendingAssignedClusters, "no reservation for an adopted cluster")
			} else {
				assert.Equal(t, other.String(), spc.Properties.Spec.ManagementClusterResourceID, "a new cluster is placed on capacity")
			}
		})
	}
}

func mustShardOf(t *testing.T, e *testEnv, mc *api.ResourceID) string {
	t.Helper()
	pk, err := api.FleetPartitionKey(mc)
	require.NoError(t, err)
	m, err := database.Get[api.ManagementClusterProperties](t.Context(), e.fleet, pk, mc.String())
	require.NoError(t, err)
	id, err := clusterservice.ParseShardHREF(m.Properties.Status.ClusterServiceProvisionShardID)
	require.NoError(t, err)
	return id
}

// postCluster creates a CS cluster pinned to a shard, as an older backend would have.
func postCluster(t *testing.T, e *testEnv, c *api.Cluster, id, shard string) {
	t.Helper()
	rid, err := c.ParsedResourceID()
	require.NoError(t, err)
	identity, missing := azureIdentity(c, rid)
	require.Empty(t, missing)
	body, err := clusterBody(id, rid.Name(), identity, shard)
	require.NoError(t, err)
	_, err = e.csClient.CreatePinnedCluster(t.Context(), body, shard)
	require.NoError(t, err)
}

// runOnly runs the named controllers.
func (e *testEnv) runOnly(t *testing.T, names ...string) {
	t.Helper()
	var defs []Definition
	for _, def := range Definitions() {
		for _, n := range names {
			if def.Name == n {
				defs = append(defs, def)
			}
		}
	}
	e.runDefinitions(t, defs)
}

func counterValue(c prometheus.Counter) float64 { return testutil.ToFloat64(c) }

// Deleting and ended clusters are never placed, and nothing is written for them.
func TestPlacementGates(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*api.Cluster)
		spec   bool
	}{
		{"deleting", func(c *api.Cluster) {
			c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateDeleting
		}, false},
		{"delete requested", func(c *api.Cluster) {
			ts := time.Now().UTC()
			c.Properties.ServiceProviderProperties.DeletionTimestamp = &ts
		}, false},
		{"failed", func(c *api.Cluster) {
			c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateFailed
		}, false},
		{"canceled", func(c *api.Cluster) {
			c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateCanceled
		}, false},
		{"already placed", func(*api.Cluster) {}, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newPlacementEnv(t)
			mc := flowtest.CreateManagementCluster(t, e.fleet, "1", flowtest.RegisterShard(t, e.csClient, 1))
			flowtest.StoreScheduling(t, e.fleet, mc, 30, 0)
			rid := clusterID(fmt.Sprintf("Gated%d", i))
			flowtest.StoreCluster(t, e.resources, newCluster(rid, tt.mutate))
			storeSPC(t, e.resources, rid, func(s *api.ServiceProviderCluster) {
				if tt.spec {
					s.Properties.Spec.ManagementClusterResourceID = mc.String()
				}
			})
			e.startCaches(t)
			require.Eventually(t, func() bool {
				return len(e.deps.Informers.ServiceProviderClusters.Lister().List()) == 1 && len(e.deps.Informers.ManagementClusterSchedulings.Lister().List()) == 1
			}, waitFor, tick)
			before := resourcesSnapshot(t, e.resources)
			p := &placementController{d: e.deps, s: Settings{RequeueAfter: testRequeueAfter},
				clusters: e.deps.Informers.Clusters.Lister(), spcs: e.deps.Informers.ServiceProviderClusters.Lister(), mcs: e.deps.Informers.ManagementClusters.Lister()}
			res, err := p.reconcile(e.reconcileCtx(t, PlacementName), rid.Key())
			require.NoError(t, err)
			assert.Zero(t, res.RequeueAfter)
			assert.Equal(t, before, resourcesSnapshot(t, e.resources), "nothing written")
			assert.Empty(t, getScheduling(t, e.fleet, mc).Properties.Status.PendingAssignedClusters, "nothing reserved")
		})
	}
}
