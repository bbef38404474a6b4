package informertest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/process"
)

// StallingStore wraps a store so that a test can hang its change feeds, the way a
// request without a deadline hangs on a connection that stopped answering. Everything
// else passes through.
type StallingStore struct {
	database.Store

	mu      sync.Mutex
	release chan struct{} // nil while not stalled
	blocked chan struct{} // closed once a feed read waits on release
	waiting bool
}

// NewStallingStore wraps s; nothing stalls until Stall.
func NewStallingStore(s database.Store) *StallingStore { return &StallingStore{Store: s} }

// Stall makes every change-feed read from now on wait until Resume (or until its context
// ends). The returned channel is closed once a read is waiting.
func (s *StallingStore) Stall() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.release == nil {
		s.release, s.blocked, s.waiting = make(chan struct{}), make(chan struct{}), false
	}
	return s.blocked
}

// Resume releases the waiting reads and lets the next ones through.
func (s *StallingStore) Resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.release != nil {
		close(s.release)
		s.release = nil
	}
}

func (s *StallingStore) Container(name string) database.Container {
	return &stallingContainer{Container: s.Store.Container(name), store: s}
}

type stallingContainer struct {
	database.Container
	store *StallingStore
}

func (c *stallingContainer) ChangeFeed(ctx context.Context, opts database.ChangeFeedOptions) (database.ChangeFeedPage, error) {
	s := c.store
	s.mu.Lock()
	release := s.release
	if release != nil && !s.waiting {
		s.waiting = true
		close(s.blocked)
	}
	s.mu.Unlock()
	if release != nil {
		select {
		case <-release:
		case <-ctx.Done():
			return database.ChangeFeedPage{}, ctx.Err()
		}
	}
	return c.Container.ChangeFeed(ctx, opts)
}

// ReadyzFollowsFeeds drives a running process whose change feeds read through store: its
// /readyz (at url) must pass, fail with the check named check once a stalled feed read has
// outlived the process's stall timeout, and pass again once the feed resumes.
func ReadyzFollowsFeeds(t *testing.T, store *StallingStore, url, check string) {
	t.Helper()
	const wait = 10 * time.Second
	require.Eventually(t, func() bool { code, _ := get(url); return code == http.StatusOK }, wait, 10*time.Millisecond, "ready once the caches synced")

	select {
	case <-store.Stall():
	case <-time.After(wait):
		t.Fatal("no change-feed read reached the stalled store")
	}
	var body string
	require.Eventually(t, func() bool {
		var code int
		code, body = get(url)
		return code == http.StatusServiceUnavailable
	}, wait, 10*time.Millisecond, "unready while a change feed is stalled")
	assert.Contains(t, body, "[-]"+check+" failed")

	store.Resume()
	assert.Eventually(t, func() bool { code, _ := get(url); return code == http.StatusOK }, wait, 10*time.Millisecond, "ready again once polls complete")
}

// ShellReadyzFollowsFeeds runs app in a process shell built from opts until the test
// ends, when it must shut down cleanly (name says what did not), and checks
// ReadyzFollowsFeeds on the shell's /readyz with the feed-readiness check named check.
func ShellReadyzFollowsFeeds(t *testing.T, store *StallingStore, opts process.Options, reg *prometheus.Registry, logger *slog.Logger, app process.App, name, check string) {
	t.Helper()
	shell, err := process.New(opts, reg, logger)
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- shell.Run(ctx, app) }()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Errorf("the %s did not shut down", name)
		}
	})

	ReadyzFollowsFeeds(t, store, "http://"+shell.HealthAddr().String()+"/readyz", check)
}

func get(url string) (int, string) {
	resp, err := http.Get(url) //nolint:gosec // a test's own loopback server
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
