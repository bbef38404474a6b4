package main

import (
	"bytes"
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bad input is refused before anything starts, with the flag named.
func TestBadInputIsRefusedUpFront(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "a command is required"},
		{"unknown command", []string{"soak"}, `unknown command "soak"`},
		{"unknown store", []string{"bench", "--stores", "memory,disk"}, `got "disk"`},
		{"bad worker list", []string{"bench", "--workers", "20,none"}, `--workers: "none" is not a positive integer`},
		{"zero workers", []string{"bench", "--workers", "0"}, "--workers"},
		{"unknown profile", []string{"bench", "--profile", "huge"}, "--profile must be default or large"},
		{"stray argument", []string{"bench", "now"}, "unexpected arguments"},
		{"no clusters", []string{"bench", "--clusters", "0"}, "--clusters must be at least 1"},
		{"a fault rate above 1", []string{"chaos", "--rate-412", "2"}, "--rate-412 must be between 0 and 1"},
		{"chaos kill interval", []string{"chaos", "--kill-every", "0s"}, "--kill-every must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tt.args, &stdout, &stderr)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"help"}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), "bench")
	assert.Contains(t, stdout.String(), "chaos")

	for _, cmd := range []string{"bench", "chaos"} {
		stderr.Reset()
		err := run(t.Context(), []string{cmd, "-h"}, &stdout, &stderr)
		require.ErrorIs(t, err, flag.ErrHelp)
		assert.Contains(t, stderr.String(), "-management-clusters")
	}
	assert.Contains(t, stderr.String(), "-short", "chaos documents its short profile")
}
