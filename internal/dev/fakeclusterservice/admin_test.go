package fakeclusterservice

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAdminFaults(t *testing.T) {
	t.Parallel()
	h := newHarness(t)

	resp := h.do(t, http.MethodPost, adminPrefix+"faults",
		`{"method":"GET","path_prefix":"`+shardsPath+`","status":503,"count":2,"latency":"1ms"}`)
	require.Equal(t, http.StatusCreated, resp.status, resp.body)
	id := decode(t, resp.body)["id"].(string)

	listed := decode(t, h.do(t, http.MethodGet, adminPrefix+"faults", "").body)["items"].([]any)
	require.Len(t, listed, 1)
	assert.Equal(t, "1ms", listed[0].(map[string]any)["latency"])

	assert.Equal(t, http.StatusOK, h.do(t, http.MethodGet, clustersPath, "").status, "other paths are unaffected")
	assert.Equal(t, http.StatusServiceUnavailable, h.do(t, http.MethodGet, shardsPath, "").status)
	assert.Equal(t, http.StatusServiceUnavailable, h.do(t, http.MethodGet, shardsPath, "").status)
	assert.Equal(t, http.StatusOK, h.do(t, http.MethodGet, shardsPath, "").status, "the fault is used up")

	assert.Equal(t, http.StatusNotFound, h.do(t, http.MethodDelete, adminPrefix+"faults/"+id, "").status)

	resp = h.do(t, http.MethodPost, adminPrefix+"faults", `{"status":500}`)
	require.Equal(t, http.StatusCreated, resp.status)
	id = decode(t, resp.body)["id"].(string)
	assert.Equal(t, http.StatusNoContent, h.do(t, http.MethodDelete, adminPrefix+"faults/"+id, "").status)
	assert.Equal(t, http.StatusOK, h.do(t, http.MethodGet, shardsPath, "").status)

	require.Equal(t, http.StatusCreated, h.do(t, http.MethodPost, adminPrefix+"faults", `{"status":500}`).status)
	assert.Equal(t, http.StatusNoContent, h.do(t, http.MethodDelete, adminPrefix+"faults", "").status)
	assert.Equal(t, http.StatusOK, h.do(t, http.MethodGet, shardsPath, "").status)

	for _, bad := range []string{`{}`, `{"status":42}`, `{"status":500,"rate":2}`, `{"latency":"soon"}`, `{"status":500,"colour":"red"}`} {
		assert.Equal(t, http.StatusBadRequest, h.do(t, http.MethodPost, adminPrefix+"faults", bad).status, bad)
	}
}

func TestAdminRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.do(t, http.MethodPost, shardsPath, shardJSON)
	items := decode(t, h.do(t, http.MethodGet, adminPrefix+"requests", "").body)["items"].([]any)
	require.Len(t, items, 1)
	first := items[0].(map[string]any)
	assert.Equal(t, "POST", first["method"])
	assert.Equal(t, shardsPath, first["path"])
	assert.JSONEq(t, shardJSON, first["body"].(string))
	assert.EqualValues(t, http.StatusCreated, first["status"])

	assert.Equal(t, http.StatusNoContent, h.do(t, http.MethodDelete, adminPrefix+"requests", "").status)
	assert.Empty(t, decode(t, h.do(t, http.MethodGet, adminPrefix+"requests", "").body)["items"])
}

