package clusterservice

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
)

func FuzzParseShardHREF(f *testing.F) {
	for _, seed := range []string{
		"/api/aro_hcp/v1alpha1/provision_shards/2a4sf0rthp7ej6q1nj3pc79v4m8ps58s",
		"/api/aro_hcp/v1alpha1/provision_shards/916a44d3-6d0d-5bcb-8816-2945c804166e",
		"/api/aro_hcp/v1alpha1/provision_shards/",
		"/api/aro_hcp/v1alpha1/provision_shards/a/b",
		"/api/aro_hcp/v1alpha1/provision_shards/%2e%2e",
		"/api/aro_hcp/v1alpha1/clusters/x",
		"",
		"\x00",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, href string) {
		id, err := ParseShardHREF(href)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidID)
			return
		}
		// Whatever parses must be a single safe path segment and format back to the input.
		require.NotContains(t, id, "/")
		require.Equal(t, id, url.PathEscape(id))
		back, err := ShardHREF(id)
		require.NoError(t, err)
		require.Equal(t, href, back)
	})
}

func FuzzParseAnyClusterHREF(f *testing.F) {
	f.Add("/api/aro_hcp/v1alpha1/clusters/" + NewClusterID())
	f.Add("/api/clusters_mgmt/v1/clusters/" + NewClusterID())
	f.Add("/api/clusters_mgmt/v1/clusters/")
	f.Add("/api/clusters_mgmt/v1/clusters/" + NewClusterID() + "/node_pools/x")
	f.Fuzz(func(t *testing.T, href string) {
		id, legacy, err := ParseAnyClusterHREF(href)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidID)
			return
		}
		require.NoError(t, validateClusterReference(id))
		collection := ClustersPath
		if legacy {
			collection = LegacyClustersPath
		}
		require.Equal(t, collection+"/"+id, href, "the id is the whole rest of the path")
	})
}

func FuzzParseClusterHREF(f *testing.F) {
	f.Add("/api/aro_hcp/v1alpha1/clusters/" + NewClusterID())
	f.Add("/api/aro_hcp/v1alpha1/clusters/" + strings.Repeat("z", 32))
	f.Add("/api/aro_hcp/v1alpha1/clusters/" + strings.Repeat("Z", 32))
	f.Add("/api/aro_hcp/v1alpha1/clusters/")
	f.Add("/api/aro_hcp/v1alpha1/provision_shards/" + NewClusterID())
	f.Fuzz(func(t *testing.T, href string) {
		id, err := ParseClusterHREF(href)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidID)
			return
		}
		require.Len(t, id, 32)
		back, err := ClusterHREF(id)
		require.NoError(t, err)
		require.Equal(t, href, back)
	})
}

// FuzzSearchExpressionAcceptedByFake checks that every expression the client is willing to
// build is one the fake understands and matches exactly, whatever the values.
func FuzzSearchExpressionAcceptedByFake(f *testing.F) {
	f.Add("/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/mc", "consumer-1")
	f.Add("x' or 1=1 --", "c")
	f.Add("a and b", "=")
	f.Add("  spaced  ", "ünïcode")
	f.Add("", "c")
	srv := fakeclusterservice.New()
	f.Fuzz(func(t *testing.T, aks, consumer string) {
		expr, err := ShardIdentity{AKSResourceID: aks, ConsumerName: consumer}.SearchExpression()
		if err != nil {
			return
		}
		req := httptest.NewRequest(http.MethodGet, ProvisionShardsPath+"?search="+url.QueryEscape(expr), nil)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code, "expression %q: %s", expr, rec.Body.String())
	})
}
