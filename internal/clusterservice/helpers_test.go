package clusterservice

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
)

// env is one fake CS behind a real HTTP listener on 127.0.0.1, and a client pointed at it.
type env struct {
	fake   *fakeclusterservice.Server
	server *httptest.Server
	client *Client
}

func newEnv(t *testing.T, mods ...func(*Config)) *env {
	t.Helper()
	f := fakeclusterservice.New(fakeclusterservice.WithSeed(1))
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg := Config{
		URL: srv.URL,
		// Short back-off keeps the retry tests fast; the SDK sleeps between attempts.
		RetryInterval: time.Millisecond,
		Logger:        slog.New(slog.DiscardHandler),
	}
	for _, m := range mods {
		m(&cfg)
	}
	c, err := New(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return &env{fake: f, server: srv, client: c}
}

func shardBuilder(n int) *arohcp.ProvisionShardBuilder {
	return arohcp.NewProvisionShard().
		Region(arohcp.NewCloudRegion().ID("eastus")).
		CloudProvider(arohcp.NewCloudProvider().ID("azure")).
		Topology("shared").
		AzureShard(arohcp.NewAzureShard().
			AksManagementClusterResourceId(aksID(n)).
			PublicDnsZoneResourceId("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/dns/providers/Microsoft.Network/dnszones/example.com").
			CxManagedIdentitiesKeyVaultUrl("https://mi.vault.azure.net/").
			CxSecretsKeyVaultUrl("https://secrets.vault.azure.net/").
			CxSecretsKeyVaultManagedIdentityClientId("11111111-1111-1111-1111-111111111111")).
		MaestroConfig(arohcp.NewProvisionShardMaestroConfig().
			ConsumerName(consumer(n)).
			RestApiConfig(arohcp.NewProvisionShardMaestroRestApiConfig().Url("http://maestro.maestro.svc:8000")).
			GrpcApiConfig(arohcp.NewProvisionShardMaestroGrpcApiConfig().Url("maestro-grpc.maestro.svc:8090")))
}

func aksID(n int) string {
	return fmt.Sprintf("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/mc-rg/providers/Microsoft.ContainerService/managedClusters/mc-%d", n)
}

func consumer(n int) string { return fmt.Sprintf("hcp-underlay-mc-%d", n) }

func buildShard(t *testing.T, b *arohcp.ProvisionShardBuilder) *arohcp.ProvisionShard {
	t.Helper()
	s, err := b.Build()
	require.NoError(t, err)
	return s
}

// createShard registers shard n and returns its bare id, optionally activated.
func (e *env) createShard(t *testing.T, n int, activate bool) string {
	t.Helper()
	s, err := e.client.CreateProvisionShard(t.Context(), buildShard(t, shardBuilder(n)))
	require.NoError(t, err)
	if activate {
		_, err = e.client.ActivateProvisionShard(t.Context(), s.ID())
		require.NoError(t, err)
	}
	return s.ID()
}

func identity(n int) AzureIdentity {
	return AzureIdentity{
		SubscriptionID:           "00000000-0000-0000-0000-00000000000" + fmt.Sprint(n%10),
		ResourceGroupName:        fmt.Sprintf("rg-%d", n),
		ResourceName:             fmt.Sprintf("hcp-%d", n),
		TenantID:                 "22222222-2222-2222-2222-222222222222",
		ManagedResourceGroupName: fmt.Sprintf("mrg-%d", n),
	}
}

// clusterBuilder returns the body the backend would send for cluster n, with id: the
// fake's complete valid body at identity(n), unpinned (CreatePinnedCluster pins it).
func clusterBuilder(id string, n int) *arohcp.ClusterBuilder {
	a := identity(n)
	return fakeclusterservice.ValidClusterFor(id, fakeclusterservice.Identity{
		SubscriptionID:       a.SubscriptionID,
		ResourceGroup:        a.ResourceGroupName,
		Name:                 a.ResourceName,
		TenantID:             a.TenantID,
		ManagedResourceGroup: a.ManagedResourceGroupName,
		Location:             "eastus",
	}, "")
}

func buildCluster(t *testing.T, b *arohcp.ClusterBuilder) *arohcp.Cluster {
	t.Helper()
	c, err := b.Build()
	require.NoError(t, err)
	return c
}

// createCluster creates cluster n pinned to shardID and returns its id.
func (e *env) createCluster(t *testing.T, n int, shardID string) string {
	t.Helper()
	id := NewClusterID()
	_, err := e.client.CreatePinnedCluster(t.Context(), buildCluster(t, clusterBuilder(id, n)), shardID)
	require.NoError(t, err)
	return id
}

// apiRequests returns the logged requests, as the fake saw them, for one method and path.
func (e *env) apiRequests(method, path string) []fakeclusterservice.Request {
	var out []fakeclusterservice.Request
	for _, r := range e.fake.Requests() {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

func statuses(reqs []fakeclusterservice.Request) []int {
	out := make([]int, 0, len(reqs))
	for _, r := range reqs {
		out = append(out, r.Status)
	}
	return out
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
