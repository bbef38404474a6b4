package main

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/backend/app"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/informertest"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// The backend, wired as in production but over a store whose change feed can hang, is
// unready while a feed has gone --changefeed-stall-timeout without a completed poll.
func TestReadyzFailsWhileAChangeFeedStalls(t *testing.T) {
	cfg, err := parse(t, []string{
		"--changefeed-poll-interval=50ms",
		"--changefeed-stall-timeout=500ms",
		"--leader-elect=false",
		"--metrics-address=127.0.0.1:0",
		"--health-address=127.0.0.1:0",
	}, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(fakeclusterservice.New())
	t.Cleanup(srv.Close)
	logger := slog.New(slog.DiscardHandler)
	cs, err := clusterservice.New(t.Context(), clusterservice.Config{URL: srv.URL, Logger: logger})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })

	store := informertest.NewStallingStore(memory.New())
	reg := prometheus.NewRegistry()
	backend, err := app.New(app.Config{
		Store: store, ClusterService: cs, Registerer: reg, Logger: logger,
		Informers: cfg.informers, Placement: cfg.placement, Controllers: cfg.controllers,
	})
	require.NoError(t, err)
	informertest.ShellReadyzFollowsFeeds(t, store, cfg.process, reg, logger, backend, "backend", informers.FeedReadinessCheck)
}
