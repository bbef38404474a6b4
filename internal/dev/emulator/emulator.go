// Package emulator starts and stops hcpsched's local Azure Cosmos DB (NoSQL)
// emulator: the Node server in the repository's emulator/ folder, which wraps
// @vercel/cosmosdb-server and fixes the behaviours azcosmos depends on.
//
// Tests use StartForTest; anything else uses Start and Stop. The server binds
// 127.0.0.1 only, speaks plain http, accepts any master key and exits on its
// own when this process dies (Pdeathsig on Linux, and EOF on its stdin pipe).
package emulator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// WellKnownKey is the master key of the official Cosmos DB emulator. Our
// emulator accepts any key; using this one keeps connection strings familiar.
const WellKnownKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// EnvDir names the environment variable that locates the emulator/ folder
// when Options.Dir is empty.
const EnvDir = "HCPSCHED_EMULATOR_DIR"

// EnvExcluded names the environment variable that keeps the emulator from starting:
// `make check` sets it, so that its run holds no emulator-backed test (see Excluded).
const EnvExcluded = "HCPSCHED_NO_EMULATOR"

// ErrExcluded is what Start returns while $HCPSCHED_NO_EMULATOR is set.
var ErrExcluded = errors.New("emulator: not started: the test run excludes it")

const (
	defaultStartTimeout = 30 * time.Second
	stopGrace           = 5 * time.Second
	// The server logs only errors; keeping the tail is enough to explain a
	// failed start or a failed test.
	logTailBytes = 64 << 10
)

// Options configures Start.
type Options struct {
	// Port to listen on; 0 picks a free port.
	Port int
	// Latency is added by the server to every request (passed as
	// --latency-ms), to mimic the round trip to a real in-region account.
	// (*Emulator).SetLatency changes it while the server runs.
	Latency time.Duration
	// Dir is the emulator/ folder holding server.js and node_modules. When
	// empty, $HCPSCHED_EMULATOR_DIR is used, else the folder is found by
	// walking up from the working directory to the module root (the folder
	// with go.mod and emulator/server.js).
	Dir string
	// Log receives the server's stdout (after the listening line) and
	// stderr. nil discards them.
	Log io.Writer
}

// Emulator is a running emulator process.
type Emulator struct {
	// Endpoint is the account endpoint, http://127.0.0.1:PORT.
	Endpoint string
	// Key is the master key clients should use (any key is accepted).
	Key string

	cmd      *exec.Cmd
	stdin    io.WriteCloser
	done     chan struct{} // closed once the process has been reaped
	waitErr  error         // valid after done is closed
	stopOnce sync.Once
	stopErr  error
	http     *http.Client
	tail     *tailBuffer
}

// Excluded returns ErrExcluded, with what to do about it, while $HCPSCHED_NO_EMULATOR
// is set. `make check` leaves the emulator-backed tests out of its run by name (a test
// whose name holds Emulator, a subtest named emulator); one that is named otherwise
// fails here rather than running in the fast loop.
func Excluded() error {
	if os.Getenv(EnvExcluded) == "" {
		return nil
	}
	return fmt.Errorf("%w ($%s is set, as make check sets it): name a test that needs Cosmos ...Emulator, "+
		"or run it as a subtest named emulator, so that make check leaves it out; make test runs it", ErrExcluded, EnvExcluded)
}

