package fakeclusterservice

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/require"
)

type harness struct {
	fake *Server
	srv  *httptest.Server
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	f := New(WithSeed(7))
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return &harness{fake: f, srv: srv}
}

type response struct {
	status      int
	contentType string
	body        string
}

func (h *harness) do(t *testing.T, method, path, body string) response {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.srv.URL+path, r)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: string(b)}
}

// decode parses a JSON response body into a generic map.
func decode(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	return m
}

const shardJSON = `{
  "region": {"id": "eastus"},
  "cloud_provider": {"id": "azure"},
  "topology": "shared",
  "azure_shard": {
    "aks_management_cluster_resource_id": "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/mc-1",
    "public_dns_zone_resource_id": "/subscriptions/s/resourceGroups/dns/providers/Microsoft.Network/dnszones/example.com",
    "cx_managed_identities_key_vault_url": "https://mi.vault.azure.net/",
    "cx_secrets_key_vault_url": "https://secrets.vault.azure.net/",
    "cx_secrets_key_vault_managed_identity_client_id": "11111111-1111-1111-1111-111111111111"
  },
  "maestro_config": {
    "consumer_name": "mc-1",
    "rest_api_config": {"url": "http://maestro:8000"},
    "grpc_api_config": {"url": "maestro-grpc:8090"}
  }
}`

// clusterJSON is the body ARO-HCP sends to create cluster "hcp-1" under id, pinned to shard
// unless shard is "", as the SDK writes it. Tests that need another cluster replace
// "hcp-1", which every name and resource ID in it derives from.
func clusterJSON(t testing.TB, id, shard string) string {
	t.Helper()
	c, err := ValidCluster(id, "hcp-1", shard).Build()
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, arohcp.MarshalCluster(c, &buf))
	return buf.String()
}

// createShard posts shardJSON and returns the new shard's id.
func (h *harness) createShard(t *testing.T) string {
	t.Helper()
	resp := h.do(t, http.MethodPost, shardsPath, shardJSON)
	require.Equal(t, http.StatusCreated, resp.status, resp.body)
	return decode(t, resp.body)["id"].(string)
}

func replaceAll(s, old, new string) string { return strings.ReplaceAll(s, old, new) }
