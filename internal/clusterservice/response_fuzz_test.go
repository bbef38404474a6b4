package clusterservice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	sdkerrors "github.com/openshift-online/ocm-sdk-go/errors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cannedServer answers every request with the same status and JSON body, whatever was
// asked: one server serves a whole fuzz run, and each input only changes the answer.
type cannedServer struct {
	mu       sync.Mutex
	status   int
	body     []byte
	requests int
}

func (s *cannedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	status, body := s.status, s.body
	s.requests++
	s.mu.Unlock()
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (s *cannedServer) answer(status int, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body, s.requests = status, body, 0
}

// served returns how many requests arrived since it was last called.
func (s *cannedServer) served() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.requests
	s.requests = 0
	return n
}

// fuzzStatus maps any number onto a status code a server can send, 200 to 599; 1xx
// codes are interim answers, not responses.
func fuzzStatus(code uint16) int { return 200 + int(code)%400 }

func success(status int) bool { return status >= 200 && status < 300 }

// delivered says whether the client can see body at all: net/http sends no body with a
// 204.
func delivered(status int, body []byte) bool {
	return len(body) > 0 && status != http.StatusNoContent
}

// FuzzClientResponses points the real client at a server answering with a fuzzed status
// and body, and reads a cluster, a cluster's provision shard, a cluster search and the
// shard list through it. Nothing panics. Every status outside 2xx is an error callers can
// branch on (*APIError, matching ErrNotFound or ErrConflict exactly for 404 and 409),
// whatever the body. A 2xx body the SDK cannot decode is an error, never a zero-value
// success, and a list is never stitched together from repeated answers.
//
// What the SDK accepts that CS would never send, asserted as it is: a body of `null`, and
// bytes after the first JSON value, which it does not read. GetCluster therefore returns
// an empty cluster for a 2xx `null` or `{}`, and does not compare the id it got with the
// one it asked for; callers that need the id check it (none does today). A 2xx with no
// body, `{}` or `null` to GetClusterProvisionShard reads as "not placed yet", as CS's own
// empty shard does: the callers poll again, so that misreading only delays them.
func FuzzClientResponses(f *testing.F) {
	srv := &cannedServer{}
	ts := httptest.NewServer(srv)
	f.Cleanup(ts.Close)
	// Retries are off: a retried 503 would only repeat the same canned answer, slowly.
	c, err := New(context.Background(), Config{URL: ts.URL, DisableRetries: true, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(f, err)
	f.Cleanup(func() { _ = c.Close() })

	for _, seed := range responseSeeds(f) {
		f.Add(seed.code, seed.body)
	}
	clusterID := NewClusterID()
	f.Fuzz(func(t *testing.T, code uint16, body []byte) {
		status := fuzzStatus(code)
		srv.answer(status, body)
		ctx := t.Context()

		cluster, err := c.GetCluster(ctx, clusterID)
		checkVocabulary(t, status, err)
		srv.served()
		if success(status) {
			_, decodeErr := arohcp.UnmarshalCluster(bytes.NewReader(body))
			if !delivered(status, body) || decodeErr != nil {
				require.Error(t, err, "a 2xx the SDK cannot decode (%v) must not read as a cluster", decodeErr)
			} else {
				require.NoError(t, err, "what the SDK decodes is a cluster")
				require.NotNil(t, cluster)
				require.NoError(t, arohcp.MarshalCluster(cluster, io.Discard))
			}
		}

		placement, err := c.GetClusterProvisionShard(ctx, clusterID)
		checkVocabulary(t, status, err)
		srv.served()
		if success(status) {
			checkPlacement(t, status, body, placement, err)
		}

		clusters, err := c.SearchClusters(ctx, identity(1))
		checkVocabulary(t, status, err)
		checkList(t, srv, status, body, len(clusters), err)

		shards, err := c.ListProvisionShards(ctx)
		checkVocabulary(t, status, err)
		checkList(t, srv, status, body, len(shards), err)
	})
}

// checkVocabulary: outside 2xx the error says the status and matches the sentinels.
func checkVocabulary(t *testing.T, status int, err error) {
	t.Helper()
	if success(status) {
		return
	}
	require.Error(t, err, "status %d", status)
	if status == http.StatusNotModified {
		// net/http drops a 304's Content-Type, and the SDK refuses an answer that is not
		// JSON before anyone sees its status, so the error is a plain one. So is a proxy's
		// text/html error page, whatever its status.
		return
	}
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr, "status %d: %v", status, err)
	assert.Equal(t, status, apiErr.Status)
	assert.Equal(t, status == http.StatusNotFound, errors.Is(err, ErrNotFound), "%v", err)
	assert.Equal(t, status == http.StatusConflict, errors.Is(err, ErrConflict), "%v", err)
	assert.Contains(t, err.Error(), fmt.Sprint(status))
}

// checkPlacement: a placement is read from the shard's href and agrees with it; a shard
// the SDK decodes with an href is never read as "not placed".
func checkPlacement(t *testing.T, status int, body []byte, p Placement, err error) {
	t.Helper()
	if !delivered(status, body) {
		require.NoError(t, err)
		assert.False(t, p.Placed(), "an empty answer reads as not placed")
		return
	}
	shard, decodeErr := arohcp.UnmarshalProvisionShard(bytes.NewReader(body))
	if decodeErr != nil {
		require.Error(t, err, "a 2xx the SDK cannot decode (%v) must not read as a placement", decodeErr)
		return
	}
	if err != nil {
		return
	}
	if !p.Placed() {
		assert.Empty(t, shard.HREF(), "a shard with an href is a placement or an error")
		assert.Nil(t, p.Shard)
		return
	}
	require.NotNil(t, p.Shard)
	href, hrefErr := ShardHREF(p.ShardID)
	require.NoError(t, hrefErr)
	assert.Equal(t, p.Shard.HREF(), href)
}

// checkList: the server repeats one answer, so a client that asked twice got the same
// page twice; only one request may end in success. A 2xx without a body is no list.
func checkList(t *testing.T, srv *cannedServer, status int, body []byte, items int, err error) {
	t.Helper()
	requests := srv.served()
	if !success(status) || err != nil {
		return
	}
	assert.Equal(t, 1, requests, "a list of %d items was read from %d copies of one answer", items, requests)
	assert.True(t, delivered(status, body), "a 2xx without a body read as an empty list")
}

type responseSeed struct {
	code uint16
	body []byte
}

// responseSeeds are answers CS gives, encoded by the SDK's own marshalers, under the
// statuses it gives them with, plus the empty answers a proxy might.
func responseSeeds(f *testing.F) []responseSeed {
	marshal := func(write func(io.Writer) error) []byte {
		var buf bytes.Buffer
		require.NoError(f, write(&buf))
		return buf.Bytes()
	}
	status := func(s int) uint16 { return uint16(s - 200) }

	cluster, err := clusterBuilder(NewClusterID(), 1).ProvisionShardID("shard-1").Build()
	require.NoError(f, err)
	shardID := "2a4sf0rthp7ej6q1nj3pc79v4m8ps58s"
	shardHREF, err := ShardHREF(shardID)
	require.NoError(f, err)
	shard, err := shardBuilder(1).ID(shardID).HREF(shardHREF).Status(ShardStatusActive).Build()
	require.NoError(f, err)
	emptyShard, err := arohcp.NewProvisionShard().Build()
	require.NoError(f, err)

	clusterBody := marshal(func(w io.Writer) error { return arohcp.MarshalCluster(cluster, w) })
	shardBody := marshal(func(w io.Writer) error { return arohcp.MarshalProvisionShard(shard, w) })
	emptyShardBody := marshal(func(w io.Writer) error { return arohcp.MarshalProvisionShard(emptyShard, w) })
	list := func(kind string, items []byte, size, total int) []byte {
		return fmt.Appendf(nil, `{"kind":%q,"page":1,"size":%d,"total":%d,"items":%s}`, kind, size, total, items)
	}
	clusters := marshal(func(w io.Writer) error { return arohcp.MarshalClusterList([]*arohcp.Cluster{cluster}, w) })
	shards := marshal(func(w io.Writer) error { return arohcp.MarshalProvisionShardList([]*arohcp.ProvisionShard{shard}, w) })
	errorBody := func(s int) []byte {
		e, err := sdkerrors.NewError().ID(fmt.Sprint(s)).HREF(fmt.Sprintf("/api/aro_hcp/v1alpha1/errors/%d", s)).
			Code(fmt.Sprintf("CLUSTERS-MGMT-%d", s)).Reason("fuzz seed").OperationID("op-1").Build()
		require.NoError(f, err)
		return marshal(func(w io.Writer) error { return sdkerrors.MarshalError(e, w) })
	}

	return []responseSeed{
		{status(200), clusterBody},
		{status(200), shardBody},
		{status(200), emptyShardBody},
		{status(200), list("ClusterList", clusters, 1, 1)},
		{status(200), list("ProvisionShardList", shards, 1, 1)},
		{status(200), list("ClusterList", []byte("[]"), 0, 0)},
		{status(201), clusterBody},
		{status(404), errorBody(404)},
		{status(409), errorBody(409)},
		{status(500), errorBody(500)},
		{status(503), nil},
		{status(204), nil},
		{status(200), nil},
		// A redirect without a Location is not followed; its body is not the resource.
		{status(302), clusterBody},
		{status(304), nil},
		// A server that ignores the page parameter repeats this for page 2.
		{status(200), list("ClusterList", clusters, 1, 2)},
		{status(404), []byte("0")},
	}
}

// FuzzCheckResponse fuzzes the error side alone, much faster than through HTTP: an error
// status with any body becomes an *APIError carrying that status, as the generated SDK
// code hands it over (the decoded error body, or the decoding error).
func FuzzCheckResponse(f *testing.F) {
	for _, seed := range responseSeeds(f) {
		f.Add(seed.code, seed.body)
	}
	f.Add(uint16(404-200), []byte(`{"kind":"Error","status":200,"id":7}`))
	f.Add(uint16(409-200), []byte(`<html>`))
	f.Fuzz(func(t *testing.T, code uint16, body []byte) {
		status := 400 + int(code)%200
		resp := &fakeResponse{status: status}
		var err error
		if len(body) > 0 {
			resp.err, err = sdkerrors.UnmarshalErrorStatus(body, status)
			if err == nil {
				err = resp.err
			}
		}
		checkVocabulary(t, status, checkResponse(resp, err))
	})
}

// fakeResponse is what a generated SDK response offers checkResponse.
type fakeResponse struct {
	status int
	err    *sdkerrors.Error
}

func (r *fakeResponse) Status() int             { return r.status }
func (r *fakeResponse) Error() *sdkerrors.Error { return r.err }
