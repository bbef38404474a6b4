package controllers

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/fleet/agentpools"
	"github.com/hcpsched/hcpsched/fleet/capacity"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
)

const (
	testCeilingInterval = 5 * time.Minute
	aksOfStamp1         = "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/hcp-underlay-dev-westus3-mgmt-1/providers/Microsoft.ContainerService/managedClusters/dev-westus3-mgmt-1"
)

// fakePools serves fixed pools (or an error) and counts the calls, which stand for ARM
// requests.
type fakePools struct {
	pools []agentpools.Pool
	err   error
	calls atomic.Int32
	aks   atomic.Value
}

func (f *fakePools) List(_ context.Context, aks string) ([]agentpools.Pool, error) {
	f.calls.Add(1)
	f.aks.Store(aks)
	return f.pools, f.err
}

func pool(vmSize string, count int32, maxCount int32, role string, nics string) agentpools.Pool {
	p := agentpools.Pool{Name: strings.ToLower(vmSize), VMSize: vmSize, Count: count, NodeLabels: map[string]string{agentpools.RoleLabel: role}}
	if maxCount > 0 {
		p.EnableAutoScaling, p.MaxCount = true, &maxCount
	}
	if nics != "" {
		p.Tags = map[string]string{agentpools.NICSecondaryCountTag: nics}
	}
	return p
}

func newTestScaleCeiling(e *env, pools agentpools.Source) *ScaleCeiling {
	s := NewScaleCeiling(e.inf, e.store, pools, capacity.DefaultVMSizes, testCeilingInterval)
	s.now = func() time.Time { return testNow }
	return s
}

func TestScaleCeiling(t *testing.T) {
	t.Parallel()
	stamp := testNow.Format(time.RFC3339)
	capacityTrue := condition(api.SchedulingConditionCapacityDataCurrent, "True", "DataCollected", "", time.Date(2026, 8, 19, 14, 10, 40, 0, time.UTC))
	tests := []struct {
		name       string
		pools      []agentpools.Pool
		readDesire bool
		scheduling []edit
		written    []edit
	}{
		{
			name: "worker pools at their maximum, per-node amounts from the capacity report",
			pools: []agentpools.Pool{
				pool("Standard_D4ds_v5", 3, 0, "system", ""),
				// The report's 16 NICs per node win over the tag.
				pool("Standard_D16ds_v5", 3, 10, agentpools.WorkerRole, "8"),
				pool("Standard_E16ds_v5", 4, 0, agentpools.WorkerRole, ""),
			},
			readDesire: true,
			written: []edit{
				{"properties.status.scaleCeiling", map[string]any{
					"lastReportedAt": stamp,
					"capacity":       map[string]string{"cpu": "221480m", "memory": "1087263584Ki", api.SwiftNIC: "224"},
				}},
			},
		},
		{
			name:  "no report yet: the VM size table, and NICs from the pool tag",
			pools: []agentpools.Pool{pool("Standard_D16ds_v5", 3, 10, agentpools.WorkerRole, "16")},
			written: []edit{
				{"properties.status.scaleCeiling", map[string]any{
					"lastReportedAt": stamp,
					"capacity":       map[string]string{"cpu": "160", "memory": "640Gi", api.SwiftNIC: "160"},
				}},
			},
		},
		{
			name: "a VM size nobody knows: a lower bound, flagged",
			pools: []agentpools.Pool{
				pool("Standard_D16ds_v5", 3, 10, agentpools.WorkerRole, ""),
				pool("Standard_F8s", 2, 0, agentpools.WorkerRole, "8"),
			},
			readDesire: true,
			written: []edit{
				{"properties.status.conditions", []any{capacityTrue, condition(api.SchedulingConditionScalingDataCurrent, "False", "UnknownVMSize",
					"per-node capacity unknown (not in the capacity report nor the VM size table): Standard_F8s: cpu, Standard_F8s: memory", testNow)}},
				{"properties.status.scaleCeiling", map[string]any{
					"lastReportedAt": stamp,
					"capacity":       map[string]string{"cpu": "158200m", "memory": "586136160Ki", api.SwiftNIC: "176"},
				}},
			},
		},
		{
			name:       "no worker pools",
			pools:      []agentpools.Pool{pool("Standard_D4ds_v5", 3, 0, "system", "")},
			readDesire: true,
			written: []edit{
				{"properties.status.conditions", []any{capacityTrue, condition(api.SchedulingConditionScalingDataCurrent, "False", "NoWorkerPools",
					"no agent pool of "+aksOfStamp1+" has the node label aro-hcp.azure.com/role=worker", testNow)}},
				{"properties.status.scaleCeiling", map[string]any{"lastReportedAt": stamp}},
			},
		},
		{
			name:       "an unchanged ceiling only refreshes lastReportedAt, keeping unknown fields",
			pools:      []agentpools.Pool{pool("Standard_D16ds_v5", 3, 20, agentpools.WorkerRole, "")},
			readDesire: true,
			scheduling: []edit{
				{"properties.status.scaleCeiling.capacity", map[string]string{"cpu": "316400m", "memory": "1172272320Ki", api.SwiftNIC: "320"}},
				{"properties.status.scaleCeiling.futureField", "kept"},
			},
			written: []edit{{"properties.status.scaleCeiling.lastReportedAt", stamp}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			seeds := []seed{fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1), fleetDoc(fixtureScheduling1, tc.scheduling...)}
			if tc.readDesire {
				seeds = append(seeds, kubeApplierDoc(fixtureReadDesire1))
			}
			e := newEnv(t, seeds...)
			pools := &fakePools{pools: tc.pools}
			before := e.item(api.FleetContainer, schedulingOf1)
			result, err := newTestScaleCeiling(e, pools).Reconcile(e.as(ScaleCeilingControllerName), mc1.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{RequeueAfter: testCeilingInterval}, result)
			assert.Equal(t, aksOfStamp1, pools.aks.Load())
			replaces, _ := e.store.writes()
			require.Len(t, replaces, 1)
			assert.Equal(t, expectReplaced(t, before, tc.written...), storedTree(t, e.item(api.FleetContainer, schedulingOf1)))
		})
	}
}

