package cosmos_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/dev/emulator"
)

const testTryTimeout = 50 * time.Millisecond

// stallingCosmos answers account discovery and, for the item path, stalls the first
// stalls requests (until the client gives up or the test ends) and answers the rest.
type stallingCosmos struct {
	srv      *httptest.Server
	stalls   int32
	requests atomic.Int32 // item requests seen
}

const itemPath = "/dbs/hcp/colls/resources/docs/a"

func newStallingCosmos(t *testing.T, stalls int32) *stallingCosmos {
	t.Helper()
	s := &stallingCosmos{stalls: stalls}
	release := make(chan struct{})
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/":
			_, _ = fmt.Fprint(w, `{}`)
		case itemPath:
			if s.requests.Add(1) <= s.stalls {
				select {
				case <-r.Context().Done():
				case <-release:
				}
				return
			}
			w.Header().Set("etag", `"2"`)
			_, _ = fmt.Fprint(w, `{"id":"a","partitionKey":"p","_etag":"\"2\""}`)
		default:
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	// Release the stalled handlers before Close waits for them.
	t.Cleanup(func() { close(release); s.srv.Close() })
	return s
}

func (s *stallingCosmos) container(t *testing.T) database.Container {
	t.Helper()
	client, err := cosmos.NewClient(cosmos.Config{Endpoint: s.srv.URL, Key: emulator.WellKnownKey, TryTimeout: testTryTimeout})
	require.NoError(t, err)
	return cosmos.New(client, "hcp").Container("resources")
}

// A read whose first try stalls is cut at the try timeout and tried again by the SDK
// (finding 5 of issue 14: a Get under a 12 s stall took 12 s).
func TestStalledReadIsCutAtTheTryTimeoutAndRetried(t *testing.T) {
	s := newStallingCosmos(t, 1)
	c := s.container(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	item, err := c.Get(ctx, "p", "a")
	took := time.Since(start)
	require.NoError(t, err)
	assert.Equal(t, "a", item.ID)
	assert.Equal(t, int32(2), s.requests.Load(), "the stalled try was retried")
	// The SDK pauses 1 s before it retries a read that failed in transit.
	assert.Less(t, took, 3*time.Second, "the stalled try was cut, not waited out")
}

// A write whose try stalls is cut at the try timeout and not replayed: it may have been
// applied. The caller's retry is safe anyway, being If-Match guarded (see Replace).
func TestStalledWriteIsCutAtTheTryTimeoutAndNotReplayed(t *testing.T) {
	s := newStallingCosmos(t, 1)
	c := s.container(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.Replace(ctx, "p", "a", []byte(`{"id":"a","partitionKey":"p"}`), `"1"`)
	took := time.Since(start)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NoError(t, ctx.Err(), "cut by the try timeout, not by the caller's deadline")
	assert.Equal(t, int32(1), s.requests.Load(), "a write that may have been applied is not replayed")
	assert.Less(t, took, time.Second)
}
