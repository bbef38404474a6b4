package clusterservice

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"testing"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreatePinnedCluster(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// shard chooses the pin given the ids of an active, a maintenance and an offline shard.
		shard      func(active, maintenance, offline string) string
		wantStatus int // 0 means success
	}{
		{name: "active shard", shard: func(a, _, _ string) string { return a }},
		{name: "maintenance shard, because a pin bypasses status checks", shard: func(_, m, _ string) string { return m }},
		{name: "offline shard", shard: func(_, _, o string) string { return o }},
		{name: "unknown shard", shard: func(_, _, _ string) string { return "no-such-shard" }, wantStatus: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			active := e.createShard(t, 1, true)
			maintenance := e.createShard(t, 2, false)
			offline := e.createShard(t, 3, false)
			_, err := e.client.SetProvisionShardStatus(t.Context(), offline, ShardStatusOffline)
			require.NoError(t, err)

			pin := tt.shard(active, maintenance, offline)
			id := NewClusterID()
			got, err := e.client.CreatePinnedCluster(t.Context(), buildCluster(t, clusterBuilder(id, 1)), pin)

			posts := e.apiRequests(http.MethodPost, ClustersPath)
			require.Len(t, posts, 1)
			var body map[string]any
			require.NoError(t, json.Unmarshal([]byte(posts[0].Body), &body))
			assert.Equal(t, pin, body["provision_shard_id"], "the pin is sent as the bare shard id")
			assert.Equal(t, id, body["id"], "the pre-assigned id is sent")

			if tt.wantStatus != 0 {
				var apiErr *APIError
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, tt.wantStatus, apiErr.Status)
				assert.NotErrorIs(t, err, ErrNotFound)
				assert.NotErrorIs(t, err, ErrConflict)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, id, got.ID())
			assert.Equal(t, ClustersPath+"/"+id, got.HREF())
			assert.Equal(t, pin, got.ProvisionShardID())

			placement, err := e.client.GetClusterProvisionShard(t.Context(), id)
			require.NoError(t, err)
			assert.True(t, placement.Placed())
			assert.Equal(t, pin, placement.ShardID)
			assert.Equal(t, ProvisionShardsPath+"/"+pin, placement.Shard.HREF())

			onShard, err := e.fake.ClustersOnShard(pin)
			require.NoError(t, err)
			require.Len(t, onShard, 1)
			assert.Equal(t, id, onShard[0].ID())
		})
	}
}

func TestCreatePinnedClusterRefusesBadInputBeforeSending(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shard := e.createShard(t, 1, false)
	tests := []struct {
		name    string
		cluster *arohcp.Cluster
		shard   string
	}{
		{"no pre-assigned id", buildCluster(t, clusterBuilder("", 1)), shard},
		{"malformed id", buildCluster(t, clusterBuilder("NOT-AN-ID", 1)), shard},
		{"malformed shard id", buildCluster(t, clusterBuilder(NewClusterID(), 1)), "../clusters"},
		{"body pinned elsewhere", buildCluster(t, clusterBuilder(NewClusterID(), 1).ProvisionShardID("other")), shard},
		{"no cluster", nil, shard},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.client.CreatePinnedCluster(t.Context(), tt.cluster, tt.shard)
			require.Error(t, err)
		})
	}
	assert.Empty(t, e.apiRequests(http.MethodPost, ClustersPath))

	_, err := e.client.CreateProvisionShard(t.Context(), nil)
	require.Error(t, err)
}

func TestCreateClusterConflicts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shard := e.createShard(t, 1, true)
	id := e.createCluster(t, 1, shard)

	tests := []struct {
		name    string
		cluster *arohcp.Cluster
	}{
		{"same id, as on a retried create", buildCluster(t, clusterBuilder(id, 2))},
		{"same Azure identity under a new id", buildCluster(t, clusterBuilder(NewClusterID(), 1))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.client.CreatePinnedCluster(t.Context(), tt.cluster, shard)
			require.ErrorIs(t, err, ErrConflict)
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, http.StatusConflict, apiErr.Status)
			assert.Equal(t, "CLUSTERS-MGMT-409", apiErr.Code)
		})
	}
}

func TestGetCluster(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shard := e.createShard(t, 1, true)
	id := e.createCluster(t, 1, shard)

	got, err := e.client.GetCluster(t.Context(), id)
	require.NoError(t, err)
	assert.Equal(t, id, got.ID())
	assert.Equal(t, identity(1).ResourceName, got.Azure().ResourceName())
	assert.Equal(t, shard, got.ProvisionShardID())
	assert.False(t, got.CreationTimestamp().IsZero())

	_, err = e.client.GetCluster(t.Context(), NewClusterID())
	require.ErrorIs(t, err, ErrNotFound)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.Status)
	assert.Equal(t, "404", apiErr.ID)
	assert.Equal(t, "CLUSTERS-MGMT-404", apiErr.Code)
	assert.NotEmpty(t, apiErr.Reason)
	assert.NotEmpty(t, apiErr.OperationID)

	_, err = e.client.GetCluster(t.Context(), "bad id")
	require.ErrorIs(t, err, ErrInvalidID)
}

