package cosmos_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/dev/conformance"
	"github.com/hcpsched/hcpsched/internal/dev/cosmostest"
)

// newTestStore gives the suite a database of its own (see cosmostest); each subtest adds
// a fresh container to it.
func newTestStore(t *testing.T) *cosmos.Store {
	return cosmostest.New(t, "hcpsched-test", nil).Store
}

// The suite runs as the subtest emulator, the name make check leaves out (it runs the
// memory store's suite alone).
func TestConformance(t *testing.T) {
	t.Run("emulator", func(t *testing.T) {
		store := newTestStore(t)
		var n atomic.Int64
		conformance.Run(t, func(t *testing.T) database.Container {
			name := fmt.Sprintf("conformance-%d", n.Add(1))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			require.NoError(t, store.EnsureContainer(ctx, name))
			return store.Container(name)
		})
	})
}
