package fakeclusterservice

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every answer except 204 carries application/json: the SDK refuses anything else.
func TestContentTypeOnEveryAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	shard := h.createShard(t)
	tests := []struct {
		name, method, path, body string
		wantStatus               int
	}{
		{"list", http.MethodGet, clustersPath, "", http.StatusOK},
		{"create", http.MethodPost, clustersPath, clusterJSON(t, newID(), shard), http.StatusCreated},
		{"missing cluster", http.MethodGet, clustersPath + "/" + newID(), "", http.StatusNotFound},
		{"missing shard of missing cluster", http.MethodGet, clustersPath + "/" + newID() + "/provision_shard", "", http.StatusNotFound},
		{"unknown path", http.MethodGet, "/api/clusters_mgmt/v1/clusters", "", http.StatusNotFound},
		{"trailing slash", http.MethodGet, clustersPath + "/", "", http.StatusNotFound},
		{"method not allowed", http.MethodDelete, shardsPath, "", http.StatusMethodNotAllowed},
		{"PUT is not PATCH", http.MethodPut, shardsPath + "/" + shard, `{"status":"active"}`, http.StatusMethodNotAllowed},
		{"bad request", http.MethodPost, shardsPath, `{}`, http.StatusBadRequest},
		{"admin health", http.MethodGet, adminPrefix + "healthz", "", http.StatusOK},
		{"admin unknown", http.MethodGet, adminPrefix + "nope", "", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(t, tt.method, tt.path, tt.body)
			assert.Equal(t, tt.wantStatus, resp.status, resp.body)
			assert.Equal(t, "application/json", resp.contentType)
			require.NotEmpty(t, resp.body)
			if tt.wantStatus >= 400 {
				body := decode(t, resp.body)
				assert.Equal(t, "Error", body["kind"])
				assert.NotEmpty(t, body["id"])
				assert.NotEmpty(t, body["href"])
				assert.NotEmpty(t, body["code"])
				assert.NotEmpty(t, body["reason"])
			}
		})
	}
}

func TestPinnedCreateRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	shard := h.createShard(t)

	resp := h.do(t, http.MethodPost, clustersPath, clusterJSON(t, newID(), shard))
	require.Equal(t, http.StatusCreated, resp.status, "a pin to a shard in maintenance is accepted: %s", resp.body)
	assert.Equal(t, shard, decode(t, resp.body)["provision_shard_id"])

	resp = h.do(t, http.MethodPost, clustersPath, clusterJSON(t, newID(), "unknown"))
	assert.Equal(t, http.StatusBadRequest, resp.status)
	assert.Contains(t, decode(t, resp.body)["reason"], "unknown")

	resp = h.do(t, http.MethodPost, clustersPath, clusterJSON(t, "Bad-Id", shard))
	assert.Equal(t, http.StatusBadRequest, resp.status)
}

func TestRequestLog(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.do(t, http.MethodGet, clustersPath+"?page=1&size=5", "")
	h.do(t, http.MethodPost, shardsPath, `{"bogus":1}`)
	h.do(t, http.MethodGet, adminPrefix+"healthz", "")

	reqs := h.fake.Requests()
	require.Len(t, reqs, 2, "admin requests are not logged")
	assert.Equal(t, http.MethodGet, reqs[0].Method)
	assert.Equal(t, clustersPath, reqs[0].Path)
	assert.Equal(t, "page=1&size=5", reqs[0].Query)
	assert.Equal(t, http.StatusOK, reqs[0].Status)
	assert.Equal(t, `{"bogus":1}`, reqs[1].Body)
	assert.Equal(t, http.StatusBadRequest, reqs[1].Status)

	h.fake.ResetRequests()
	assert.Empty(t, h.fake.Requests())
}

// Each collection answers GET and POST, each of its objects GET and PATCH, a cluster's
// provision_shard GET; any other method on those paths is 405 and any other path 404.
func TestRoutes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	shard := h.createShard(t)
	cluster := newID()
	require.Equal(t, http.StatusCreated, h.do(t, http.MethodPost, clustersPath, clusterJSON(t, cluster, shard)).status)
	tests := []struct {
		method, path, body string
		wantStatus         int
	}{
		{http.MethodGet, clustersPath, "", http.StatusOK},
		{http.MethodPost, clustersPath, `{}`, http.StatusBadRequest},
		{http.MethodDelete, clustersPath, "", http.StatusMethodNotAllowed},
		{http.MethodGet, clustersPath + "/" + cluster, "", http.StatusOK},
		{http.MethodPatch, clustersPath + "/" + cluster, `{}`, http.StatusOK},
		{http.MethodPost, clustersPath + "/" + cluster, `{}`, http.StatusMethodNotAllowed},
		{http.MethodGet, clustersPath + "/" + cluster + "/provision_shard", "", http.StatusOK},
		{http.MethodPatch, clustersPath + "/" + cluster + "/provision_shard", `{}`, http.StatusMethodNotAllowed},
		{http.MethodGet, clustersPath + "/" + cluster + "/inflight_checks", "", http.StatusNotFound},
		{http.MethodGet, clustersPath + "/" + cluster + "/provision_shard/x", "", http.StatusNotFound},
		{http.MethodGet, shardsPath, "", http.StatusOK},
		{http.MethodPut, shardsPath, "", http.StatusMethodNotAllowed},
		{http.MethodGet, shardsPath + "/" + shard, "", http.StatusOK},
		{http.MethodPatch, shardsPath + "/" + shard, `{"status":"active"}`, http.StatusOK},
		{http.MethodDelete, shardsPath + "/" + shard, "", http.StatusMethodNotAllowed},
		{http.MethodGet, shardsPath + "/" + shard + "/provision_shard", "", http.StatusNotFound},
		{http.MethodGet, apiPrefix + "/versions", "", http.StatusNotFound},
		{http.MethodGet, apiPrefix, "", http.StatusNotFound},
		{http.MethodGet, apiPrefix + "//clusters", "", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			resp := h.do(t, tt.method, tt.path, tt.body)
			assert.Equal(t, tt.wantStatus, resp.status, resp.body)
			if tt.wantStatus == http.StatusMethodNotAllowed {
				assert.Equal(t, "method '"+tt.method+"' isn't supported for path '"+tt.path+"'", decode(t, resp.body)["reason"])
			}
		})
	}
}
