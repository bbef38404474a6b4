package metrics_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/backend/metrics"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
)

// Every MC with scheduling data exports what it has left as the engine counts it, and
// its reservations, whatever the filters say of it.
func TestCapacity(t *testing.T) {
	store, w := newWorld()
	single := clusterID("single")
	w.cluster(t, single, now, func(p *api.ClusterProperties) {
		p.ServiceProviderProperties.ExperimentalFeatures = &api.ExperimentalFeatures{SingleReplica: api.SingleReplica}
	})
	// 30 − 3 used − 3 for a cluster the cache does not know (as HA) − 1 for a single-replica one.
	busy := w.mc(t, "1", 30, 3, now.Add(-time.Minute), []string{clusterID("unknown").Key(), single.Key(), ""})
	// Cordoned, stale and over its ceiling: still exported, negative.
	over := w.mc(t, "2", 30, 40, now.Add(-time.Hour), nil, func(p *api.ManagementClusterProperties) { p.Spec.SchedulingPolicy = api.Unschedulable })
	controllertest.CreateManagementCluster(t, w.fleet, "3", "shard-3")
	reg := scrape(t, store)

	help := func(name string) string { return family(t, reg, name).GetHelp() }
	want := fmt.Sprintf(`
# HELP %[1]s %[2]s
# TYPE %[1]s gauge
%[1]s{management_cluster_resource_id=%[3]q,resource=%[5]q} 23
%[1]s{management_cluster_resource_id=%[4]q,resource=%[5]q} -10
# HELP %[6]s %[7]s
# TYPE %[6]s gauge
%[6]s{management_cluster_resource_id=%[3]q} 2
%[6]s{management_cluster_resource_id=%[4]q} 0
`, metrics.AvailableCapacityName, help(metrics.AvailableCapacityName), busy.Key(), over.Key(), api.SwiftNIC,
		metrics.PendingReservationsName, help(metrics.PendingReservationsName))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), metrics.AvailableCapacityName, metrics.PendingReservationsName))
}
