package main

import (
	"testing"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/cosmostest"
	"github.com/hcpsched/hcpsched/internal/dev/docwritetest/preservation"
)

// cordonWrites are cordon's and uncordon's write of spec.schedulingPolicy, with the
// owned fields they declare to docwrite; each sets the policy the management cluster
// does not have, as whichever of the two verbs would change it does.
func cordonWrites() []preservation.Write {
	flip := func(mc *api.ManagementCluster) error {
		if mc.Properties.Spec == nil {
			mc.Properties.Spec = &api.ManagementClusterSpec{}
		}
		if mc.Properties.Spec.SchedulingPolicy == api.Unschedulable {
			mc.Properties.Spec.SchedulingPolicy = api.Schedulable
		} else {
			mc.Properties.Spec.SchedulingPolicy = api.Unschedulable
		}
		return nil
	}
	return []preservation.Write{
		preservation.Of("cordon or uncordon", "/managementclusters", policyOwns, flip),
		preservation.Of("uncordon or cordon", "/managementclusters", policyOwns, flip),
	}
}

// Issue 19's acceptance for hcpsched cordon: every ARO-HCP management cluster fixture,
// cordoned and uncordoned, on the memory store and on the emulator, keeps every field
// but spec.schedulingPolicy and cosmosMetadata's stamps as the store held it.
func TestFieldPreservation(t *testing.T) {
	stores := map[string]func(t *testing.T) database.Container{
		"memory": func(*testing.T) database.Container { return memory.New().Container(api.FleetContainer) },
		"emulator": func(t *testing.T) database.Container {
			return cosmostest.New(t, "hcpsched-preservation", nil, api.FleetContainer).Store.Container(api.FleetContainer)
		},
	}
	for name, newContainer := range stores {
		t.Run(name, func(t *testing.T) {
			preservation.Run(t, newContainer(t), cordonWrites())
		})
	}
}
