package fakeclusterservice

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnknownFieldsAreRejected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		method    string
		path      func(shard, cluster string) string
		body      func(t *testing.T, shard string) string
		wantField string
	}{
		{
			name: "misspelled pin", method: http.MethodPost,
			path: func(_, _ string) string { return clustersPath },
			body: func(t *testing.T, shard string) string {
				return strings.Replace(clusterJSON(t, newID(), shard), `"provision_shard_id"`, `"provison_shard_id"`, 1)
			},
			wantField: "provison_shard_id",
		},
		{
			name: "misspelled nested field", method: http.MethodPost,
			path: func(_, _ string) string { return clustersPath },
			body: func(t *testing.T, shard string) string {
				return strings.Replace(clusterJSON(t, newID(), shard), `"tenant_id"`, `"tennant_id"`, 1)
			},
			wantField: "azure.tennant_id",
		},
		{
			name: "unknown field in a shard", method: http.MethodPost,
			path: func(_, _ string) string { return shardsPath },
			body: func(*testing.T, string) string {
				return strings.Replace(shardJSON, `"topology"`, `"capacity": 10, "topology"`, 1)
			},
			wantField: "capacity",
		},
		{
			name: "unknown field in a shard PATCH", method: http.MethodPatch,
			path:      func(shard, _ string) string { return shardsPath + "/" + shard },
			body:      func(*testing.T, string) string { return `{"status":"active","statsu":"offline"}` },
			wantField: "statsu",
		},
		{
			name: "unknown field in a cluster PATCH", method: http.MethodPatch,
			path:      func(_, cluster string) string { return clustersPath + "/" + cluster },
			body:      func(*testing.T, string) string { return `{"properties":{"a":"b"},"propertys":{"a":"b"}}` },
			wantField: "propertys",
		},
		{
			name: "unknown field in a list element", method: http.MethodPatch,
			path:      func(_, cluster string) string { return clustersPath + "/" + cluster },
			body:      func(*testing.T, string) string { return `{"node_pools":{"items":[{"id":"np","nmae":"x"}]}}` },
			wantField: "node_pools.items[0].nmae",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			shard := h.createShard(t)
			cluster := newID()
			require.Equal(t, http.StatusCreated, h.do(t, http.MethodPost, clustersPath, clusterJSON(t, cluster, shard)).status)
			before := h.snapshot(t)

			resp := h.do(t, tt.method, tt.path(shard, cluster), tt.body(t, shard))
			assert.Equal(t, http.StatusBadRequest, resp.status, resp.body)
			assert.Equal(t, "application/json", resp.contentType)
			body := decode(t, resp.body)
			assert.Equal(t, "Error", body["kind"])
			assert.Contains(t, body["reason"], `unknown field "`+tt.wantField+`"`)
			assert.Equal(t, before, h.snapshot(t), "nothing was stored")
		})
	}
}

// snapshot captures the visible state of the fake, to prove a refused request changed none.
func (h *harness) snapshot(t *testing.T) string {
	t.Helper()
	return h.do(t, http.MethodGet, clustersPath, "").body + h.do(t, http.MethodGet, shardsPath, "").body
}

// TestSDKIgnoresUnknownFields documents why the strict check exists: the SDK's own decoder
// accepts the misspelled pin and silently drops it.
func TestSDKIgnoresUnknownFields(t *testing.T) {
	t.Parallel()
	c, err := arohcp.UnmarshalCluster([]byte(`{"name":"x","provison_shard_id":"abc"}`))
	require.NoError(t, err)
	_, pinned := c.GetProvisionShardID()
	assert.False(t, pinned)

	_, _, err = decodeCluster([]byte(`{"name":"x","provison_shard_id":"abc"}`))
	require.Error(t, err)
}

// TestSDKEncodedBodiesPassTheStrictCheck guards against false positives: anything the SDK
// itself writes, including nested structs, links, lists and maps, is accepted.
func TestSDKEncodedBodiesPassTheStrictCheck(t *testing.T) {
	t.Parallel()
	cluster, err := arohcp.NewCluster().
		ID(newID()).
		Name("hcp").
		ProvisionShardID("shard").
		Region(arohcp.NewCloudRegion().ID("eastus")).
		CloudProvider(arohcp.NewCloudProvider().ID("azure")).
		Properties(map[string]string{"a": "b"}).
		MultiAZ(true).
		CreationTimestamp(time.Now()).
		NodePools(arohcp.NewNodePoolList().Items(arohcp.NewNodePool().ID("np1"))).
		Azure(arohcp.NewAzure().
			SubscriptionID("s").ResourceGroupName("rg").ResourceName("n").TenantID("t").
			ManagedResourceGroupName("m").
			OperatorsAuthentication(arohcp.NewAzureOperatorsAuthentication().
				ManagedIdentities(arohcp.NewAzureOperatorsAuthenticationManagedIdentities().
					ManagedIdentitiesDataPlaneIdentityUrl("https://mi.example.com").
					ServiceManagedIdentity(arohcp.NewAzureServiceManagedIdentity().ResourceID("/svc")).
					ControlPlaneOperatorsManagedIdentities(map[string]*arohcp.AzureControlPlaneManagedIdentityBuilder{
						"cpo": arohcp.NewAzureControlPlaneManagedIdentity().ResourceID("/x"),
					})))).
		Build()
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, arohcp.MarshalCluster(cluster, &buf))
	_, _, err = decodeCluster(buf.Bytes())
	require.NoError(t, err, buf.String())

	shard, err := arohcp.UnmarshalProvisionShard([]byte(shardJSON))
	require.NoError(t, err)
	buf.Reset()
	require.NoError(t, arohcp.MarshalProvisionShard(shard, &buf))
	_, _, err = decodeShard(buf.Bytes())
	require.NoError(t, err, buf.String())
}

func TestMalformedBodies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, body := range []string{
		`not json`,
		`[]`,
		`"string"`,
		`{"name": "x"} {"name": "y"}`,
		`{"name": 5}`,
		`{"creation_timestamp": "yesterday"}`,
	} {
		t.Run(body, func(t *testing.T) {
			resp := h.do(t, http.MethodPost, clustersPath, body)
			assert.Equal(t, http.StatusBadRequest, resp.status, resp.body)
			assert.Equal(t, "application/json", resp.contentType)
		})
	}
}