func TestGetClusterProvisionShard(t *testing.T) {
	t.Parallel()

	t.Run("unplaced cluster has an empty href", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		// With no active shard, CS's own (unpinned) placement has nowhere to go.
		e.createShard(t, 1, false)
		id := e.createUnpinned(t, 1)

		placement, err := e.client.GetClusterProvisionShard(t.Context(), id)
		require.NoError(t, err)
		assert.False(t, placement.Placed())
		assert.Empty(t, placement.ShardID)
		assert.Nil(t, placement.Shard)

		// What the SDK itself reports, for whoever reads the SDK directly.
		resp, err := e.client.api.Clusters().Cluster(id).ProvisionShard().Get().SendContext(t.Context())
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.Status())
		assert.Empty(t, resp.Body().HREF())
		assert.Empty(t, resp.Body().ID())
	})

	t.Run("unknown cluster", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		_, err := e.client.GetClusterProvisionShard(t.Context(), NewClusterID())
		require.ErrorIs(t, err, ErrNotFound)
	})

	t.Run("move is visible as a pin violation", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		pinned := e.createShard(t, 1, true)
		other := e.createShard(t, 2, false)
		id := e.createCluster(t, 1, pinned)

		_, err := e.fake.MoveCluster(id, other)
		require.NoError(t, err)

		placement, err := e.client.GetClusterProvisionShard(t.Context(), id)
		require.NoError(t, err)
		assert.Equal(t, other, placement.ShardID)
		assert.NotEqual(t, pinned, placement.ShardID)

		onPinned, err := e.fake.ClustersOnShard(pinned)
		require.NoError(t, err)
		assert.Empty(t, onPinned)
		onOther, err := e.fake.ClustersOnShard(other)
		require.NoError(t, err)
		require.Len(t, onOther, 1)
		assert.Equal(t, id, onOther[0].ID())
	})
}

// createUnpinned creates a cluster the way CS's own placement is exercised: with the raw
// SDK, no provision_shard_id. hcpsched's client never does this.
func (e *env) createUnpinned(t *testing.T, n int) string {
	t.Helper()
	id := NewClusterID()
	resp, err := e.client.api.Clusters().Add().Body(buildCluster(t, clusterBuilder(id, n))).SendContext(t.Context())
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.Status())
	return id
}

func TestUnpinnedCreateIsRoundRobinOverActiveShards(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.createShard(t, 1, true)
	e.createShard(t, 2, false) // maintenance: never chosen
	b := e.createShard(t, 3, true)

	var got []string
	for n := range 4 {
		id := e.createUnpinned(t, n)
		placement, err := e.client.GetClusterProvisionShard(t.Context(), id)
		require.NoError(t, err)
		got = append(got, placement.ShardID)
	}
	assert.Equal(t, []string{a, b, a, b}, got)
}

func TestSearchClusters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shard := e.createShard(t, 1, true)
	id1 := e.createCluster(t, 1, shard)
	e.createCluster(t, 2, shard)

	tests := []struct {
		name    string
		search  AzureIdentity
		wantIDs []string
	}{
		{"exact identity", identity(1), []string{id1}},
		{"different tenant", func() AzureIdentity { a := identity(1); a.TenantID = "other"; return a }(), nil},
		{"different managed resource group", func() AzureIdentity { a := identity(1); a.ManagedResourceGroupName = "x"; return a }(), nil},
		{"nobody", identity(9), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.client.SearchClusters(t.Context(), tt.search)
			require.NoError(t, err)
			var ids []string
			for _, c := range got {
				ids = append(ids, c.ID())
			}
			assert.Equal(t, tt.wantIDs, ids)
		})
	}

	// The wire form is what the fake's whitelist and CS's parser must both accept.
	reqs := e.apiRequests(http.MethodGet, ClustersPath)
	require.NotEmpty(t, reqs)
	q, err := url.ParseQuery(reqs[0].Query)
	require.NoError(t, err)
	assert.Equal(t,
		"azure.subscription_id='00000000-0000-0000-0000-000000000001' and azure.resource_group_name='rg-1' and "+
			"azure.resource_name='hcp-1' and azure.tenant_id='22222222-2222-2222-2222-222222222222' and "+
			"azure.managed_resource_group_name='mrg-1'",
		q.Get("search"))
	assert.Equal(t, "1", q.Get("page"))
	assert.Equal(t, "100", q.Get("size"))
}

