package process

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hcpsched/hcpsched/internal/dev/logbuffer"
)

// klogOutput receives everything klog logs during the tests. klog's logger is global
// and not synchronised, so it is configured once, before any test starts a goroutine.
var klogOutput = &logbuffer.Buffer{}

func TestMain(m *testing.M) {
	ConfigureLogging(klogOutput, slog.LevelInfo)
	os.Exit(m.Run())
}

// testLogger collects a test's logs and prints them only if it fails. It never writes
// to t after the test ends, which client-go's asynchronous callbacks could otherwise do.
func testLogger(t *testing.T) *slog.Logger {
	t.Helper()
	buf := &logbuffer.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("process logs:\n%s", buf.String())
		}
	})
	return NewLogger(buf, slog.LevelDebug)
}

// testOptions are loopback, ephemeral-port options without leader election.
func testOptions() Options {
	opts := NewOptions("test")
	opts.MetricsAddress = "127.0.0.1:0"
	opts.HealthAddress = "127.0.0.1:0"
	opts.LeaderElect = false
	opts.ShutdownTimeout = 5 * time.Second
	return opts
}

// running is a Shell whose Run executes in the background.
type running struct {
	shell  *Shell
	cancel context.CancelFunc
	done   chan error
}

// start runs app in a new shell until the returned cancel or the test's end.
func start(t *testing.T, opts Options, reg *prometheus.Registry, app App) *running {
	t.Helper()
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	shell, err := New(opts, reg, testLogger(t))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{shell: shell, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- shell.Run(ctx, app) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return within 10s of cancellation")
		}
	})
	return r
}

// wait returns Run's result, failing the test if it takes longer than timeout.
func (r *running) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err // keep it for the cleanup
		return err
	case <-time.After(timeout):
		t.Fatalf("Run did not return within %s", timeout)
		return nil
	}
}

// get fetches path from addr and returns the status and body.
func get(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// status is get without the body, for assert.Eventually conditions.
func status(addr, path string) int {
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// blockUntilDone is a RunControllers that runs until its context ends.
func blockUntilDone(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

func newRegistry() *prometheus.Registry { return prometheus.NewRegistry() }

func newFakeClient() *fake.Clientset { return fake.NewClientset() }

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