// Between recomputations nothing is listed and nothing is written, whatever wakes the
// controller (every capacity mirror writes the scheduling document).
func TestScaleCeilingWaitsUntilDue(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1),
		fleetDoc(fixtureScheduling1, edit{"properties.status.scaleCeiling.lastReportedAt", testNow.Add(-time.Minute).Format(time.RFC3339)}),
		kubeApplierDoc(fixtureReadDesire1))
	pools := &fakePools{}
	s := newTestScaleCeiling(e, pools)
	result, err := s.Reconcile(e.as(ScaleCeilingControllerName), mc1.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{RequeueAfter: testCeilingInterval - time.Minute}, result)
	// A pass woken early asks for the same due time; the controller framework keeps the
	// one pending requeue per key.
	result, err = s.Reconcile(e.as(ScaleCeilingControllerName), mc1.Key())
	require.NoError(t, err)
	assert.InDelta(t, float64(testCeilingInterval-time.Minute), float64(result.RequeueAfter), float64(time.Second), "still due at the same time")
	assert.Zero(t, pools.calls.Load())
	replaces, creates := e.store.writes()
	assert.Empty(t, replaces)
	assert.Empty(t, creates)
}

func TestScaleCeilingAgentPoolsUnavailable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1), fleetDoc(fixtureScheduling1), kubeApplierDoc(fixtureReadDesire1))
	pools := &fakePools{err: errors.New("GET https://management.azure.com/...: 503 Service Unavailable (request 42)")}
	s := newTestScaleCeiling(e, pools)
	before := e.item(api.FleetContainer, schedulingOf1)
	_, err := s.Reconcile(e.as(ScaleCeilingControllerName), mc1.Key())
	require.ErrorContains(t, err, "503", "retried with backoff")
	want := expectReplaced(t, before, edit{"properties.status.conditions", []any{
		condition(api.SchedulingConditionCapacityDataCurrent, "True", "DataCollected", "", time.Date(2026, 8, 19, 14, 10, 40, 0, time.UTC)),
		condition(api.SchedulingConditionScalingDataCurrent, "False", "AgentPoolsUnavailable", "listing the agent pools of "+aksOfStamp1+" failed", testNow),
	}})
	assert.Equal(t, want, storedTree(t, e.item(api.FleetContainer, schedulingOf1)), "the previous ceiling stays, flagged")

	// The retry fails the same way and writes nothing more.
	e.synced()
	pools.err = errors.New("GET https://management.azure.com/...: 503 Service Unavailable (request 43)")
	_, err = s.Reconcile(e.as(ScaleCeilingControllerName), mc1.Key())
	require.Error(t, err)
	replaces, _ := e.store.writes()
	assert.Len(t, replaces, 1)
}

