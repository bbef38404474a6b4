package controllers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// wakeWithin bounds how long after the change a waiting cluster may take to be placed:
// a few change-feed polls (controllertest.PollInterval) and the writes of one placement,
// with room for a loaded CI machine. The safety timer is an hour, so only a wake-up can
// place the cluster at all.
const wakeWithin = 5 * time.Second

// A cluster that fits nowhere waits for the change that makes it fit, not for a timer:
// each event below wakes it, and it is placed within a few change-feed polls.
func TestWaitingClusterIsWokenByTheChangeThatMakesItFit(t *testing.T) {
	listed := clusterID("ListedElsewhere")
	tests := []struct {
		name string
		// prepare stores the MC as it is while the cluster waits, started does what needs
		// the controllers running; change makes room.
		prepare func(t *testing.T, w *world, mc *api.ResourceID)
		started func(t *testing.T, w *world, mc *api.ResourceID)
		change  func(t *testing.T, w *world, mc *api.ResourceID)
	}{
		{
			name: "a report frees capacity",
			prepare: func(t *testing.T, w *world, mc *api.ResourceID) {
				controllertest.StoreScheduling(t, w.Fleet, mc, 30, 29)
			},
			change: func(t *testing.T, w *world, mc *api.ResourceID) {
				changeScheduling(t, w, mc, func(st *api.SchedulingStatus) { st.ObservedResources.Usage[api.SwiftNIC] = "20" })
			},
		},
		{
			name: "the scale ceiling rises",
			prepare: func(t *testing.T, w *world, mc *api.ResourceID) {
				controllertest.StoreScheduling(t, w.Fleet, mc, 30, 29)
			},
			change: func(t *testing.T, w *world, mc *api.ResourceID) {
				changeScheduling(t, w, mc, func(st *api.SchedulingStatus) { st.ScaleCeiling.Capacity[api.SwiftNIC] = "60" })
			},
		},
		{
			// Another cluster's reservation fills the MC; that cluster is deleted, so
			// PendingCleanup drops its reservation.
			name:    "a reservation is dropped",
			prepare: func(t *testing.T, w *world, mc *api.ResourceID) { controllertest.StoreScheduling(t, w.Fleet, mc, 3, 0) },
			started: func(t *testing.T, w *world, mc *api.ResourceID) {
				reserved := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("Reserved")))
				controllertest.WaitForSPC(t, w.Resources, reserved, waitFor, "the first cluster placed", func(s *api.ServiceProviderCluster) bool {
					return s.Properties.IntendedManagementCluster() == mc.String()
				})
			},
			change: func(t *testing.T, w *world, _ *api.ResourceID) {
				c := controllertest.GetCluster(t, w.Resources, clusterID("Reserved"))
				c.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateDeleting
				_, err := database.Replace(t.Context(), w.Resources, c)
				require.NoError(t, err)
			},
		},
		{
			name: "the capacity data is current again",
			prepare: func(t *testing.T, w *world, mc *api.ResourceID) {
				controllertest.StoreScheduling(t, w.Fleet, mc, 30, 0)
				changeScheduling(t, w, mc, func(st *api.SchedulingStatus) {
					api.SetCondition(&st.Conditions, api.Condition{Type: api.SchedulingConditionCapacityDataCurrent, Status: api.ConditionFalse, Reason: "ReportNotCurrent"}, time.Now())
				})
			},
			change: func(t *testing.T, w *world, mc *api.ResourceID) {
				changeScheduling(t, w, mc, func(st *api.SchedulingStatus) {
					api.SetCondition(&st.Conditions, api.Condition{Type: api.SchedulingConditionCapacityDataCurrent, Status: api.ConditionTrue, Reason: "DataCollected"}, time.Now())
					st.ObservedResources.LastReportedAt = time.Now().UTC().Truncate(time.Second)
				})
			},
		},
		{
			name: "the MC is uncordoned",
			prepare: func(t *testing.T, w *world, mc *api.ResourceID) {
				controllertest.StoreScheduling(t, w.Fleet, mc, 30, 0)
				changeManagementCluster(t, w, mc, func(p *api.ManagementClusterProperties) { p.Spec.SchedulingPolicy = api.Unschedulable })
			},
			change: func(t *testing.T, w *world, mc *api.ResourceID) {
				changeManagementCluster(t, w, mc, func(p *api.ManagementClusterProperties) { p.Spec.SchedulingPolicy = api.Schedulable })
			},
		},
		{
			name: "the MC becomes Ready",
			prepare: func(t *testing.T, w *world, mc *api.ResourceID) {
				controllertest.StoreScheduling(t, w.Fleet, mc, 30, 0)
				changeManagementCluster(t, w, mc, func(p *api.ManagementClusterProperties) { p.Status.Conditions[0].Status = api.ConditionFalse })
			},
			change: func(t *testing.T, w *world, mc *api.ResourceID) {
				changeManagementCluster(t, w, mc, func(p *api.ManagementClusterProperties) { p.Status.Conditions[0].Status = api.ConditionTrue })
			},
		},
		{
			// Charged as a SWIFT HA cluster while the cache lacks it; it has no VNet
			// integration, so it costs no NIC once its document arrives.
			name: "a cluster the MC lists turns out to take no swift NIC",
			prepare: func(t *testing.T, w *world, mc *api.ResourceID) {
				controllertest.StoreScheduling(t, w.Fleet, mc, 3, 0)
				changeScheduling(t, w, mc, func(st *api.SchedulingStatus) { st.NotReadyResourceIDs = []string{listed.String()} })
			},
			change: func(t *testing.T, w *world, _ *api.ResourceID) {
				c, err := frontend.ClusterOfKindAt(listed, "mrg-listed", frontend.Kind{}, time.Now())
				require.NoError(t, err)
				// Placed elsewhere long ago: it has a Cluster Service ID, so nothing places it.
				c.Properties.ServiceProviderProperties.ClusterServiceID = fixedHREF
				controllertest.StoreCluster(t, w.Resources, c)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			mc := controllertest.CreateManagementCluster(t, w.Fleet, "1", controllertest.RegisterShard(t, w.CSClient, 1))
			tt.prepare(t, w, mc)
			w.storeSubscription(t, controllertest.Tenant)
			cfg := map[string]controller.Settings{}
			for _, def := range Definitions() {
				cfg[def.Name] = testSettings(def)
			}
			s := cfg[PlacementName]
			s.RequeueAfter = time.Hour
			cfg[PlacementName] = s
			controllertest.Run(t, w.Kit, w.env, Definitions(), cfg)
			if tt.started != nil {
				tt.started(t, w, mc)
			}

			cluster := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("Waiting")))
			controllertest.WaitForSPC(t, w.Resources, cluster, waitFor, "waiting", func(s *api.ServiceProviderCluster) bool {
				c := capacityCondition(s)
				return c != nil && c.Status == api.ConditionFalse
			})
			controllertest.WaitForCluster(t, w.Resources, cluster, waitFor, "pending Cluster Service ID assigned",
				func(p api.ClusterServiceProviderProperties) bool { return p.PendingClusterServiceID != "" })
			// Nothing in flight: what decides the cluster again can only be the change.
			w.WaitQuiet(t, waitFor)
			require.Equal(t, 1, w.env.Waiting.Waiting(), "the cluster waits in the room")

			changed := time.Now()
			tt.change(t, w, mc)
			controllertest.WaitForSPC(t, w.Resources, cluster, wakeWithin, "placed once the change arrived", func(s *api.ServiceProviderCluster) bool {
				return s.Properties.IntendedManagementCluster() == mc.String()
			})
			t.Logf("placed %s after the change (change-feed poll every %s)", time.Since(changed).Round(time.Millisecond), controllertest.PollInterval)
			// The SPC is written before the attempt is counted.
			require.Eventually(t, func() bool { return w.attempts(placement.OutcomePlaced) == placed(tt.started != nil) }, waitFor, tick)
			assert.Zero(t, w.env.Waiting.Waiting(), "a placed cluster has left the room")
		})
	}
}

func changeScheduling(t *testing.T, w *world, mc *api.ResourceID, mutate func(*api.SchedulingStatus)) {
	t.Helper()
	sched := getScheduling(t, w.Fleet, mc)
	mutate(sched.Properties.Status)
	_, err := database.Replace(t.Context(), w.Fleet, sched)
	require.NoError(t, err)
}

func changeManagementCluster(t *testing.T, w *world, mc *api.ResourceID, mutate func(*api.ManagementClusterProperties)) {
	t.Helper()
	pk, err := api.FleetPartitionKey(mc)
	require.NoError(t, err)
	doc, err := database.Get[api.ManagementClusterProperties](t.Context(), w.Fleet, pk, mc.String())
	require.NoError(t, err)
	mutate(&doc.Properties)
	_, err = database.Replace(t.Context(), w.Fleet, doc)
	require.NoError(t, err)
}

// placed is how many placements a case makes: the waiting cluster's, and the first
// cluster's when the case places one.
func placed(first bool) float64 {
	if first {
		return 2
	}
	return 1
}
