package controller

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPeriodicResult(t *testing.T) {
	t.Parallel()
	failed := errors.New("remote API unavailable")
	tests := []struct {
		name   string
		next   Next
		err    error
		random float64
		want   Result
	}{
		{name: "again: after the interval", next: Again(), want: Result{RequeueAfter: time.Minute}},
		{name: "again, jittered", next: Again(), random: 0.5, want: Result{RequeueAfter: time.Minute + 3*time.Second}},
		{name: "due in a known time, not jittered", next: DueIn(10 * time.Second), random: 0.5, want: Result{RequeueAfter: 10 * time.Second}},
		{name: "due now is again", next: DueIn(0), want: Result{RequeueAfter: time.Minute}},
		{name: "due in the past is again", next: DueIn(-time.Second), want: Result{RequeueAfter: time.Minute}},
		{name: "idle: no timer", next: Idle(), want: Result{}},
		{name: "an error: backoff, no timer", next: Again(), err: failed, want: Result{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := Periodic{Interval: time.Minute, Jitter: 0.1, random: func() float64 { return tc.random }}
			reconcile, err := p.Reconcile(func(_ context.Context, key string) (Next, error) {
				assert.Equal(t, "k", key)
				return tc.next, tc.err
			})
			require.NoError(t, err)
			got, err := reconcile(t.Context(), "k")
			assert.ErrorIs(t, err, tc.err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestPeriodicJitterStaysWithinItsShare(t *testing.T) {
	t.Parallel()
	p := Periodic{Interval: 30 * time.Second, Jitter: DefaultPeriodicJitter}
	reconcile, err := p.Reconcile(func(context.Context, string) (Next, error) { return Again(), nil })
	require.NoError(t, err)
	seen := map[time.Duration]bool{}
	for range 200 {
		r, err := reconcile(t.Context(), "k")
		require.NoError(t, err)
		assert.GreaterOrEqual(t, r.RequeueAfter, 30*time.Second)
		assert.LessOrEqual(t, r.RequeueAfter, 33*time.Second)
		seen[r.RequeueAfter] = true
	}
	assert.Greater(t, len(seen), 1, "the waits differ")
}

func TestPeriodicRefusesNonsense(t *testing.T) {
	t.Parallel()
	pass := func(context.Context, string) (Next, error) { return Again(), nil }
	for _, p := range []Periodic{{}, {Interval: -time.Second}, {Interval: time.Second, Jitter: -0.1}} {
		_, err := p.Reconcile(pass)
		assert.Error(t, err, "%+v", p)
	}
}

// nextAt is when the earliest live timer is due.
func (c *fakeClock) nextAt() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var at time.Time
	found := false
	for _, t := range c.timers {
		if !t.stopped && (!found || t.at.Before(at)) {
			at, found = t.at, true
		}
	}
	return at, found
}

// On a running controller, a periodic key comes back on its own timer, events in between
// do not start a second one, an idle key keeps no timer, and a failed pass is retried
// with backoff rather than on the timer.
func TestPeriodicKeysComeBackOnTheirTimer(t *testing.T) {
	t.Parallel()
	const interval = time.Minute
	clk := newFakeClock()
	type pass struct {
		key string
		at  time.Time
	}
	passes := make(chan pass, 10)
	var mu sync.Mutex
	next := map[string][]Next{}
	fail := map[string]int{}
	p := Periodic{Interval: interval, Jitter: 0.1, random: func() float64 { return 0.5 }}
	reconcile, err := p.Reconcile(func(_ context.Context, key string) (Next, error) {
		defer func() { passes <- pass{key, clk.Now()} }()
		mu.Lock()
		defer mu.Unlock()
		if fail[key] > 0 {
			fail[key]--
			return Again(), errors.New("failed")
		}
		if len(next[key]) == 0 {
			return Again(), nil
		}
		n := next[key][0]
		next[key] = next[key][1:]
		return n, nil
	})
	require.NoError(t, err)
	h := newHarness(t, Options{Clock: clk}, reconcile)
	h.run(t)
	start := clk.Now()
	const jittered = interval + 3*time.Second
	receive := func(key string) time.Time {
		t.Helper()
		select {
		case got := <-passes:
			require.Equal(t, key, got.key)
			return got.at
		case <-time.After(10 * time.Second):
			t.Fatalf("no pass over %s", key)
		}
		return time.Time{}
	}
	// requireNextAt waits until the pass's requeue is in place: the timer appears once
	// the worker has acted on the pass's result.
	requireNextAt := func(want time.Time) {
		t.Helper()
		require.Eventually(t, func() bool {
			at, ok := clk.nextAt()
			return ok && at.Equal(want)
		}, 10*time.Second, time.Millisecond)
		assert.Equal(t, 1, clk.pending(), "one timer")
	}

	h.ctrl.Enqueue("a")
	receive("a")
	requireNextAt(start.Add(jittered))

	// An event half-way starts a pass, which asks for a later time: the timer stays.
	clk.advance(interval / 2)
	h.ctrl.Enqueue("a")
	receive("a")
	require.Eventually(t, func() bool { return h.reconciles(ResultRequeue) == 2 }, 10*time.Second, time.Millisecond)
	requireNextAt(start.Add(jittered))

	// The timer brings the key back, and the pass sets the next one.
	require.True(t, clk.fireNext(start.Add(jittered)))
	assert.Equal(t, start.Add(jittered), receive("a"))
	requireNextAt(start.Add(2 * jittered))

	// A pass that knows its due time is back exactly then; a pass that goes idle ends the
	// chain.
	mu.Lock()
	next["a"] = []Next{DueIn(10 * time.Second), Idle()}
	mu.Unlock()
	h.ctrl.Enqueue("a")
	receive("a")
	requireNextAt(start.Add(jittered + 10*time.Second))
	require.True(t, clk.fireNext(start.Add(jittered+10*time.Second)))
	receive("a")
	require.Eventually(t, func() bool { return h.reconciles(ResultSuccess) == 1 }, 10*time.Second, time.Millisecond)
	assert.Zero(t, clk.pending(), "an idle key has no timer")

	// A failed pass is retried by the rate limiter (milliseconds of real time, no clock
	// step), then goes back on the timer.
	mu.Lock()
	fail["b"] = 2
	mu.Unlock()
	h.ctrl.Enqueue("b")
	receive("b")
	receive("b")
	at := receive("b")
	requireNextAt(at.Add(jittered))
	assert.Equal(t, float64(2), h.reconciles(ResultError))
	assert.Equal(t, float64(2), h.retries())
}
