package controllers

import (
	"slices"
	"testing"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/cosmostest"
	"github.com/hcpsched/hcpsched/internal/dev/docwritetest/preservation"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// backendWrites are the writes of every backend controller that changes a stored
// document, each with the owned fields the controller declares to docwrite (its own
// variable) and the change its Update makes, in the order a cluster's life runs them.
// (CreateServiceProviderCluster only creates: a new document has no foreign fields.)
func backendWrites() []preservation.Write {
	at := time.Date(2026, 9, 1, 12, 0, 0, 123456700, time.UTC)
	const (
		href      = "/api/aro_hcp/v1alpha1/clusters/preservation0000000000000000000"
		mc        = "/providers/microsoft.redhatopenshift/stamps/7/managementclusters/default"
		observed  = "/providers/microsoft.redhatopenshift/stamps/8/managementclusters/default"
		reservedA = "/subscriptions/0465bc32-c654-41b8-8d87-9815d7abe8f6/resourcegroups/rg/providers/microsoft.redhatopenshift/hcpopenshiftclusters/a"
		reservedB = "/subscriptions/0465bc32-c654-41b8-8d87-9815d7abe8f6/resourcegroups/rg/providers/microsoft.redhatopenshift/hcpopenshiftclusters/b"
	)
	const (
		cluster    = "/hcpOpenShiftClusters"
		spc        = "/serviceProviderClusters"
		scheduling = "/managementclusters/scheduling"
	)
	release := func(id string) func(*api.ManagementClusterScheduling) error {
		return func(s *api.ManagementClusterScheduling) error {
			s.Properties.Status.PendingAssignedClusters = slices.DeleteFunc(slices.Clone(s.Properties.Status.PendingAssignedClusters),
				func(e string) bool { return api.ResourceIDsEqual(e, id) })
			return nil
		}
	}
	reserve := func(id string) func(*api.ManagementClusterScheduling) error {
		return func(s *api.ManagementClusterScheduling) error {
			s.Properties.Status.PendingAssignedClusters = append(s.Properties.Status.PendingAssignedClusters, id)
			return nil
		}
	}
	return []preservation.Write{
		preservation.Of("PendingClusterServiceIDAssign", cluster, pendingClusterServiceIDFields, func(c *api.Cluster) error {
			if c.Properties.ServiceProviderProperties == nil {
				c.Properties.ServiceProviderProperties = &api.ClusterServiceProviderProperties{}
			}
			c.Properties.ServiceProviderProperties.PendingClusterServiceID = href
			return nil
		}),
		preservation.Of("ClusterServiceCreate", cluster, clusterServiceIDFields, func(c *api.Cluster) error {
			c.Properties.ServiceProviderProperties.ClusterServiceID = href
			c.Properties.ServiceProviderProperties.PendingClusterServiceID = ""
			return nil
		}),

		preservation.Of("Placement (nothing fits)", spc, capacityConditionFields, func(s *api.ServiceProviderCluster) error {
			setCapacityCondition(s, api.ConditionFalse, placement.OutcomeCapacityExhausted.ConditionReason(), "no management cluster has capacity", at)
			return nil
		}),
		preservation.Of("Placement (record)", spc, placementRecordFields, func(s *api.ServiceProviderCluster) error {
			if s.Properties.Spec == nil {
				s.Properties.Spec = &api.ServiceProviderClusterSpec{}
			}
			s.Properties.Spec.ManagementClusterResourceID = mc
			s.Properties.Spec.ManagementClusterPlacementTime = at
			setCapacityCondition(s, api.ConditionTrue, placement.ConditionReasonAvailable, "placed on stamp 7", at)
			return nil
		}),
		preservation.Of("ManagementClusterPlacementSync", spc, observedPlacementFields, func(s *api.ServiceProviderCluster) error {
			if s.Properties.Status == nil {
				s.Properties.Status = &api.ServiceProviderClusterStatus{}
			}
			s.Properties.Status.ManagementClusterResourceID = observed
			return nil
		}),
		preservation.Of("Placement (replacement withdraws the intent)", spc, placementRecordFields, func(s *api.ServiceProviderCluster) error {
			s.Properties.Spec.ManagementClusterResourceID = ""
			s.Properties.Spec.ManagementClusterPlacementTime = time.Time{}
			setCapacityCondition(s, api.ConditionFalse, ReasonReplacing, "stamp 7 went away", at.Add(time.Minute))
			return nil
		}),
		preservation.Of("ClusterServiceAdoption", spc, adoptionFields, func(s *api.ServiceProviderCluster) error {
			if s.Properties.Spec == nil {
				s.Properties.Spec = &api.ServiceProviderClusterSpec{}
			}
			s.Properties.Spec.ManagementClusterResourceID = observed
			setCapacityCondition(s, api.ConditionTrue, placement.ConditionReasonAvailable, "adopted from Cluster Service's placement", at.Add(2*time.Minute))
			return nil
		}),
		preservation.Of("ClusterServiceAdoption (unmappable)", spc, capacityConditionFields, func(s *api.ServiceProviderCluster) error {
			setCapacityCondition(s, api.ConditionFalse, placement.ConditionReasonClusterServiceIDUnmappable, placement.UnmappableMessage(href), at.Add(3*time.Minute))
			return nil
		}),

		preservation.Of("Placement (reserve)", scheduling, reservationFields, reserve(reservedA)),
		preservation.Of("Placement (reserve another)", scheduling, reservationFields, reserve(reservedB)),
		preservation.Of("Placement (replacement releases)", scheduling, reservationFields, release(reservedA)),
		preservation.Of("PendingCleanup", scheduling, reservationFields, release(reservedB)),
	}
}

// Issue 19's acceptance: every ARO-HCP fixture goes through every backend controller's
// write, from a cache that holds the whole document and from a lean one, on the memory
// store and on the emulator, and afterwards every field outside the writer's owned ones
// keeps the bytes the store held, while the owned ones and cosmosMetadata changed as
// the write says.
func TestFieldPreservation(t *testing.T) {
	stores := map[string]func(t *testing.T) database.Container{
		"memory": func(*testing.T) database.Container { return memory.New().Container(api.ResourcesContainer) },
		"emulator": func(t *testing.T) database.Container {
			return cosmostest.New(t, "hcpsched-preservation", nil, api.ResourcesContainer).Store.Container(api.ResourcesContainer)
		},
	}
	for name, newContainer := range stores {
		t.Run(name, func(t *testing.T) {
			preservation.Run(t, newContainer(t), backendWrites())
		})
	}
}