func TestAdminMoveAndClustersOnShard(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	from := h.createShard(t)
	resp := h.do(t, http.MethodPost, shardsPath, `{"id":"second",`+shardJSON[1:])
	require.Equal(t, http.StatusConflict, resp.status, "same AKS cluster as the first shard")
	second := replaceShardIdentity(shardJSON, "mc-2")
	resp = h.do(t, http.MethodPost, shardsPath, second)
	require.Equal(t, http.StatusCreated, resp.status, resp.body)
	to := decode(t, resp.body)["id"].(string)

	cluster := newID()
	require.Equal(t, http.StatusCreated, h.do(t, http.MethodPost, clustersPath, clusterJSON(t, cluster, from)).status)

	created, err := h.fake.ClustersOnShard(from)
	require.NoError(t, err)
	require.Len(t, created, 1)
	rid, ok := AzureResourceID(created[0])
	require.True(t, ok)
	onShard := func(shard string) []string {
		resp := h.do(t, http.MethodGet, adminPrefix+"provision_shards/"+shard+"/resource_ids", "")
		require.Equal(t, http.StatusOK, resp.status, resp.body)
		var list struct {
			Items []string `json:"items"`
		}
		require.NoError(t, json.Unmarshal([]byte(resp.body), &list))
		require.NotNil(t, list.Items, "an empty shard lists [], not null")
		return list.Items
	}
	assert.Equal(t, []string{rid}, onShard(from))
	assert.Empty(t, onShard(to))

	resp = h.do(t, http.MethodPost, adminPrefix+"clusters/"+cluster+"/move", `{"provision_shard_id":"`+to+`"}`)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	assert.Equal(t, to, decode(t, resp.body)["provision_shard_id"])

	assert.Empty(t, onShard(from))
	assert.Equal(t, []string{rid}, onShard(to))
	moved, err := h.fake.ClustersOnShard(to)
	require.NoError(t, err)
	require.Len(t, moved, 1)
	assert.Equal(t, cluster, moved[0].ID())

	placed := decode(t, h.do(t, http.MethodGet, clustersPath+"/"+cluster+"/provision_shard", "").body)
	assert.Equal(t, shardsPath+"/"+to, placed["href"])

	assert.Equal(t, http.StatusNotFound, h.do(t, http.MethodPost, adminPrefix+"clusters/"+newID()+"/move", `{"provision_shard_id":"`+to+`"}`).status)
	assert.Equal(t, http.StatusBadRequest, h.do(t, http.MethodPost, adminPrefix+"clusters/"+cluster+"/move", `{"provision_shard_id":"nope"}`).status)
	assert.Equal(t, http.StatusNotFound, h.do(t, http.MethodGet, adminPrefix+"provision_shards/nope/resource_ids", "").status)

	_, err = h.fake.ClustersOnShard("nope")
	require.ErrorIs(t, err, ErrUnknownShard)
	_, err = h.fake.ResourceIDsOnShard("nope")
	require.ErrorIs(t, err, ErrUnknownShard)
	_, err = h.fake.MoveCluster(newID(), to)
	require.ErrorIs(t, err, ErrUnknownCluster)
}

func TestAdminReset(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createShard(t)
	_, err := h.fake.InjectFault(Fault{Status: 500, PathPrefix: clustersPath})
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, h.do(t, http.MethodPost, adminPrefix+"reset", "").status)
	assert.Empty(t, h.fake.Faults())
	assert.Empty(t, h.fake.Requests())
	assert.Contains(t, h.do(t, http.MethodGet, shardsPath, "").body, `"total":0`)
}

func TestRateFault(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, err := h.fake.InjectFault(Fault{Status: http.StatusServiceUnavailable, Rate: 0.5})
	require.NoError(t, err)
	failed := 0
	const n = 40
	for range n {
		if h.do(t, http.MethodGet, shardsPath, "").status == http.StatusServiceUnavailable {
			failed++
		}
	}
	assert.Greater(t, failed, 0)
	assert.Less(t, failed, n)
	assert.Equal(t, failed, h.fake.Faults()[0].Hits)
}

func TestInjectFaultValidation(t *testing.T) {
	t.Parallel()
	f := New()
	for _, bad := range []Fault{{}, {Status: 700}, {Status: 500, Count: -1}, {Status: 500, Rate: 1.5}, {Latency: -1}} {
		_, err := f.InjectFault(bad)
		assert.Error(t, err, "%+v", bad)
	}
}

