package fakeclusterservice

import (
	"net/http"
	"net/url"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSearchWhitelist(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const clusterExpr = "azure.subscription_id='s' and azure.resource_group_name='rg' and azure.resource_name='n' and azure.tenant_id='t' and azure.managed_resource_group_name='m'"
	const shardExpr = "azure_shard.aks_management_cluster_resource_id='/x' and maestro_config.consumer_name='c'"
	tests := []struct {
		name       string
		path       string
		search     string
		wantStatus int
	}{
		{"cluster identity", clustersPath, clusterExpr, http.StatusOK},
		{"cluster identity, other order and spacing", clustersPath, "azure.tenant_id = 't'  AND azure.subscription_id='s' and azure.resource_group_name='rg' and azure.resource_name='n' and azure.managed_resource_group_name='m'", http.StatusOK},
		{"shard identity", shardsPath, shardExpr, http.StatusOK},
		{"empty search lists everything", clustersPath, "", http.StatusOK},
		{"partial cluster identity", clustersPath, "azure.subscription_id='s' and azure.resource_group_name='rg' and azure.resource_name='n'", http.StatusBadRequest},
		{"CS name instead of the Azure name", clustersPath, "azure.subscription_id='s' and azure.resource_group_name='rg' and name='n' and azure.tenant_id='t' and azure.managed_resource_group_name='m'", http.StatusBadRequest},
		{"extra field", clustersPath, clusterExpr + " and state='ready'", http.StatusBadRequest},
		{"repeated field", shardsPath, shardExpr + " and maestro_config.consumer_name='c'", http.StatusBadRequest},
		{"shard fields on clusters", clustersPath, shardExpr, http.StatusBadRequest},
		{"cluster fields on shards", shardsPath, clusterExpr, http.StatusBadRequest},
		{"status filter", shardsPath, "status='active'", http.StatusBadRequest},
		{"like", clustersPath, "name like 'my%'", http.StatusBadRequest},
		{"or", shardsPath, "azure_shard.aks_management_cluster_resource_id='/x' or maestro_config.consumer_name='c'", http.StatusBadRequest},
		{"unquoted value", shardsPath, "azure_shard.aks_management_cluster_resource_id=x and maestro_config.consumer_name='c'", http.StatusBadRequest},
		{"unterminated value", shardsPath, "azure_shard.aks_management_cluster_resource_id='/x and maestro_config.consumer_name='c", http.StatusBadRequest},
		{"escaped quote", shardsPath, `azure_shard.aks_management_cluster_resource_id='a\'b' and maestro_config.consumer_name='c'`, http.StatusBadRequest},
		{"in list", shardsPath, "maestro_config.consumer_name in ('a','b')", http.StatusBadRequest},
		{"trailing and", shardsPath, shardExpr + " and", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := url.Values{}
			if tt.search != "" {
				q.Set("search", tt.search)
			}
			resp := h.do(t, http.MethodGet, tt.path+"?"+q.Encode(), "")
			assert.Equal(t, tt.wantStatus, resp.status, resp.body)
			assert.Equal(t, "application/json", resp.contentType)
		})
	}
}

func TestOrderIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	resp := h.do(t, http.MethodGet, clustersPath+"?order=name+asc", "")
	assert.Equal(t, http.StatusBadRequest, resp.status)
}

func TestSearchFieldListsAreSorted(t *testing.T) {
	t.Parallel()
	// whitelisted compares against these lists as sorted keys.
	assert.True(t, sort.StringsAreSorted(clusterSearchFields))
	assert.True(t, sort.StringsAreSorted(shardSearchFields))
}

func TestParseSearch(t *testing.T) {
	t.Parallel()
	terms, err := parseSearch("a.b='x y' and c = 'and'")
	require.NoError(t, err)
	assert.Equal(t, []term{{"a.b", "x y"}, {"c", "and"}}, terms)

	for _, bad := range []string{"", "a", "a=", "a='x' andb='y'", "a='x' b='y'", "(a='x')", "a='x';"} {
		_, err := parseSearch(bad)
		assert.Error(t, err, bad)
	}
}
