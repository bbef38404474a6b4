package controllers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
)

// In leaderless mode Placement tries the MCs of its own shards first when the best MC
// overall is another replica's, and falls back to the best overall when none of its own
// fits.
func TestPlacementPrefersTheMCsItsReplicaOwns(t *testing.T) {
	tests := []struct {
		name       string
		ownedUsage int // of the owned MC's ceiling of 30
		want       string
	}{
		{"an owned MC that fits wins over a roomier one", 0, "2"},
		{"with no owned MC that fits, the best overall", 30, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			roomy := controllertest.CreateManagementCluster(t, w.Fleet, "1", "shard-1")
			owned := controllertest.CreateManagementCluster(t, w.Fleet, "2", "shard-2")
			controllertest.StoreScheduling(t, w.Fleet, roomy, 300, 0)
			controllertest.StoreScheduling(t, w.Fleet, owned, 30, tt.ownedUsage)
			w.env.PreferMC = func(mc string) bool { return api.ResourceIDsEqual(mc, owned.String()) }
			cluster := controllertest.StoreCluster(t, w.Resources, newCluster(t, clusterID("Preferring")))
			controllertest.StoreSPC(t, w.Resources, cluster)
			p := w.reconciler(t, placementDefinition())
			w.Start(t)

			res, err := p.Reconcile(cluster.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{}, res)
			want := api.ManagementClusterResourceID(tt.want).String()
			assert.True(t, api.ResourceIDsEqual(want, controllertest.GetSPC(t, w.Resources, cluster).Properties.IntendedManagementCluster()),
				"placed on %s", want)
		})
	}
}
