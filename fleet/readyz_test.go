package main

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/fleet/agentpools"
	"github.com/hcpsched/hcpsched/fleet/app"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/informertest"
	"github.com/hcpsched/hcpsched/internal/informers"
)

type noAgentPools struct{}

func (noAgentPools) List(context.Context, string) ([]agentpools.Pool, error) { return nil, nil }

// The fleet controller, wired as in production but over a store whose change feed can
// hang, is unready while a feed has gone --changefeed-stall-timeout without a completed
// poll.
func TestReadyzFailsWhileAChangeFeedStalls(t *testing.T) {
	f, err := parseControllerFlags([]string{
		"--cosmos-endpoint=https://unused.example/",
		"--clusters-service-url=http://unused.example/",
		"--region=westus3",
		"--changefeed-poll-interval=50ms",
		"--changefeed-stall-timeout=500ms",
		"--leader-elect=false",
		"--metrics-address=127.0.0.1:0",
		"--health-address=127.0.0.1:0",
	}, io.Discard, func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	srv := httptest.NewServer(fakeclusterservice.New())
	t.Cleanup(srv.Close)
	logger := slog.New(slog.DiscardHandler)
	cs, err := clusterservice.New(t.Context(), clusterservice.Config{URL: srv.URL, Logger: logger})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })

	store := informertest.NewStallingStore(memory.New())
	reg := prometheus.NewRegistry()
	fleet, err := app.New(app.Config{
		Store: store, ClusterService: cs, AgentPools: noAgentPools{}, Region: f.region,
		Workers: f.workers, ResyncPeriod: f.resyncPeriod,
		CapacityPollInterval: f.capacityPollInterval, ScaleCeilingInterval: f.scaleCeilingInterval,
		Registerer: reg, Logger: logger, Informers: f.informers,
	})
	require.NoError(t, err)
	informertest.ShellReadyzFollowsFeeds(t, store, f.shell, reg, logger, fleet, "fleet", informers.FeedReadinessCheck)
}
