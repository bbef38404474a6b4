package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/fleet/agentpools"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/cosmostest"
	"github.com/hcpsched/hcpsched/internal/dev/docwritetest/preservation"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// unavailablePools is an AKS that cannot list its agent pools.
type unavailablePools struct{}

func (unavailablePools) List(context.Context, string) ([]agentpools.Pool, error) {
	return nil, errors.New("AKS is unavailable")
}

// capacityReportOf is the CapacityReport the ARO-HCP ReadDesire fixture mirrors, as of at.
func capacityReportOf(t *testing.T, at time.Time) *api.CapacityReport {
	t.Helper()
	var rd struct {
		Properties struct {
			Status struct {
				KubeContent json.RawMessage `json:"kubeContent"`
			} `json:"status"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(arohcp.Get(fixtureReadDesire1), &rd))
	report, err := api.DecodeCapacityReport(rd.Properties.Status.KubeContent)
	require.NoError(t, err)
	report.Status.LastReportedAt = at
	return report
}

// fleetWrites are the writes of every fleet controller, each with the owned fields the
// controller declares to docwrite (its own variable) and its change, made by the
// controller's own functions where it has them (mirrorReport, setRegistrationCondition,
// setCapacityReadDesireSpec, scaleCeiling.compute).
func fleetWrites(t *testing.T) []preservation.Write {
	at := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	const (
		managementCluster = "/managementclusters"
		scheduling        = "/managementclusters/scheduling"
		readDesire        = "/readdesires"
		shard             = "/api/aro_hcp/v1alpha1/provision_shards/preservation"
	)
	report := capacityReportOf(t, at)
	failing := &scaleCeiling{pools: unavailablePools{}}
	aks := &api.ManagementCluster{Properties: api.ManagementClusterProperties{Status: &api.ManagementClusterStatus{AKSResourceID: "/subscriptions/s/resourceGroups/g/providers/Microsoft.ContainerService/managedClusters/aks"}}}
	return []preservation.Write{
		preservation.Of("ClustersServiceRegistration", managementCluster, registrationOwns, func(mc *api.ManagementCluster) error {
			if mc.Properties.Status == nil {
				mc.Properties.Status = &api.ManagementClusterStatus{}
			}
			mc.Properties.Status.ClusterServiceProvisionShardID = shard
			setRegistrationCondition(&mc.Properties.Status.Conditions, api.ManagementClusterConditionClustersServiceRegistered, errors.New("Cluster Service is unavailable"), at)
			return nil
		}),
		preservation.Of("Lifecycle", managementCluster, lifecycleOwns, func(mc *api.ManagementCluster) error {
			api.SetCondition(&mc.Properties.Status.Conditions, api.Condition{
				Type: api.ManagementClusterConditionReady, Status: api.ConditionFalse,
				Reason: api.ManagementClusterReasonRegistrationIncomplete, Message: "ClustersServiceRegistered is not True",
			}, at)
			return nil
		}),

		preservation.Of("CapacityReadDesire", readDesire, readDesireOwns, func(rd *api.ReadDesire) error {
			if rd.Properties.Spec == nil {
				rd.Properties.Spec = &api.ReadDesireSpec{}
			}
			setCapacityReadDesireSpec(rd.Properties.Spec, api.ManagementClusterResourceID("9"))
			return nil
		}),

		preservation.Of("CapacityReporting", scheduling, reportingOwns, func(d *api.ManagementClusterScheduling) error {
			_, err := mirrorReport(d, report, at, slog.New(slog.DiscardHandler))
			return err
		}),
		preservation.Of("ScaleCeiling (agent pools unavailable)", scheduling, scaleCeilingOwns, func(d *api.ManagementClusterScheduling) error {
			require.Error(t, failing.compute(t.Context(), d, aks, mc1, at))
			return nil
		}),
		preservation.Of("ScaleCeiling", scheduling, scaleCeilingOwns, func(d *api.ManagementClusterScheduling) error {
			// compute's write once the ceiling is known (capacity.ComputeCeiling's result).
			status := d.Properties.Status
			if status.ScaleCeiling == nil {
				status.ScaleCeiling = &api.ScaleCeiling{}
			}
			status.ScaleCeiling.Capacity = api.ResourceList{"aro.openshift.io/swift-nic": "400", "cpu": "400000m", "memory": "1800000000Ki"}
			status.ScaleCeiling.LastReportedAt = at.Add(time.Minute)
			api.SetCondition(&status.Conditions, api.Condition{Type: api.SchedulingConditionScalingDataCurrent, Status: api.ConditionTrue, Reason: api.SchedulingReasonDataCollected}, at.Add(time.Minute))
			return nil
		}),
	}
}

// Issue 19's acceptance for the fleet: every ARO-HCP fixture goes through every fleet
// controller's write, from a cache that holds the whole document and from a lean one, on
// the memory store and on the emulator, and afterwards every field outside the writer's
// owned ones keeps the bytes the store held, while the owned ones and cosmosMetadata
// changed as the write says.
func TestFieldPreservation(t *testing.T) {
	stores := map[string]func(t *testing.T) database.Container{
		"memory": func(*testing.T) database.Container { return memory.New().Container(api.FleetContainer) },
		"emulator": func(t *testing.T) database.Container {
			return cosmostest.New(t, "hcpsched-preservation", nil, api.FleetContainer).Store.Container(api.FleetContainer)
		},
	}
	for name, newContainer := range stores {
		t.Run(name, func(t *testing.T) {
			preservation.Run(t, newContainer(t), fleetWrites(t))
		})
	}
}
