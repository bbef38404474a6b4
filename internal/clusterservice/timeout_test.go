package clusterservice

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	testTimeout   = 50 * time.Millisecond
	testClusterID = "0123456789abcdefghijklmnopqrstuv"
	testShardID   = "shard-1"
)

// stallingServer accepts every request and never answers it, until the client gives up
// or the test ends.
func stallingServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var requests atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv, &requests
}

// Every Cluster Service call ends at its deadline when CS does not answer (finding 5 of
// issue 14: a hung CS blocked Placement and ClusterServiceCreate workers for ever).
func TestCallsToAStalledClusterServiceTimeOut(t *testing.T) {
	cluster, err := arohcp.NewCluster().ID(testClusterID).Build()
	require.NoError(t, err)
	shard, err := shardBuilder(1).Build()
	require.NoError(t, err)
	calls := []struct {
		name string
		call func(ctx context.Context, c *Client) error
	}{
		{"create pinned cluster", func(ctx context.Context, c *Client) error {
			_, err := c.CreatePinnedCluster(ctx, cluster, testShardID)
			return err
		}},
		{"get cluster", func(ctx context.Context, c *Client) error { _, err := c.GetCluster(ctx, testClusterID); return err }},
		{"get cluster provision shard", func(ctx context.Context, c *Client) error {
			_, err := c.GetClusterProvisionShard(ctx, testClusterID)
			return err
		}},
		{"search clusters", func(ctx context.Context, c *Client) error {
			_, err := c.SearchClusters(ctx, identity(1))
			return err
		}},
		{"list provision shards", func(ctx context.Context, c *Client) error { _, err := c.ListProvisionShards(ctx); return err }},
		{"search provision shards", func(ctx context.Context, c *Client) error {
			_, err := c.SearchProvisionShards(ctx, ShardIdentity{AKSResourceID: aksID(1), ConsumerName: consumer(1)})
			return err
		}},
		{"get provision shard", func(ctx context.Context, c *Client) error {
			_, err := c.GetProvisionShard(ctx, testShardID)
			return err
		}},
		{"create provision shard", func(ctx context.Context, c *Client) error { _, err := c.CreateProvisionShard(ctx, shard); return err }},
		{"set provision shard status", func(ctx context.Context, c *Client) error {
			_, err := c.SetProvisionShardStatus(ctx, testShardID, ShardStatusActive)
			return err
		}},
	}
	for _, tt := range calls {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, requests := stallingServer(t)
			c, err := New(t.Context(), Config{URL: srv.URL, Timeout: testTimeout, RetryInterval: time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			assertTimesOut(t, func(ctx context.Context) error { return tt.call(ctx, c) })
			assert.Equal(t, int32(1), requests.Load())
		})
	}
}

// The deadline covers the token request too.
func TestStalledTokenRequestTimesOut(t *testing.T) {
	tokenServer, tokenRequests := stallingServer(t)
	srv, requests := stallingServer(t)
	c, err := New(t.Context(), Config{
		URL: srv.URL, ClientID: "fleet", ClientSecret: "s3cret", TokenURL: tokenServer.URL,
		Timeout: testTimeout, RetryInterval: time.Millisecond, Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	assertTimesOut(t, func(ctx context.Context) error { _, err := c.ListProvisionShards(ctx); return err })
	assert.Positive(t, tokenRequests.Load())
	assert.Zero(t, requests.Load(), "no token, no request")
}

func assertTimesOut(t *testing.T, call func(context.Context) error) {
	t.Helper()
	// A guard well beyond the timeout, so that a call without one fails rather than hangs.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	start := time.Now()
	err := call(ctx)
	took := time.Since(start)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NoError(t, ctx.Err(), "cut by the client's timeout, not by the caller's deadline")
	assert.Less(t, took, time.Second)
}

func TestTuneTransport(t *testing.T) {
	defaults := http.DefaultTransport.(*http.Transport)
	wrapped := tuneTransport(testTimeout)(&http.Transport{})
	tr, ok := wrapped.(*http.Transport)
	require.True(t, ok, "the SDK's transport itself, not a wrapper around it")
	assert.Equal(t, testTimeout, tr.ResponseHeaderTimeout)
	assert.Equal(t, defaults.TLSHandshakeTimeout, tr.TLSHandshakeTimeout)
	assert.Equal(t, defaults.IdleConnTimeout, tr.IdleConnTimeout)
	assert.Equal(t, defaults.ExpectContinueTimeout, tr.ExpectContinueTimeout)
	for _, d := range []time.Duration{tr.TLSHandshakeTimeout, tr.IdleConnTimeout} {
		assert.Positive(t, d)
	}

	other := &otherTransport{}
	assert.Same(t, other, tuneTransport(testTimeout)(other), "another transport passes through")
}

// Concurrent calls reuse their connections: rounds of calls in flight at once open the
// connections of the first round and (nearly) no more.
func TestConcurrentCallsReuseConnections(t *testing.T) {
	const inFlight, rounds = 16, 3
	var opened atomic.Int32
	arrived := make(chan struct{})
	var release atomic.Pointer[chan struct{}]
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wait := *release.Load()
		arrived <- struct{}{}
		<-wait
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"kind":"Cluster","id":"`+testClusterID+`"}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c, err := New(t.Context(), Config{URL: srv.URL, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	for round := range rounds {
		wait := make(chan struct{})
		release.Store(&wait)
		errs := make(chan error, inFlight)
		for range inFlight {
			go func() {
				_, err := c.GetCluster(t.Context(), testClusterID)
				errs <- err
			}()
		}
		// Every call of the round holds a connection before any is answered.
		for range inFlight {
			<-arrived
		}
		close(wait)
		for range inFlight {
			require.NoError(t, <-errs, "round %d", round)
		}
	}
	// A call may find its connection not yet back in the pool (net/http returns it just
	// after the body's last read) and dial another; with net/http's 2 idle connections
	// each round after the first would open inFlight-2 more.
	assert.LessOrEqual(t, opened.Load(), int32(inFlight+inFlight/4), "connections opened over %d rounds of %d calls at once", rounds, inFlight)
}

type otherTransport struct{ http.RoundTripper }

func TestTimeoutFlag(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    time.Duration
		wantErr string
	}{
		{name: "default", want: DefaultTimeout},
		{name: "set", args: []string{"--clusters-service-timeout=5s"}, want: 5 * time.Second},
		{name: "zero", args: []string{"--clusters-service-timeout=0s"}, wantErr: "--clusters-service-timeout must be positive"},
		{name: "negative", args: []string{"--clusters-service-timeout=-1s"}, wantErr: "--clusters-service-timeout must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg Config
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			AddFlags(fs, &cfg)
			require.NoError(t, fs.Parse(tt.args))
			err := cfg.Validate()
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.Timeout)
		})
	}
}