// Start launches the emulator and returns once it answers GET / (account
// discovery). ctx bounds the start only; the process lives until Stop or
// until this process exits.
func Start(ctx context.Context, opts Options) (*Emulator, error) {
	if err := Excluded(); err != nil {
		return nil, err
	}
	dir, err := resolveDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("emulator: node not found in PATH (Node.js 18 or newer is required): %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@vercel", "cosmosdb-server", "package.json")); err != nil {
		return nil, fmt.Errorf("emulator: dependencies are not installed in %s: run `make emulator-deps`", filepath.Join(dir, "node_modules"))
	}
	if opts.Port < 0 || opts.Port > 65535 {
		return nil, fmt.Errorf("emulator: invalid port %d", opts.Port)
	}
	if _, hasDeadline := ctx.Deadline(); !hasDeadline {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}

	args := []string{filepath.Join(dir, "server.js"), "--host", "127.0.0.1", "--port", strconv.Itoa(opts.Port)}
	if opts.Latency > 0 {
		args = append(args, "--latency-ms", strconv.FormatInt(opts.Latency.Milliseconds(), 10))
	}
	// Not exec.CommandContext: ctx bounds the start, not the process's life.
	cmd := exec.Command(node, args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	setParentDeathSignal(cmd)

	tail := &tailBuffer{max: logTailBytes}
	var logOut io.Writer = tail
	if opts.Log != nil {
		logOut = io.MultiWriter(tail, &lockedWriter{w: opts.Log})
	}
	cmd.Stderr = logOut
	// An os.Pipe rather than cmd.StdoutPipe: we read stdout for the whole
	// life of the process, and cmd.Wait must not close it under the reader.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("emulator: %w", err)
	}
	cmd.Stdout = stdoutW
	// The server exits when this pipe reaches EOF, i.e. when we close it in
	// Stop or when this process dies and the kernel closes it.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("emulator: %w", err)
	}

	e := &Emulator{
		Key:   WellKnownKey,
		cmd:   cmd,
		stdin: stdin,
		done:  make(chan struct{}),
		tail:  tail,
		http:  newHTTPClient(nil),
	}
	err = e.spawn()
	_ = stdoutW.Close() // the child holds its own copy
	if err != nil {
		_ = stdout.Close()
		return nil, fmt.Errorf("emulator: starting %s: %w", node, err)
	}

	endpoint := make(chan string, 1)
	go func() {
		defer stdout.Close()
		scanStdout(stdout, logOut, endpoint)
	}()

	select {
	case ep, ok := <-endpoint:
		if !ok {
			<-e.done
			return nil, fmt.Errorf("emulator: server exited before listening (%v)%s", e.waitErr, tail.describe())
		}
		e.Endpoint = ep
	case <-e.done:
		return nil, fmt.Errorf("emulator: server exited before listening (%v)%s", e.waitErr, tail.describe())
	case <-ctx.Done():
		_ = e.Stop()
		return nil, fmt.Errorf("emulator: waiting for the server to listen: %w%s", ctx.Err(), tail.describe())
	}

	if err := e.waitReady(ctx); err != nil {
		_ = e.Stop()
		return nil, fmt.Errorf("emulator: %w%s", err, tail.describe())
	}
	return e, nil
}

// spawn starts the process from a goroutine locked to its OS thread and keeps
// that thread alive until the process is reaped: Pdeathsig fires when the
// thread that forked the child exits, not when the Go process does.
func (e *Emulator) spawn() error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := e.cmd.Start(); err != nil {
			runtime.UnlockOSThread()
			started <- err
			close(e.done)
			return
		}
		started <- nil
		e.waitErr = e.cmd.Wait()
		runtime.UnlockOSThread()
		close(e.done)
	}()
	return <-started
}

// scanStdout hands the endpoint from the server's first machine-readable line
// to endpoint, then forwards everything else to log.
func scanStdout(stdout io.Reader, log io.Writer, endpoint chan<- string) {
	r := bufio.NewReader(stdout)
	found := false
	for !found {
		line, err := r.ReadString('\n')
		if line != "" {
			var msg struct {
				Listening string `json:"listening"`
			}
			if json.Unmarshal([]byte(strings.TrimSpace(line)), &msg) == nil && msg.Listening != "" {
				endpoint <- msg.Listening
				found = true
			} else {
				_, _ = io.WriteString(log, line)
			}
		}
		if err != nil {
			break
		}
	}
	if !found {
		close(endpoint)
	}
	_, _ = io.Copy(log, r)
}

