package cosmos_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/conformance"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/database/emulator"
)

// newTestStore connects to HCPSCHED_COSMOS_ENDPOINT when set (the official emulator or a
// real account; HCPSCHED_COSMOS_KEY selects key auth, otherwise the default Azure
// credential chain is used), and otherwise starts the project's emulator.
func newTestStore(t *testing.T) *cosmos.Store {
	t.Helper()
	cfg := cosmos.Config{
		Endpoint: os.Getenv("HCPSCHED_COSMOS_ENDPOINT"),
		Key:      os.Getenv("HCPSCHED_COSMOS_KEY"),
		Database: fmt.Sprintf("hcpsched-test-%d", time.Now().UnixNano()),
	}
	if cfg.Endpoint == "" {
		emu := emulator.StartForTest(t)
		cfg.Endpoint, cfg.Key = emu.Endpoint, emu.Key
	}
	client, err := cosmos.NewClient(cfg)
	require.NoError(t, err)
	store := cosmos.New(client, cfg.Database)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, store.EnsureDatabase(ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := store.DeleteDatabase(ctx); err != nil {
			t.Logf("removing test database: %v", err)
		}
	})
	return store
}

func TestConformance(t *testing.T) {
	store := newTestStore(t)
	var n atomic.Int64
	conformance.Run(t, func(t *testing.T) database.Container {
		name := fmt.Sprintf("conformance-%d", n.Add(1))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, store.EnsureContainer(ctx, name))
		return store.Container(name)
	})
}
