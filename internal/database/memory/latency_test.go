package memory_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
)

// Every request waits the modelled latency, and concurrent requests wait it side by side:
// the store's lock is not held while waiting, so the latency is I/O that concurrency
// hides, not a serialised cost.
func TestWithLatencyDelaysEveryRequestWithoutSerialising(t *testing.T) {
	const latency = 100 * time.Millisecond
	ctx := context.Background()
	c := memory.New(memory.WithLatency(latency)).Container("c")
	doc := []byte(`{"id":"a","partitionKey":"p","resourceType":"t"}`)
	_, err := c.Create(ctx, "p", doc)
	require.NoError(t, err)
	ranges, err := c.FeedRanges(ctx)
	require.NoError(t, err)

	requests := map[string]func() error{
		"get": func() error { _, err := c.Get(ctx, "p", "a"); return err },
		"create": func() error {
			_, err := c.Create(ctx, "p", []byte(`{"id":"b","partitionKey":"p","resourceType":"t"}`))
			return err
		},
		"replace": func() error {
			_, err := c.Replace(ctx, "p", "a", doc, "stale")
			if errors.Is(err, database.ErrPreconditionFailed) {
				return nil
			}
			return err
		},
		"patch": func() error {
			_, err := c.Patch(ctx, "p", "a", []database.PatchOperation{{Kind: database.PatchSet, Path: "/x", Value: []byte(`1`)}}, database.PatchOptions{})
			return err
		},
		"delete": func() error { return c.Delete(ctx, "p", "missing", "") },
		"list": func() error {
			for _, err := range c.List(ctx, database.ListOptions{ResourceType: "t"}) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"batch": func() error {
			_, err := c.Batch(ctx, "p", []database.BatchOperation{{Kind: database.BatchRead, ID: "a"}})
			return err
		},
		"feed ranges": func() error { _, err := c.FeedRanges(ctx); return err },
		"change feed": func() error {
			_, err := c.ChangeFeed(ctx, database.ChangeFeedOptions{FeedRange: &ranges[0], Start: database.FromBeginning})
			return err
		},
	}
	for name, request := range requests {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			err := request()
			if name != "delete" {
				require.NoError(t, err)
			}
			assert.GreaterOrEqual(t, time.Since(start), latency)
		})
	}

	// Twenty reads at once take about one latency, not twenty.
	const parallel = 20
	start := time.Now()
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			_, err := c.Get(ctx, "p", "a")
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	assert.GreaterOrEqual(t, elapsed, latency)
	assert.Less(t, elapsed, parallel*latency/4, "concurrent requests wait side by side")
}

// A request whose ctx ends while it waits returns the ctx's error.
func TestWithLatencyHonoursCancellation(t *testing.T) {
	c := memory.New(memory.WithLatency(time.Hour)).Container("c")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Create(ctx, "p", []byte(`{"id":"a","partitionKey":"p","resourceType":"t"}`))
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled request kept waiting")
	}
}

// Without the option the store answers at once, as the unit tests rely on.
func TestNoLatencyByDefault(t *testing.T) {
	c := memory.New().Container("c")
	start := time.Now()
	for range 100 {
		_, _ = c.Get(context.Background(), "p", "a")
	}
	assert.Less(t, time.Since(start), time.Second)
}
