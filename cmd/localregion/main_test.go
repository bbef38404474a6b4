package main

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/dev/localregion"
)

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, localregion.DefaultOptions(), o)

	o, err = parseFlags([]string{"--exit-when-settled", "--management-clusters", "3", "--clusters", "6", "--timeout", "1m"}, io.Discard)
	require.NoError(t, err)
	assert.True(t, o.ExitWhenSettled)
	assert.Equal(t, 3, o.ManagementClusters)
	assert.Equal(t, 6, o.Clusters)
	assert.Equal(t, time.Minute, o.Timeout)

	o, err = parseFlags([]string{"--non-swift-every", "3", "--single-replica-every", "0"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 3, o.NonSwiftEvery)
	assert.Equal(t, 0, o.SingleReplicaEvery)

	o, err = parseFlags([]string{"--desired-version", "4.19", "--desired-version-latency", "2s"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "4.19", o.DesiredVersion)
	assert.Equal(t, 2*time.Second, o.DesiredVersionLatency)

	for _, bad := range []struct{ flag, value string }{
		{"--management-clusters", "0"},
		{"--desired-version", "latest"},
		{"--desired-version-latency", "-1s"},
	} {
		_, err = parseFlags([]string{bad.flag, bad.value}, io.Discard)
		assert.ErrorContains(t, err, bad.flag)
	}
	_, err = parseFlags([]string{"extra"}, io.Discard)
	assert.ErrorContains(t, err, "unexpected arguments")
}
