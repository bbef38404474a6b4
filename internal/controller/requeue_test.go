package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDelayedAddsKeepOnePendingAddPerKey(t *testing.T) {
	type request struct {
		at   time.Duration // since the start, when after is called
		key  string
		wait time.Duration
	}
	tests := []struct {
		name     string
		requests []request
		// want is when each add happens, since the start, in order.
		want []time.Duration
		keys []string
	}{
		{
			name:     "one request",
			requests: []request{{0, "a", time.Minute}},
			want:     []time.Duration{time.Minute}, keys: []string{"a"},
		},
		{
			name:     "a later request adds nothing",
			requests: []request{{0, "a", time.Minute}, {10 * time.Second, "a", time.Minute}, {20 * time.Second, "a", 5 * time.Minute}},
			want:     []time.Duration{time.Minute}, keys: []string{"a"},
		},
		{
			name:     "a sooner request moves the add earlier",
			requests: []request{{0, "a", 10 * time.Minute}, {10 * time.Second, "a", time.Minute}},
			want:     []time.Duration{70 * time.Second}, keys: []string{"a"},
		},
		{
			name:     "a request due at the same time adds nothing",
			requests: []request{{0, "a", time.Minute}, {30 * time.Second, "a", 30 * time.Second}},
			want:     []time.Duration{time.Minute}, keys: []string{"a"},
		},
		{
			name:     "keys wait independently",
			requests: []request{{0, "a", 2 * time.Minute}, {0, "b", time.Minute}, {0, "a", 3 * time.Minute}},
			want:     []time.Duration{time.Minute, 2 * time.Minute}, keys: []string{"b", "a"},
		},
		{
			name:     "a request after the add is a new wait",
			requests: []request{{0, "a", time.Minute}, {2 * time.Minute, "a", time.Minute}},
			want:     []time.Duration{time.Minute, 3 * time.Minute}, keys: []string{"a", "a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			start := clk.Now()
			var mu sync.Mutex
			var added []string
			var at []time.Duration
			d := newDelayedAdds(clk, func(key string) {
				mu.Lock()
				defer mu.Unlock()
				added = append(added, key)
				at = append(at, clk.Now().Sub(start))
			})
			for _, r := range tt.requests {
				// Fire what is due before this request, then move to it.
				for clk.fireNext(start.Add(r.at)) {
				}
				clk.advance(start.Add(r.at).Sub(clk.Now()))
				d.after(r.key, r.wait)
				assert.Equal(t, d.len(), clk.pending(), "a moved add leaves no timer behind")
			}
			for clk.fireNext(start.Add(time.Hour)) {
			}
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, tt.keys, added)
			assert.Equal(t, tt.want, at)
			assert.Zero(t, d.len())
		})
	}
}

func TestDelayedAddsStop(t *testing.T) {
	clk := newFakeClock()
	var added []string
	d := newDelayedAdds(clk, func(key string) { added = append(added, key) })
	d.after("a", time.Minute)
	d.after("b", time.Minute)
	require.Equal(t, 2, clk.pending())
	d.stop()
	assert.Zero(t, clk.pending(), "every timer stopped")
	assert.Zero(t, d.len())
	d.after("c", time.Minute)
	assert.Zero(t, clk.pending(), "nothing new after stop")
	assert.False(t, clk.fireNext(clk.Now().Add(time.Hour)))
	assert.Empty(t, added)
}

// Shutting a controller down stops the timers of its waiting keys.
func TestRunStopsRequeueTimers(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, Options{Clock: clk}, func(context.Context, string) (Result, error) {
		return Result{RequeueAfter: time.Minute}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.ctrl.Run(ctx) }()
	h.ctrl.Enqueue("a")
	h.ctrl.Enqueue("b")
	require.Eventually(t, func() bool { return h.reconciles(ResultRequeue) == 2 }, 5*time.Second, time.Millisecond)
	require.Equal(t, 2, clk.pending())
	cancel()
	require.NoError(t, <-done)
	assert.Zero(t, clk.pending())
}

// len is how many keys have a delayed add pending.
func (d *delayedAdds) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.pending)
}
