package process

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHealthzAndMetrics(t *testing.T) {
	reg := newRegistry()
	reconciles := prometheus.NewCounter(prometheus.CounterOpts{Name: "hcpsched_test_reconciles_total", Help: "Test counter."})
	reg.MustRegister(reconciles)
	reconciles.Add(3)

	r := start(t, testOptions(), reg, App{RunControllers: blockUntilDone})
	assert.NotEqual(t, r.shell.MetricsAddr().String(), r.shell.HealthAddr().String(), "two servers")

	code, body := get(t, r.shell.HealthAddr().String(), "/healthz")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok\n", body)

	code, body = get(t, r.shell.MetricsAddr().String(), "/metrics")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "hcpsched_test_reconciles_total 3")
	assert.Contains(t, body, "go_goroutines ", "Go collector")
	assert.Contains(t, body, "process_start_time_seconds ", "process collector")
	assert.Contains(t, body, "hcpsched_is_leader 1", "no election: leads at once")

	// Each path lives on its own server.
	code, _ = get(t, r.shell.HealthAddr().String(), "/metrics")
	assert.Equal(t, http.StatusNotFound, code)
	code, _ = get(t, r.shell.MetricsAddr().String(), "/healthz")
	assert.Equal(t, http.StatusNotFound, code)
}

func TestMetricsNotFromTheGlobalRegistry(t *testing.T) {
	global := prometheus.NewCounter(prometheus.CounterOpts{Name: "hcpsched_test_global_only_total", Help: "Registered globally."})
	require.NoError(t, prometheus.DefaultRegisterer.Register(global))
	t.Cleanup(func() { prometheus.DefaultRegisterer.Unregister(global) })

	r := start(t, testOptions(), nil, App{RunControllers: blockUntilDone})
	_, body := get(t, r.shell.MetricsAddr().String(), "/metrics")
	assert.NotContains(t, body, "hcpsched_test_global_only_total")
}

func TestSharedMetricsAndHealthAddress(t *testing.T) {
	opts := testOptions()
	opts.MetricsAddress = freeAddress(t)
	opts.HealthAddress = opts.MetricsAddress
	r := start(t, opts, nil, App{RunControllers: blockUntilDone})

	addr := r.shell.MetricsAddr().String()
	assert.Equal(t, addr, r.shell.HealthAddr().String())
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		assert.Eventually(t, func() bool { return status(addr, path) == http.StatusOK }, 5*time.Second, 10*time.Millisecond, path)
	}
}

func TestReadyzNamesFailingChecks(t *testing.T) {
	var cosmosErr error = errors.New("cosmos unreachable: key=abc") // must not be served
	app := App{
		RunControllers: blockUntilDone,
		ReadinessChecks: []ReadinessCheck{
			{Name: "cosmos", Check: func(context.Context) error { return cosmosErr }},
			{Name: "always", Check: func(context.Context) error { return nil }},
		},
	}
	r := start(t, testOptions(), nil, app)
	addr := r.shell.HealthAddr().String()

	// Synced, but cosmos still fails: unready, and only the failing check is named as such.
	require.Eventually(t, func() bool { return r.shell.health.synced.Load() }, 5*time.Second, 10*time.Millisecond)
	code, body := get(t, addr, "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "[-]cosmos failed\n")
	assert.Contains(t, body, "[+]always ok\n")
	assert.Contains(t, body, "[+]caches-synced ok\n")
	assert.Contains(t, body, "readyz check failed: cosmos\n")
	assert.NotContains(t, body, "key=abc")
}

func TestNewFailsWhenTheAddressIsTaken(t *testing.T) {
	first, err := New(testOptions(), newRegistry(), testLogger(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = first.Close() })

	opts := testOptions()
	opts.HealthAddress = first.HealthAddr().String()
	_, err = New(opts, newRegistry(), testLogger(t))
	assert.ErrorContains(t, err, "health server: listen on "+first.HealthAddr().String())
}

// freeAddress returns a loopback address with a port that was free a moment ago: port
// 0 cannot express "the same port for both servers".
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func TestSameAddress(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{":8080", ":8080", true},
		{"127.0.0.1:9000", "127.0.0.1:9000", true},
		{":8080", ":8081", false},
		{"127.0.0.1:0", "127.0.0.1:0", false},
		{":0", ":0", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, sameAddress(tt.a, tt.b), "%s vs %s", tt.a, tt.b)
	}
}

// Go's profiles are served on the metrics server only when --profiling asks for them,
// never on the health server that kubelet probes.
func TestProfilingOnlyWhenAskedFor(t *testing.T) {
	for _, tc := range []struct {
		name      string
		profiling bool
		want      int
	}{
		{"off by default", false, http.StatusNotFound},
		{"on", true, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions()
			opts.Profiling = tc.profiling
			r := start(t, opts, nil, App{RunControllers: blockUntilDone})
			code, body := get(t, r.shell.MetricsAddr().String(), "/debug/pprof/goroutine?debug=1")
			assert.Equal(t, tc.want, code)
			if tc.profiling {
				assert.Contains(t, body, "goroutine profile: total")
			}
			code, _ = get(t, r.shell.HealthAddr().String(), "/debug/pprof/")
			assert.Equal(t, http.StatusNotFound, code, "not on the health server")
		})
	}
}
