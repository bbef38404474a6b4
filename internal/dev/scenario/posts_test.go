package scenario

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
)

// createPost is the fake's log entry of a create POST of cluster n that was answered status.
func createPost(t *testing.T, n string, status int) fakeclusterservice.Request {
	t.Helper()
	c, err := arohcp.NewCluster().Name("hcp-local-" + n).Azure(arohcp.NewAzure().
		SubscriptionID("00000000-0000-4000-8000-00000000000" + n).ResourceGroupName("rg-local-" + n).ResourceName("hcp-local-" + n)).Build()
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, arohcp.MarshalCluster(c, &b))
	return fakeclusterservice.Request{Method: http.MethodPost, Path: fakeclusterservice.ClustersPath, Body: b.String(), Status: status}
}

func postKey(n string) string {
	return strings.ToLower("/subscriptions/00000000-0000-4000-8000-00000000000" + n + "/resourceGroups/rg-local-" + n + "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/hcp-local-" + n)
}

func TestPostsPerClusterFailADoubleCreate(t *testing.T) {
	get := fakeclusterservice.Request{Method: http.MethodGet, Path: fakeclusterservice.ClustersPath + "/abc", Status: 200}
	tests := []struct {
		name       string
		log        []fakeclusterservice.Request
		placed     []string
		expectNone []string
		violations []string
		shape      string
	}{
		{
			name:   "each once, retries after a 503 and a 409 included",
			log:    []fakeclusterservice.Request{createPost(t, "1", 503), createPost(t, "1", 201), createPost(t, "1", 409), createPost(t, "2", 201), get},
			placed: []string{postKey("1"), postKey("2")},
			shape:  "POSTs per cluster 1: 1 clusters, 3: 1 clusters; successful creates per cluster 1: 2 clusters",
		},
		{
			name:       "a duplicate create",
			log:        []fakeclusterservice.Request{createPost(t, "1", 201), createPost(t, "1", 201), createPost(t, "2", 201)},
			placed:     []string{postKey("1"), postKey("2")},
			violations: []string{postKey("1") + " was created 2 times (2 POSTs)"},
			shape:      "POSTs per cluster 1: 1 clusters, 2: 1 clusters; successful creates per cluster 1: 1 clusters, 2: 1 clusters",
		},
		{
			name:       "a placed cluster never created, and a refused one created",
			log:        []fakeclusterservice.Request{createPost(t, "1", 400), createPost(t, "2", 201)},
			placed:     []string{postKey("1")},
			expectNone: []string{postKey("2")},
			violations: []string{postKey("1") + " is placed but was never created (1 POSTs)", postKey("2") + " must not be in Cluster Service but was created 1 times"},
			shape:      "POSTs per cluster 1: 2 clusters; successful creates per cluster 1: 1 clusters",
		},
		{
			name:       "an empty log proves nothing",
			log:        []fakeclusterservice.Request{get},
			violations: []string{"the request log holds no create POST"},
			shape:      "POSTs per cluster none; successful creates per cluster none",
		},
		{
			name:       "a body that names no cluster",
			log:        []fakeclusterservice.Request{{Method: http.MethodPost, Path: fakeclusterservice.ClustersPath, Body: "{", Status: 400}, createPost(t, "1", 201)},
			placed:     []string{postKey("1")},
			violations: []string{"1 create POSTs name no cluster"},
			shape:      "POSTs per cluster 1: 1 clusters; successful creates per cluster 1: 1 clusters",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := countPosts(tt.log)
			inv := p.invariant(tt.placed, tt.expectNone)
			assert.Equal(t, tt.violations, inv.Violations)
			assert.Equal(t, tt.shape, p.distribution())
		})
	}
}
