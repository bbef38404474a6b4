package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
)

// TestMain lets the test binary stand in for the command, so the signal test can run it as
// a real child process without a separate go build.
func TestMain(m *testing.M) {
	if os.Getenv("FAKE_CS_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type urlLine struct {
	URL string `json:"url"`
}

// readURL reads the single JSON line the command prints once it listens.
func readURL(t *testing.T, r io.Reader) string {
	t.Helper()
	line, err := bufio.NewReader(r).ReadString('\n')
	require.NoError(t, err)
	var u urlLine
	require.NoError(t, json.Unmarshal([]byte(line), &u), line)
	require.True(t, strings.HasPrefix(u.URL, "http://127.0.0.1:"), u.URL)
	require.NotEqual(t, "http://127.0.0.1:0", u.URL)
	return u.URL
}

func TestServesUntilStdinCloses(t *testing.T) {
	t.Parallel()
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(t.Context(), []string{"--listen", "127.0.0.1:0", "--exit-on-stdin-eof"}, stdinR, stdoutW, io.Discard)
	}()
	url := readURL(t, stdoutR)

	// The real SDK client works against the standalone fake.
	c, err := clusterservice.New(t.Context(), clusterservice.Config{URL: url, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer c.Close()
	shards, err := c.ListProvisionShards(t.Context())
	require.NoError(t, err)
	assert.Empty(t, shards)

	resp, err := http.Get(url + "/_fake/healthz")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// The standalone fake is as strict on creates as the in-process one.
	resp, err = http.Post(url+clusterservice.ClustersPath, "application/json", strings.NewReader(`{"name":"hcp-1"}`))
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "attribute 'region.id' is required")
	var valid bytes.Buffer
	cluster, err := fakeclusterservice.ValidCluster(clusterservice.NewClusterID(), "hcp-1", "").Build()
	require.NoError(t, err)
	require.NoError(t, arohcp.MarshalCluster(cluster, &valid))
	resp, err = http.Post(url+clusterservice.ClustersPath, "application/json", &valid)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusCreated, resp.StatusCode)

	require.NoError(t, stdinW.Close())
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not stop when stdin closed")
	}
}

func TestStopsWhenContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	stdoutR, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		// Without --exit-on-stdin-eof, stdin is never read, so an empty one changes nothing.
		done <- run(ctx, []string{"--listen", "127.0.0.1:0"}, strings.NewReader(""), stdoutW, io.Discard)
	}()
	readURL(t, stdoutR)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not stop")
	}
}

func TestExitsOnSIGTERM(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "--listen", "127.0.0.1:0")
			cmd.Env = append(os.Environ(), "FAKE_CS_RUN_MAIN=1")
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			url := readURL(t, stdout)

			resp, err := http.Get(url + "/_fake/healthz")
			require.NoError(t, err)
			_ = resp.Body.Close()

			require.NoError(t, cmd.Process.Signal(sig))
			require.NoError(t, cmd.Wait(), "a signal is a clean stop")
		})
	}
}

func TestFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"default is loopback port 8000", nil, ""},
		{"IPv6 loopback", []string{"--listen", "[::1]:0"}, ""},
		{"localhost", []string{"--listen", "localhost:0"}, ""},
		{"all interfaces refused", []string{"--listen", ":8000"}, "not a loopback address"},
		{"wildcard refused", []string{"--listen", "0.0.0.0:8000"}, "not a loopback address"},
		{"remote allowed by flag", []string{"--listen", "0.0.0.0:0", "--allow-remote"}, ""},
		{"no port", []string{"--listen", "127.0.0.1"}, "missing port"},
		{"stray argument", []string{"serve"}, "unexpected arguments"},
		{"bad log level", []string{"--log-level", "LOUD"}, "log-level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			if tt.args == nil {
				assert.Equal(t, "127.0.0.1:8000", opts.listen)
				assert.False(t, opts.exitOnStdinEOF)
			}
		})
	}
}