func replaceShardIdentity(body, name string) string {
	out := body
	out = replaceAll(out, "managedClusters/mc-1", "managedClusters/"+name)
	out = replaceAll(out, `"consumer_name": "mc-1"`, `"consumer_name": "`+name+`"`)
	return out
}

func TestMisplaceOnCreateIgnoresOnePinOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pinned := h.createShard(t)
	resp := h.do(t, http.MethodPost, shardsPath, replaceShardIdentity(shardJSON, "mc-2"))
	require.Equal(t, http.StatusCreated, resp.status, resp.body)
	other := decode(t, resp.body)["id"].(string)

	h.fake.MisplaceOnCreate("HCP-1") // Azure names compare case-insensitively
	misplaced := newID()
	resp = h.do(t, http.MethodPost, clustersPath, clusterJSON(t, misplaced, pinned))
	require.Equal(t, http.StatusCreated, resp.status, resp.body)
	assert.Equal(t, other, decode(t, resp.body)["provision_shard_id"], "the pin was ignored")

	// Any other cluster honours its pin.
	h.fake.MisplaceOnCreate("hcp-3")
	resp = h.do(t, http.MethodPost, clustersPath, strings.ReplaceAll(clusterJSON(t, newID(), pinned), "hcp-1", "hcp-2"))
	require.Equal(t, http.StatusCreated, resp.status, resp.body)
	assert.Equal(t, pinned, decode(t, resp.body)["provision_shard_id"])
}

// CS refuses a second cluster with the same Azure identity by default; told to accept
// duplicates, the fake creates both, so that a checker counting clusters per identity can
// see a double create instead of having it hidden by the 409. A duplicate id stays a 409:
// the id is the cluster's key.
func TestDuplicateNamesAreAcceptedOnlyWhenAsked(t *testing.T) {
	tests := []struct {
		name   string
		accept bool
		second int
		stored int
	}{
		{name: "refused by default", accept: false, second: http.StatusConflict, stored: 1},
		{name: "accepted when asked", accept: true, second: http.StatusCreated, stored: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.fake.AcceptDuplicateNames(tt.accept)
			shard := h.createShard(t)
			first := newID()
			resp := h.do(t, http.MethodPost, clustersPath, clusterJSON(t, first, shard))
			require.Equal(t, http.StatusCreated, resp.status, resp.body)

			resp = h.do(t, http.MethodPost, clustersPath, clusterJSON(t, newID(), shard))
			assert.Equal(t, tt.second, resp.status, resp.body)
			resp = h.do(t, http.MethodPost, clustersPath, clusterJSON(t, first, shard))
			assert.Equal(t, http.StatusConflict, resp.status, "a duplicate id is a conflict either way: %s", resp.body)

			on, err := h.fake.ClustersOnShard(shard)
			require.NoError(t, err)
			assert.Len(t, on, tt.stored)
		})
	}
	assert.True(t, New(WithDuplicateNames()).acceptDuplicateNames, "the option sets it from the start")
}

// RejectCreate makes every create of one Azure name fail as CS fails an invalid cluster,
// for as long as it is in force, and touches no other cluster.
func TestRejectCreateRefusesOneClusterForGood(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	shard := h.createShard(t)
	h.fake.RejectCreate("HCP-1") // Azure names compare case-insensitively
	for range 2 {
		resp := h.do(t, http.MethodPost, clustersPath, clusterJSON(t, newID(), shard))
		require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
		assert.Contains(t, resp.body, "refused")
	}
	resp := h.do(t, http.MethodPost, clustersPath, strings.ReplaceAll(clusterJSON(t, newID(), shard), "hcp-1", "hcp-2"))
	require.Equal(t, http.StatusCreated, resp.status, resp.body)
	on, err := h.fake.ClustersOnShard(shard)
	require.NoError(t, err)
	assert.Len(t, on, 1)
}
