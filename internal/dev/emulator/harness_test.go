package emulator

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartForTestAndStop(t *testing.T) {
	e := StartForTest(t)
	u, err := url.Parse(e.Endpoint)
	require.NoError(t, err)
	assert.Equal(t, "http", u.Scheme)
	assert.Equal(t, "127.0.0.1", u.Hostname())
	assert.NotEqual(t, "0", u.Port())
	assert.Equal(t, WellKnownKey, e.Key)

	require.NoError(t, e.Stop())
	select {
	case <-e.Done():
	default:
		t.Fatal("process still running after Stop")
	}
	require.NoError(t, e.Stop(), "Stop is idempotent")
	_, err = http.Get(e.Endpoint + "/")
	assert.Error(t, err, "nothing listens after Stop")
}

// The server exits by itself when the pipe on its stdin closes, which is what
// happens when the Go process holding it dies.
func TestServerExitsWhenStdinCloses(t *testing.T) {
	e := StartForTest(t)
	require.NoError(t, e.stdin.Close())
	select {
	case <-e.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("server still running 10s after its stdin closed")
	}
}

func TestFixedPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())

	e := StartForTestWithOptions(t, Options{Port: port})
	assert.Equal(t, "http://127.0.0.1:"+strconv.Itoa(port), e.Endpoint)
}

func TestStartErrors(t *testing.T) {
	t.Run("missing node_modules", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "server.js"), []byte("process.exit(1)\n"), 0o644))
		_, err := Start(context.Background(), Options{Dir: dir})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "make emulator-deps")
	})
	t.Run("no server.js", func(t *testing.T) {
		_, err := Start(context.Background(), Options{Dir: t.TempDir()})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "server.js")
	})
	t.Run("environment names the folder", func(t *testing.T) {
		dir := t.TempDir()
		t.Setenv(EnvDir, dir)
		_, err := Start(context.Background(), Options{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), dir)
	})
	t.Run("found from the working directory", func(t *testing.T) {
		dir, err := resolveDir("")
		require.NoError(t, err)
		assert.FileExists(t, filepath.Join(dir, "server.js"))
	})
}

// Problem 7: GET / (account discovery) advertises the plain-http loopback
// endpoint we were given, so the SDK keeps talking to it.
func TestEndpointDiscoveryAdvertisesLoopback(t *testing.T) {
	resp, err := http.Get(shared.Endpoint + "/")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var account struct {
		Writable []struct {
			Endpoint string `json:"databaseAccountEndpoint"`
		} `json:"writableLocations"`
		Readable []struct {
			Endpoint string `json:"databaseAccountEndpoint"`
		} `json:"readableLocations"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&account))
	require.Len(t, account.Writable, 1)
	require.Len(t, account.Readable, 1)
	assert.Equal(t, shared.Endpoint+"/", account.Writable[0].Endpoint)
	assert.Equal(t, shared.Endpoint+"/", account.Readable[0].Endpoint)
	u, err := url.Parse(account.Writable[0].Endpoint)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", u.Hostname())

	// And the SDK, which reads that document first, works end to end.
	client := sharedClient(t)
	c := newContainer(t, client, containerSpec{})
	create(t, c, doc{ID: "a", PK: "p"})
}

// Problem 6: connections are kept alive. 50 requests through one client
// should dial once (twice at most, if the SDK's discovery races the first
// request), not 50 times.
func TestKeepAlive(t *testing.T) {
	var dials atomic.Int64
	transport := NewTransport()
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dialer.DialContext(ctx, network, addr)
	}
	client, err := shared.NewClientWithTransport(transport)
	require.NoError(t, err)
	t.Cleanup(client.Close)
	c := newContainer(t, client, containerSpec{})
	create(t, c, doc{ID: "a", PK: "p"})

	before := dials.Load()
	for i := 0; i < 50; i++ {
		_, err := c.ReadItem(ctxT(t), azcosmos.NewPartitionKeyString("p"), "a", nil)
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, dials.Load()-before, int64(1), "dials during 50 sequential reads")
	assert.LessOrEqual(t, dials.Load(), int64(2), "dials in total")
}

func TestLatencyOption(t *testing.T) {
	const latency = 40 * time.Millisecond
	e := StartForTestWithOptions(t, Options{Latency: latency})
	client, err := e.NewClient()
	require.NoError(t, err)
	t.Cleanup(client.Close)
	c := newContainer(t, client, containerSpec{})
	create(t, c, doc{ID: "a", PK: "p"})

	start := time.Now()
	_, err = c.ReadItem(ctxT(t), azcosmos.NewPartitionKeyString("p"), "a", nil)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), latency)
}
