package main

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/dev/mcsim"
)

func TestParseFlags(t *testing.T) {
	env := map[string]string{"HCPSCHED_NOT_READY_DELAY": "7s"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	o, err := parseFlags([]string{"--cosmos-endpoint", "http://127.0.0.1:1", "--clusters-service-url", "http://127.0.0.1:2",
		"--interval", "2s", "--stamp-nodes", "1=1"}, io.Discard, lookup)
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, o.interval)
	assert.Equal(t, 7*time.Second, o.notReadyDelay, "flags are read from the environment too")
	assert.Equal(t, mcsim.DefaultNodes, o.profile.Nodes)
	assert.Equal(t, map[string]int{"1": 1}, o.stampNodes)
	assert.False(t, o.shell.LeaderElect, "a local tool takes no Lease")

	base := []string{"--cosmos-endpoint", "http://127.0.0.1:1", "--clusters-service-url", "http://127.0.0.1:2"}
	o, err = parseFlags(append(base, "--realistic"), io.Discard, lookup)
	require.NoError(t, err)
	assert.Equal(t, mcsim.RealisticInterval, o.interval)
	o, err = parseFlags(append(base, "--realistic", "--interval", "5s"), io.Discard, lookup)
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, o.interval, "an explicit --interval wins")

	_, err = parseFlags([]string{"--interval", "0s", "--stamp-nodes", "x"}, io.Discard, lookup)
	for _, want := range []string{"--cosmos-endpoint", "--clusters-service-url", "--interval", "--stamp-nodes"} {
		assert.ErrorContains(t, err, want)
	}
}
