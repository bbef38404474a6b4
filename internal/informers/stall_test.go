package informers_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/informertest"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// failingStore fails every change-feed read while failing is set.
type failingStore struct {
	database.Store
	failing atomic.Bool
	reads   atomic.Int64
}

func (s *failingStore) Container(name string) database.Container {
	return &failingContainer{Container: s.Store.Container(name), store: s}
}

type failingContainer struct {
	database.Container
	store *failingStore
}

func (c *failingContainer) ChangeFeed(ctx context.Context, opts database.ChangeFeedOptions) (database.ChangeFeedPage, error) {
	c.store.reads.Add(1)
	if c.store.failing.Load() {
		return database.ChangeFeedPage{}, errors.New("service unavailable")
	}
	return c.Container.ChangeFeed(ctx, opts)
}

func gauge(t *testing.T, reg *prometheus.Registry, name, container string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "cosmos_container" && l.GetValue() == container {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return 0
}

// A pump that has not completed a poll for the stall timeout, because its feed read hangs
// or keeps failing, fails CheckFeeds, naming the container; a completed poll clears it.
func TestStalledFeedFailsCheckFeedsUntilAPollCompletes(t *testing.T) {
	const poll, stall = 20 * time.Millisecond, 400 * time.Millisecond
	for _, tc := range []struct {
		name string
		// stop makes the feed stop completing polls, returning once a read is affected,
		// and the function that lets it go on.
		stop func(t *testing.T) (database.Store, func() func())
	}{
		{"feed read hangs", func(t *testing.T) (database.Store, func() func()) {
			s := informertest.NewStallingStore(memory.New())
			return s, func() func() {
				select {
				case <-s.Stall():
				case <-time.After(10 * time.Second):
					t.Fatal("no feed read reached the stalled store")
				}
				return s.Resume
			}
		}},
		{"feed read fails", func(t *testing.T) (database.Store, func() func()) {
			s := &failingStore{Store: memory.New()}
			return s, func() func() {
				s.failing.Store(true)
				reads := s.reads.Load()
				require.Eventually(t, func() bool { return s.reads.Load() > reads }, 10*time.Second, time.Millisecond)
				return func() { s.failing.Store(false) }
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, stop := tc.stop(t)
			reg := prometheus.NewRegistry()
			factory, err := informers.NewFactory(store, informers.Options{PollInterval: poll, StallTimeout: stall, RelistPeriod: time.Hour, Registerer: reg})
			require.NoError(t, err)
			informers.NewCaches(factory).Clusters()
			informers.NewCaches(factory).ManagementClusters()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			assert.Error(t, factory.CheckFeeds(ctx), "not started")
			factory.Start(ctx)
			require.True(t, factory.WaitForCacheSync(ctx))
			require.NoError(t, factory.CheckFeeds(ctx))

			resume := stop()
			stoppedAt := time.Now()
			assert.NoError(t, factory.CheckFeeds(ctx), "a poll completed a moment ago")
			var stalled error
			require.Eventually(t, func() bool {
				stalled = factory.CheckFeeds(ctx)
				return stalled != nil && strings.Contains(stalled.Error(), api.ResourcesContainer) && strings.Contains(stalled.Error(), api.FleetContainer)
			}, 10*time.Second, time.Millisecond, "both pumps are reported")
			assert.GreaterOrEqual(t, time.Since(stoppedAt), stall-2*poll, "not before the stall timeout")
			polledBefore := map[string]float64{}
			for _, c := range []string{api.ResourcesContainer, api.FleetContainer} {
				polledBefore[c] = gauge(t, reg, "hcpsched_changefeed_last_poll_timestamp_seconds", c)
				assert.LessOrEqual(t, polledBefore[c], float64(stoppedAt.Add(poll).UnixNano())/1e9, "%s: no poll completed once the feed stopped", c)
			}

			resume()
			assert.Eventually(t, func() bool { return factory.CheckFeeds(ctx) == nil }, 10*time.Second, time.Millisecond, "a completed poll makes it pass again")
			for c, before := range polledBefore {
				assert.Greater(t, gauge(t, reg, "hcpsched_changefeed_last_poll_timestamp_seconds", c), before, c)
			}
		})
	}
}

func TestStallTimeoutMustExceedThePollInterval(t *testing.T) {
	_, err := informers.NewFactory(memory.New(), informers.Options{PollInterval: time.Second, StallTimeout: time.Second})
	assert.ErrorContains(t, err, "--changefeed-stall-timeout (1s) must be greater than --changefeed-poll-interval (1s)")
	assert.NoError(t, informers.Options{}.Validate(), "the defaults are valid")
}
