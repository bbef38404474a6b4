package agentpools

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	testAKS      = "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/hcp-underlay-mgmt-1/providers/Microsoft.ContainerService/managedClusters/mgmt-1"
	poolsPath    = "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/hcp-underlay-mgmt-1/providers/Microsoft.ContainerService/managedClusters/mgmt-1/agentPools"
	testAudience = "https://management.hcpsched.test/"
)

// staticCredential hands out one token and remembers the scopes asked for.
type staticCredential struct {
	mu     sync.Mutex
	scopes []string
}

func (c *staticCredential) GetToken(_ context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scopes = append(c.scopes, opts.Scopes...)
	return azcore.AccessToken{Token: "test-token", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// armServer plays ARM: two pages of agent pools for testAKS, 404 for anything else.
func armServer(t *testing.T) (*httptest.Server, *[]*http.Request) {
	var mu sync.Mutex
	var requests []*http.Request
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.Clone(context.Background()))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer test-token" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":"AuthenticationFailed","message":"no token"}}`))
			return
		}
		if r.URL.Path != poolsPath || r.URL.Query().Get("api-version") == "" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"ResourceNotFound","message":"The Resource was not found."}}`))
			return
		}
		if r.URL.Query().Get("$skipToken") == "" {
			_, _ = w.Write([]byte(`{"value": [
				{"name": "system", "properties": {"vmSize": "Standard_D4ds_v5", "count": 3, "mode": "System",
					"nodeLabels": {"aro-hcp.azure.com/role": "system"}}},
				{"name": "worker1", "properties": {"vmSize": "Standard_D16ds_v5", "count": 3, "enableAutoScaling": true,
					"minCount": 3, "maxCount": 10, "nodeLabels": {"aro-hcp.azure.com/role": "worker"},
					"tags": {"aks-nic-secondary-count": "16"}}}
			], "nextLink": "https://` + r.Host + poolsPath + `?api-version=2025-10-01&$skipToken=2"}`))
			return
		}
		_, _ = w.Write([]byte(`{"value": [
			{"name": "creating", "properties": {"provisioningState": "Creating"}},
			{"name": "worker2", "properties": {"vmSize": "Standard_E16ds_v5", "count": 4, "enableAutoScaling": false,
				"maxCount": 20, "nodeLabels": {"aro-hcp.azure.com/role": "worker"}}}
		]}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

func armClientOptions(srv *httptest.Server) *arm.ClientOptions {
	return &arm.ClientOptions{ClientOptions: policy.ClientOptions{
		Cloud: cloud.Configuration{
			ActiveDirectoryAuthorityHost: "https://login.hcpsched.test/",
			Services:                     map[cloud.ServiceName]cloud.ServiceConfiguration{cloud.ResourceManager: {Endpoint: srv.URL, Audience: testAudience}},
		},
		Transport: srv.Client(),
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}}
}

func TestARMListsAgentPoolsThroughTheSDK(t *testing.T) {
	srv, requests := armServer(t)
	cred := &staticCredential{}
	source := NewARM(cred, armClientOptions(srv))

	pools, err := source.List(t.Context(), testAKS)
	require.NoError(t, err)
	ten := int32(10)
	twenty := int32(20)
	assert.Equal(t, []Pool{
		{Name: "system", VMSize: "Standard_D4ds_v5", Count: 3, NodeLabels: map[string]string{RoleLabel: "system"}},
		{Name: "worker1", VMSize: "Standard_D16ds_v5", Count: 3, EnableAutoScaling: true, MaxCount: &ten,
			NodeLabels: map[string]string{RoleLabel: WorkerRole}, Tags: map[string]string{NICSecondaryCountTag: "16"}},
		{Name: "worker2", VMSize: "Standard_E16ds_v5", Count: 4, MaxCount: &twenty, NodeLabels: map[string]string{RoleLabel: WorkerRole}},
	}, pools, "both pages, without the pool that has no size yet")
	require.Len(t, *requests, 2)
	for _, r := range *requests {
		assert.Equal(t, http.MethodGet, r.Method)
		assert.Equal(t, poolsPath, r.URL.Path)
	}
	assert.Contains(t, cred.scopes, testAudience+"/.default", "tokens are for the configured cloud's ARM audience")

	assert.Equal(t, []bool{false, true, true}, []bool{pools[0].IsWorker(), pools[1].IsWorker(), pools[2].IsWorker()})
	assert.Equal(t, []int64{3, 10, 4}, []int64{pools[0].MaxNodes(), pools[1].MaxNodes(), pools[2].MaxNodes()})
}

func TestARMReportsErrors(t *testing.T) {
	srv, _ := armServer(t)
	source := NewARM(&staticCredential{}, armClientOptions(srv))
	_, err := source.List(t.Context(), "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/unknown")
	require.ErrorContains(t, err, "ResourceNotFound")
	require.ErrorContains(t, err, "managedClusters/unknown")

	_, err = source.List(t.Context(), "not-a-resource-id")
	require.ErrorContains(t, err, "AKS resource ID")
}

func TestStaticAgentPools(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pools.json")
	content, err := json.Marshal(map[string]any{
		// Matched regardless of the casing of the resource ID.
		"/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourcegroups/hcp-underlay-mgmt-1/providers/microsoft.containerservice/managedclusters/mgmt-1": []any{
			map[string]any{"name": "worker", "properties": map[string]any{"vmSize": "Standard_D16ds_v5", "count": 2,
				"nodeLabels": map[string]string{RoleLabel: WorkerRole}, "tags": map[string]string{NICSecondaryCountTag: "16"}}},
		},
		AnyCluster: []any{
			map[string]any{"name": "small", "properties": map[string]any{"vmSize": "Standard_D4ds_v5", "count": 1}},
		},
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, content, 0o600))

	s, err := LoadStatic(file)
	require.NoError(t, err)
	pools, err := s.List(t.Context(), testAKS)
	require.NoError(t, err)
	require.Len(t, pools, 1)
	assert.Equal(t, "worker", pools[0].Name)
	nics, ok := pools[0].SecondaryNICs()
	assert.True(t, ok)
	assert.Equal(t, int64(16), nics)

	pools, err = s.List(t.Context(), "/subscriptions/x/resourceGroups/y/providers/Microsoft.ContainerService/managedClusters/other")
	require.NoError(t, err)
	require.Len(t, pools, 1)
	assert.Equal(t, "small", pools[0].Name, "other clusters get the wildcard entry")

	empty, err := ParseStatic([]byte(`{}`))
	require.NoError(t, err)
	pools, err = empty.List(t.Context(), testAKS)
	require.NoError(t, err)
	assert.Empty(t, pools)
}

func TestStaticAgentPoolsRejectsIncompletePools(t *testing.T) {
	for name, content := range map[string]string{
		"not JSON":    `[`,
		"no VM size":  `{"*": [{"name": "a", "properties": {"count": 1}}]}`,
		"no count":    `{"*": [{"name": "a", "properties": {"vmSize": "Standard_D4ds_v5"}}]}`,
		"wrong shape": `{"*": {"name": "a"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseStatic([]byte(content))
			assert.Error(t, err)
		})
	}
	_, err := LoadStatic(filepath.Join(t.TempDir(), "missing.json"))
	assert.ErrorContains(t, err, "reading agent pool file")
}

func TestPoolTags(t *testing.T) {
	for tag, want := range map[string]int64{"16": 16, "0": 0} {
		n, ok := Pool{Tags: map[string]string{NICSecondaryCountTag: tag}}.SecondaryNICs()
		assert.True(t, ok)
		assert.Equal(t, want, n)
	}
	for _, tag := range []string{"", "-1", "many"} {
		_, ok := Pool{Tags: map[string]string{NICSecondaryCountTag: tag}}.SecondaryNICs()
		assert.False(t, ok, tag)
	}
	_, ok := Pool{}.SecondaryNICs()
	assert.False(t, ok)
}
