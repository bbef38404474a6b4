// Package cosmostest gives integration tests a Cosmos database of their own: on the
// account named by HCPSCHED_COSMOS_ENDPOINT (the official emulator or a real account,
// with HCPSCHED_COSMOS_KEY or else the default Azure credential chain), or on a freshly
// started project emulator.
package cosmostest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/dev/emulator"
)

// Database is a test's own database, deleted when the test ends.
type Database struct {
	Store *cosmos.Store
	// Config is what a binary under test needs to reach the same database.
	Config cosmos.Config
}

// New creates a database named <prefix>-<nanoseconds> with the given containers, its
// client's request metrics on reg (nil: a private registry).
func New(t testing.TB, prefix string, reg prometheus.Registerer, containers ...string) *Database {
	t.Helper()
	// A run that excludes the emulator excludes a real account as well: it is the run
	// on the memory store alone.
	require.NoError(t, emulator.Excluded())
	cfg := cosmos.Config{
		Endpoint: os.Getenv("HCPSCHED_COSMOS_ENDPOINT"),
		Key:      os.Getenv("HCPSCHED_COSMOS_KEY"),
		Database: fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()),
	}
	if cfg.Endpoint == "" {
		emu := emulator.StartForTest(t)
		cfg.Endpoint, cfg.Key = emu.Endpoint, emu.Key
	}
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	store, err := cosmos.Open(cfg, reg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, store.EnsureLayout(ctx, containers...))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := store.DeleteDatabase(ctx); err != nil {
			t.Logf("removing test database %s: %v", cfg.Database, err)
		}
	})
	return &Database{Store: store, Config: cfg}
}
