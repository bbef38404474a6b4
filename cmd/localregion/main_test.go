package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/dev/localregion"
	"github.com/hcpsched/hcpsched/internal/dev/mcsim"
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

// --help says what the simulated MCs hold and what each kind of cluster costs, from the
// code's own defaults.
func TestHelpStatesSizesAndCosts(t *testing.T) {
	var help bytes.Buffer
	_, err := parseFlags([]string{"--help"}, &help)
	require.ErrorIs(t, err, flag.ErrHelp)
	text := help.String()
	assert.Contains(t, text, fmt.Sprintf("%d swift NICs per node", mcsim.DefaultNodeSwiftNICs))
	for _, row := range []struct {
		kind string
		k    frontend.Kind
	}{
		{"SWIFT HA", frontend.Kind{Swift: true}},
		{"SWIFT single-replica", frontend.Kind{Swift: true, SingleReplica: true}},
		{"non-SWIFT HA", frontend.Kind{}},
		{"non-SWIFT single-replica", frontend.Kind{SingleReplica: true}},
	} {
		assert.Regexp(t, fmt.Sprintf(`(?m)^  %s +%d swift NICs?\b`, regexp.QuoteMeta(row.kind), row.k.SwiftNICs()), text)
	}
	assert.Contains(t, text, "-exit-when-settled", "the flags follow")
}
