package localregion

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The operator command is built when the checkout has it, and only then.
func TestToBuild(t *testing.T) {
	root := t.TempDir()
	assert.Equal(t, binaries, toBuild(root))
	require.NoError(t, os.WriteFile(filepath.Join(root, "hcpsched"), nil, 0o644))
	assert.Equal(t, binaries, toBuild(root), "a file is not the command's package")
	require.NoError(t, os.Remove(filepath.Join(root, "hcpsched")))
	require.NoError(t, os.Mkdir(filepath.Join(root, "hcpsched"), 0o755))
	assert.Equal(t, append(append([]string(nil), binaries...), "./hcpsched"), toBuild(root))
}

func TestStepLog(t *testing.T) {
	var out bytes.Buffer
	log := &stepLog{out: &out}
	require.NoError(t, log.step("building backend", "built backend", func() (string, error) { return "", nil }))
	require.NoError(t, log.step("starting the emulator", "started the emulator", func() (string, error) { return "http://127.0.0.1:1", nil }))
	err := log.step("registering stamp 2", "registered stamp 2", func() (string, error) { return "", errors.New("boom") })
	require.EqualError(t, err, "boom")
	assert.Regexp(t, `^building backend \.\.\.
built backend in \d+m?s
starting the emulator \.\.\.
started the emulator in \d+m?s: http://127\.0\.0\.1:1
registering stamp 2 \.\.\.
registering stamp 2 failed after \d+m?s
$`, out.String())

	assert.Equal(t, 41200*time.Millisecond, roundDuration(41234*time.Millisecond))
	assert.Equal(t, 120*time.Millisecond, roundDuration(123*time.Millisecond))
}

// The command line pastes into a shell as is, from the working directory when the binary
// is below it.
func TestOperatorCommandLine(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	key := "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
	assert.Equal(t, "_output/bin/hcpsched --cosmos-endpoint=http://127.0.0.1:8081 --cosmos-key="+key+" --cosmos-database=hcpsched capacity",
		operatorCommandLine(filepath.Join(wd, "_output", "bin", "hcpsched"), "http://127.0.0.1:8081", key, "hcpsched"))
	assert.Equal(t, "'/tmp/my out/hcpsched' --cosmos-endpoint=http://127.0.0.1:8081 --cosmos-key='it'\\''s' --cosmos-database='' capacity",
		operatorCommandLine("/tmp/my out/hcpsched", "http://127.0.0.1:8081", "it's", ""))
}

// waitReady returns once every service answers /readyz with 200, and fails on a service
// that dies or does not get ready.
func TestWaitReady(t *testing.T) {
	var calls atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) < 3 {
			http.Error(w, "[-]caches failed", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer slow.Close()
	never := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "[-]caches failed", http.StatusServiceUnavailable)
	}))
	defer never.Close()
	addr := func(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "http://") }

	var out bytes.Buffer
	sup := newSupervisor(t.TempDir())
	defer sup.stopAll()
	require.NoError(t, waitReady(t.Context(), &stepLog{out: &out}, sup, []service{{name: "backend", display: "backend", addr: addr(slow), started: time.Now()}}))
	assert.Regexp(t, `^backend ready in \d+m?s \(/readyz: caches synced\)\n$`, out.String())

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	err := waitReady(ctx, &stepLog{out: &out}, sup, []service{{name: "fleet", display: "fleet controller", addr: addr(never), started: time.Now()}})
	assert.ErrorContains(t, err, "fleet controller not ready after")
	assert.ErrorContains(t, err, "last /readyz: 503 Service Unavailable: [-]caches failed")

	_, _, err = sup.start("mc-simulator", "/bin/sh", false, "-c", "echo no cosmos >&2; exit 2")
	require.NoError(t, err)
	err = waitReady(t.Context(), &stepLog{out: &out}, sup, []service{{name: "mc-simulator", display: "the MC simulator", addr: addr(never), started: time.Now()}})
	assert.ErrorContains(t, err, "mc-simulator exited unexpectedly (exit status 2)")
	assert.ErrorContains(t, err, "no cosmos")
}