func (e *Emulator) waitReady(ctx context.Context) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.Endpoint+"/", nil)
		if err != nil {
			return err
		}
		resp, err := e.http.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET / answered %s", resp.Status)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to answer: %v (last error: %w)", e.Endpoint, ctx.Err(), err)
		case <-e.done:
			return fmt.Errorf("server exited while starting (%v)", e.waitErr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop asks the server to exit (SIGTERM and EOF on stdin), waits for it, and
// kills it if it has not exited within a few seconds. It is safe to call more
// than once.
func (e *Emulator) Stop() error {
	e.stopOnce.Do(func() {
		e.http.CloseIdleConnections()
		select {
		case <-e.done:
		default:
			_ = e.cmd.Process.Signal(syscall.SIGTERM)
			_ = e.stdin.Close()
			select {
			case <-e.done:
			case <-time.After(stopGrace):
				_ = e.cmd.Process.Kill()
				<-e.done
				e.stopErr = fmt.Errorf("emulator: server did not exit within %s of SIGTERM; killed", stopGrace)
				return
			}
		}
		_ = e.stdin.Close()
		var exitErr *exec.ExitError
		if e.waitErr != nil && !(errors.As(e.waitErr, &exitErr) && exitedOnSignal(exitErr, syscall.SIGTERM)) {
			e.stopErr = fmt.Errorf("emulator: server exited with %v%s", e.waitErr, e.tail.describe())
		}
	})
	return e.stopErr
}

// Done is closed when the server process has exited.
func (e *Emulator) Done() <-chan struct{} { return e.done }

// NewClient returns an azcosmos client for this emulator, authenticated with
// Key, over a transport tuned for plain http on loopback. Callers should Close
// it when done.
func (e *Emulator) NewClient() (*azcosmos.Client, error) {
	return e.NewClientWithTransport(nil)
}

// NewClientWithTransport is NewClient with a caller-provided transport
// (for instance to count connections); nil uses the emulator's default.
func (e *Emulator) NewClientWithTransport(transport *http.Transport) (*azcosmos.Client, error) {
	cred, err := azcosmos.NewKeyCredential(e.Key)
	if err != nil {
		return nil, err
	}
	return azcosmos.NewClientWithKey(e.Endpoint, cred, &azcosmos.ClientOptions{
		ClientOptions: azcore.ClientOptions{
			Transport: newHTTPClient(transport),
			// The emulator answers in microseconds; long back-offs only slow
			// tests down when a 5xx or a 429 is injected.
			Retry: policy.RetryOptions{
				MaxRetries:    3,
				RetryDelay:    10 * time.Millisecond,
				MaxRetryDelay: 200 * time.Millisecond,
			},
			Telemetry: policy.TelemetryOptions{Disabled: true},
		},
	})
}

// NewTransport returns the http.Transport NewClient uses: plain HTTP/1.1 to
// loopback, no proxy, generous keep-alive pooling.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:   false,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		// Shorter than the server's keep-alive timeout (120 s), so the client
		// always closes an idle connection before the server does and a
		// request never races a server-side close.
		IdleConnTimeout: 60 * time.Second,
	}
}

func newHTTPClient(transport *http.Transport) *http.Client {
	if transport == nil {
		transport = NewTransport()
	}
	return &http.Client{Transport: transport, Timeout: 60 * time.Second}
}

// StartForTest starts an emulator for the test and stops it in t.Cleanup. It
// fails the test (it does not skip) when the emulator cannot start. The
// server's log is printed if the test fails.
func StartForTest(tb testing.TB) *Emulator {
	return StartForTestWithOptions(tb, Options{})
}

// StartForTestWithOptions is StartForTest with options; opts.Log, if set,
// receives the log in addition to the test's failure output.
func StartForTestWithOptions(tb testing.TB, opts Options) *Emulator {
	tb.Helper()
	log := &tailBuffer{max: logTailBytes}
	if opts.Log != nil {
		opts.Log = io.MultiWriter(log, opts.Log)
	} else {
		opts.Log = log
	}
	ctx, cancel := context.WithTimeout(context.Background(), defaultStartTimeout)
	defer cancel()
	e, err := Start(ctx, opts)
	if err != nil {
		tb.Fatalf("starting the Cosmos emulator: %v", err)
	}
	tb.Cleanup(func() {
		if err := e.Stop(); err != nil {
			tb.Errorf("stopping the Cosmos emulator: %v", err)
		}
		if tb.Failed() {
			if s := log.String(); s != "" {
				tb.Logf("emulator log:\n%s", s)
			}
		}
	})
	return e
}

// resolveDir finds the emulator/ folder: explicit, from the environment, or
// by walking up to the module root.
func resolveDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv(EnvDir)
	}
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(filepath.Join(abs, "server.js")); err != nil {
			return "", fmt.Errorf("emulator: %s has no server.js", abs)
		}
		return abs, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; {
		if fileExists(filepath.Join(d, "go.mod")) && fileExists(filepath.Join(d, "emulator", "server.js")) {
			return filepath.Join(d, "emulator"), nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("emulator: no emulator/server.js beside a go.mod above %s; set %s", wd, EnvDir)
		}
		d = parent
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

func (t *tailBuffer) describe() string {
	if s := strings.TrimSpace(t.String()); s != "" {
		return "\nserver output:\n" + s
	}
	return ""
}

// lockedWriter serialises writes from the stdout and stderr copiers, which
// run concurrently, into a caller's writer that may not be safe for that.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// exitedOnSignal reports whether the process was terminated by sig.
func exitedOnSignal(err *exec.ExitError, sig syscall.Signal) bool {
	ws, ok := err.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}
