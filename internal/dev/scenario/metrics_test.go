package scenario

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The runner counts the backend's Cluster Service requests by method and path, and each
// controller's queue wait, from the backend's /metrics; two replicas' counts add up and a
// baseline is subtracted.
func TestCountersOfClusterServiceCallsAndQueueWaits(t *testing.T) {
	t.Parallel()
	page := func(posts, shardGets, wait string) string {
		return `# TYPE hcpsched_cluster_service_request_count counter
hcpsched_cluster_service_request_count{apiservice="ocm-clusters-service",code="201",method="POST",path="/api/aro_hcp/v1alpha1/clusters"} ` + posts + `
hcpsched_cluster_service_request_count{apiservice="ocm-clusters-service",code="200",method="GET",path="/api/aro_hcp/v1alpha1/clusters/-/provision_shard"} ` + shardGets + `
hcpsched_cluster_service_request_count{apiservice="ocm-clusters-service",code="409",method="POST",path="/api/aro_hcp/v1alpha1/clusters"} 1
# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{name="ClusterServiceCreate",le="+Inf"} 4
workqueue_queue_duration_seconds_sum{name="ClusterServiceCreate"} ` + wait + `
workqueue_queue_duration_seconds_count{name="ClusterServiceCreate"} 4
`
	}
	counts := func(text string) counters {
		families, err := parseMetrics(strings.NewReader(text))
		require.NoError(t, err)
		return countersOf(families)
	}
	base := counts(page("2", "1", "0.5"))
	end := counts(page("10", "7", "3")).add(counts(page("4", "2", "1")))

	got := end.since(base)
	assert.Equal(t, map[string]float64{
		"POST /api/aro_hcp/v1alpha1/clusters":                  13, // 10+1 and 4+1 less 2+1
		"GET /api/aro_hcp/v1alpha1/clusters/-/provision_shard": 8,
	}, got.clusterService)
	assert.InDelta(t, 3.5, got.queueSeconds["ClusterServiceCreate"], 1e-9)
}