func TestSearchClustersRefusesUnsafeValuesBeforeSending(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name   string
		modify func(*AzureIdentity)
	}{
		{"quote", func(a *AzureIdentity) { a.ResourceName = "x' or name like '%" }},
		{"backslash", func(a *AzureIdentity) { a.ResourceGroupName = `rg\` }},
		{"newline", func(a *AzureIdentity) { a.TenantID = "t\n" }},
		{"empty", func(a *AzureIdentity) { a.SubscriptionID = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := identity(1)
			tt.modify(&a)
			_, err := e.client.SearchClusters(t.Context(), a)
			require.Error(t, err)
		})
	}
	assert.Empty(t, e.fake.Requests())
}

func TestProvisionShardLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	created, err := e.client.CreateProvisionShard(t.Context(), buildShard(t, shardBuilder(1)))
	require.NoError(t, err)
	assert.Equal(t, ShardStatusMaintenance, created.Status(), "a new shard starts in maintenance")
	href, err := ShardHREF(created.ID())
	require.NoError(t, err)
	assert.Equal(t, href, created.HREF())

	found, err := e.client.SearchProvisionShards(t.Context(), ShardIdentity{AKSResourceID: aksID(1), ConsumerName: consumer(1)})
	require.NoError(t, err)
	require.Len(t, found, 1)
	assert.Equal(t, created.ID(), found[0].ID())

	none, err := e.client.SearchProvisionShards(t.Context(), ShardIdentity{AKSResourceID: aksID(1), ConsumerName: consumer(2)})
	require.NoError(t, err)
	assert.Empty(t, none)

	activated, err := e.client.ActivateProvisionShard(t.Context(), created.ID())
	require.NoError(t, err)
	assert.Equal(t, ShardStatusActive, activated.Status())
	assert.Equal(t, aksID(1), activated.AzureShard().AksManagementClusterResourceId(), "PATCH keeps other fields")

	patches := e.apiRequests(http.MethodPatch, ProvisionShardsPath+"/"+created.ID())
	require.Len(t, patches, 1)
	assert.JSONEq(t, `{"kind":"ProvisionShard","status":"active"}`, patches[0].Body, "PATCH carries only the change")

	got, err := e.client.GetProvisionShard(t.Context(), created.ID())
	require.NoError(t, err)
	assert.Equal(t, ShardStatusActive, got.Status())

	_, err = e.client.GetProvisionShard(t.Context(), "missing")
	require.ErrorIs(t, err, ErrNotFound)
	_, err = e.client.ActivateProvisionShard(t.Context(), "missing")
	require.ErrorIs(t, err, ErrNotFound)
	_, err = e.client.SetProvisionShardStatus(t.Context(), created.ID(), "retired")
	require.Error(t, err)
}

func TestListProvisionShardsPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 2*listPageSize + 5
	for i := range n {
		e.createShard(t, i, false)
	}
	e.fake.ResetRequests()

	all, err := e.client.ListProvisionShards(t.Context())
	require.NoError(t, err)
	assert.Len(t, all, n)
	seen := map[string]bool{}
	for _, s := range all {
		seen[s.ID()] = true
	}
	assert.Len(t, seen, n, "no shard is listed twice")
	assert.Len(t, e.apiRequests(http.MethodGet, ProvisionShardsPath), 3)
}

func TestCreateProvisionShardRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		shard      *arohcp.ProvisionShardBuilder
		wantStatus int
	}{
		{"same AKS cluster and consumer", shardBuilder(1), http.StatusConflict},
		{"same AKS cluster, other consumer", shardBuilder(1).MaestroConfig(
			arohcp.NewProvisionShardMaestroConfig().ConsumerName("other").
				RestApiConfig(arohcp.NewProvisionShardMaestroRestApiConfig().Url("http://maestro.maestro.svc:8000")).
				GrpcApiConfig(arohcp.NewProvisionShardMaestroGrpcApiConfig().Url("maestro-grpc.maestro.svc:8090"))),
			http.StatusConflict},
		{"same consumer on the same Maestro, other AKS cluster", shardBuilder(2).MaestroConfig(
			arohcp.NewProvisionShardMaestroConfig().ConsumerName(consumer(1)).
				RestApiConfig(arohcp.NewProvisionShardMaestroRestApiConfig().Url("http://maestro.maestro.svc:8000")).
				GrpcApiConfig(arohcp.NewProvisionShardMaestroGrpcApiConfig().Url("maestro-grpc.maestro.svc:8090"))),
			http.StatusConflict},
		{"another management cluster", shardBuilder(2), 0},
		{"created active", shardBuilder(3).Status(ShardStatusActive), http.StatusBadRequest},
		{"created in maintenance explicitly", shardBuilder(4).Status(ShardStatusMaintenance), 0},
		{"unknown topology", shardBuilder(5).Topology("dedicated"), http.StatusBadRequest},
		{"missing maestro config", shardBuilder(6).MaestroConfig(arohcp.NewProvisionShardMaestroConfig().ConsumerName("c6")), http.StatusBadRequest},
		{"missing region", shardBuilder(7).Region(arohcp.NewCloudRegion()), http.StatusBadRequest},
		{"client-chosen id", shardBuilder(8).ID("916a44d3-6d0d-5bcb-8816-2945c804166e"), 0},
		{"malformed client-chosen id", shardBuilder(9).ID("a/b"), http.StatusBadRequest},
	}
	e := newEnv(t)
	e.createShard(t, 1, false)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.client.CreateProvisionShard(t.Context(), buildShard(t, tt.shard))
			if tt.wantStatus == 0 {
				require.NoError(t, err)
				assert.Equal(t, ShardStatusMaintenance, got.Status())
				return
			}
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tt.wantStatus, apiErr.Status)
			assert.Equal(t, tt.wantStatus == http.StatusConflict, errors.Is(err, ErrConflict))
		})
	}
}