func TestScaleCeilingPrerequisites(t *testing.T) {
	t.Parallel()
	t.Run("no AKS cluster recorded yet", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1, edit{"properties.status.aksResourceID", remove}), fleetDoc(fixtureScheduling1))
		pools := &fakePools{}
		result, err := newTestScaleCeiling(e, pools).Reconcile(e.as(ScaleCeilingControllerName), mc1.Key())
		require.NoError(t, err)
		assert.Equal(t, controller.Result{}, result, "register's update brings it back")
		assert.Zero(t, pools.calls.Load())
	})
	t.Run("no scheduling document: created empty, filled by the next pass", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1))
		pools := &fakePools{pools: []agentpools.Pool{pool("Standard_D16ds_v5", 3, 10, agentpools.WorkerRole, "16")}}
		s := newTestScaleCeiling(e, pools)
		_, err := s.Reconcile(e.as(ScaleCeilingControllerName), mc1.Key())
		require.NoError(t, err)
		_, creates := e.store.writes()
		require.Len(t, creates, 1)
		e.synced()
		_, err = s.Reconcile(e.as(ScaleCeilingControllerName), mc1.Key())
		require.NoError(t, err)
		got := storedTree(t, e.item(api.FleetContainer, schedulingOf1))["properties"].(map[string]any)["status"].(map[string]any)
		assert.Equal(t, normalize(t, map[string]any{
			"lastReportedAt": testNow.Format(time.RFC3339),
			"capacity":       map[string]string{"cpu": "160", "memory": "640Gi", api.SwiftNIC: "160"},
		}), got["scaleCeiling"])
		assert.Equal(t, normalize(t, []any{condition(api.SchedulingConditionScalingDataCurrent, "True", "DataCollected", "", testNow)}), got["conditions"])
	})
}

func TestScaleCeilingConflictRetriesFromTheCache(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1), fleetDoc(fixtureScheduling1), kubeApplierDoc(fixtureReadDesire1))
	pools := &fakePools{pools: []agentpools.Pool{pool("Standard_D16ds_v5", 3, 10, agentpools.WorkerRole, "")}}
	s := newTestScaleCeiling(e, pools)
	e.loseNextReplace(api.FleetContainer, schedulingOf1, edit{"properties.status.pendingAssignedClusters", []string{unrelated}})
	_, err := s.Reconcile(e.as(ScaleCeilingControllerName), mc1.Key())
	require.NoError(t, err)
	e.requireLostRace()

	// The other writer's reservation is kept.
	e.requireRetryWrites(ScaleCeilingControllerName, s.Reconcile, mc1.Key(), api.FleetContainer, schedulingOf1, edit{"properties.status.scaleCeiling", map[string]any{
		"lastReportedAt": testNow.Format(time.RFC3339),
		"capacity":       map[string]string{"cpu": "158200m", "memory": "586136160Ki", api.SwiftNIC: "160"},
	}})
}
