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

	_, err = parseFlags([]string{"--management-clusters", "0"}, io.Discard)
	assert.ErrorContains(t, err, "--management-clusters")
	_, err = parseFlags([]string{"extra"}, io.Discard)
	assert.ErrorContains(t, err, "unexpected arguments")
}
