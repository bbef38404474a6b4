package process

import (
	"context"
	"errors"
	"net/http"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder records lifecycle events in order.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func TestCachesSyncBeforeControllersStart(t *testing.T) {
	var rec recorder
	cachesStarted := make(chan struct{})
	releaseSync := make(chan struct{})
	controllersStarted := make(chan struct{})
	var cacheCtxErr error
	cachesStopped := make(chan struct{})

	app := App{
		StartCaches: func(ctx context.Context) error {
			rec.add("start caches")
			close(cachesStarted)
			go func() {
				<-ctx.Done()
				rec.add("caches stopped")
				cacheCtxErr = ctx.Err()
				close(cachesStopped)
			}()
			return nil
		},
		WaitForCacheSync: func(ctx context.Context) bool {
			select {
			case <-releaseSync:
				rec.add("synced")
				return true
			case <-ctx.Done():
				return false
			}
		},
		RunControllers: func(ctx context.Context) error {
			rec.add("controllers")
			close(controllersStarted)
			<-ctx.Done()
			rec.add("controllers stopped")
			return ctx.Err()
		},
	}
	r := start(t, testOptions(), nil, app)
	addr := r.shell.HealthAddr().String()

	<-cachesStarted
	code, body := get(t, addr, "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code, "not ready before sync")
	assert.Contains(t, body, "[-]caches-synced failed")
	code, _ = get(t, addr, "/healthz")
	assert.Equal(t, http.StatusOK, code, "alive while syncing")
	select {
	case <-controllersStarted:
		t.Fatal("controllers started before the caches synced")
	default:
	}

	close(releaseSync)
	<-controllersStarted
	assert.Eventually(t, func() bool { return status(addr, "/readyz") == http.StatusOK }, 5*time.Second, 10*time.Millisecond)

	r.cancel()
	require.NoError(t, r.wait(t, 10*time.Second))
	<-cachesStopped
	assert.Equal(t, []string{"start caches", "synced", "controllers", "controllers stopped", "caches stopped"}, rec.list(),
		"caches outlive the controllers")
	assert.ErrorIs(t, cacheCtxErr, context.Canceled)
}

func TestGracefulShutdown(t *testing.T) {
	controllersStarted := make(chan struct{})
	controllersCancelled := make(chan struct{})
	finishDrain := make(chan struct{})
	app := App{RunControllers: func(ctx context.Context) error {
		close(controllersStarted)
		<-ctx.Done()
		close(controllersCancelled)
		<-finishDrain // still draining: the process must wait
		return ctx.Err()
	}}
	r := start(t, testOptions(), nil, app)
	addr := r.shell.HealthAddr().String()
	<-controllersStarted
	require.Eventually(t, func() bool { return status(addr, "/readyz") == http.StatusOK }, 5*time.Second, 10*time.Millisecond)

	r.cancel()
	<-controllersCancelled
	// Draining: unready so traffic moves away, but still alive and serving.
	code, body := get(t, addr, "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "[-]shutdown failed")
	select {
	case err := <-r.done:
		t.Fatalf("Run returned (%v) before the controllers drained", err)
	default:
	}

	close(finishDrain)
	require.NoError(t, r.wait(t, 10*time.Second), "a clean shutdown returns nil")
	_, err := http.Get("http://" + addr + "/healthz")
	assert.Error(t, err, "servers are stopped")
}

func TestShutdownDuringCacheSync(t *testing.T) {
	syncing := make(chan struct{})
	controllersRan := false
	app := App{
		WaitForCacheSync: func(ctx context.Context) bool {
			close(syncing)
			<-ctx.Done()
			return false
		},
		RunControllers: func(context.Context) error { controllersRan = true; return nil },
	}
	r := start(t, testOptions(), nil, app)
	<-syncing
	r.cancel()
	require.NoError(t, r.wait(t, 10*time.Second))
	assert.False(t, controllersRan)
}

func TestRunReturnsErrors(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name    string
		app     App
		wantIs  error
		wantMsg string
	}{
		{
			name:    "controllers fail",
			app:     App{RunControllers: func(context.Context) error { return errBoom }},
			wantIs:  errBoom,
			wantMsg: "running controllers: boom",
		},
		{
			name: "caches fail to start",
			app: App{
				StartCaches:    func(context.Context) error { return errBoom },
				RunControllers: func(context.Context) error { panic("controllers must not start") },
			},
			wantIs:  errBoom,
			wantMsg: "starting caches: boom",
		},
		{
			name: "caches never sync",
			app: App{
				WaitForCacheSync: func(context.Context) bool { return false },
				RunControllers:   func(context.Context) error { panic("controllers must not start") },
			},
			wantMsg: "caches did not sync",
		},
		{
			name:    "no controllers",
			app:     App{},
			wantMsg: "App.RunControllers is required",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := start(t, testOptions(), nil, tt.app)
			err := r.wait(t, 10*time.Second)
			require.Error(t, err)
			assert.ErrorContains(t, err, tt.wantMsg)
			if tt.wantIs != nil {
				assert.ErrorIs(t, err, tt.wantIs)
			}
		})
	}
}

func TestControllersReturningNilEndTheProcess(t *testing.T) {
	r := start(t, testOptions(), nil, App{RunControllers: func(context.Context) error { return nil }})
	assert.NoError(t, r.wait(t, 10*time.Second))
}

func TestDrainTimeout(t *testing.T) {
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })
	started := make(chan struct{})
	opts := testOptions()
	opts.ShutdownTimeout = 200 * time.Millisecond
	r := start(t, opts, nil, App{RunControllers: func(context.Context) error {
		close(started)
		<-stuck // ignores its context
		return nil
	}})
	<-started
	r.cancel()
	err := r.wait(t, 10*time.Second)
	assert.ErrorContains(t, err, "controllers did not stop within --shutdown-timeout 200ms")
}

func TestRunTwice(t *testing.T) {
	shell, err := New(testOptions(), newRegistry(), testLogger(t))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, shell.Run(ctx, App{RunControllers: blockUntilDone}))
	assert.ErrorContains(t, shell.Run(ctx, App{RunControllers: blockUntilDone}), "only once")
}

func TestSIGTERMShutsDownGracefully(t *testing.T) {
	started := make(chan struct{})
	r := start(t, testOptions(), nil, App{RunControllers: func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}})
	<-started // Run has installed its signal handler before any controller starts
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	assert.NoError(t, r.wait(t, 10*time.Second))
}
