package benchreport

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteTable(t *testing.T) {
	runs := []Run{
		{Store: "memory", Workers: 20, ManagementClusters: 50, Clusters: 200, Placements: 200, Elapsed: 2 * time.Second,
			Latencies: durations(10, 12, 900), CosmosRequests: 700, PeakRSSBytes: 96 << 20},
		{Store: "memory", Workers: 1, ManagementClusters: 50, Clusters: 200, Placements: 200, Elapsed: 20 * time.Second,
			Latencies: durations(40, 40, 2500), CosmosRequests: 640, PeakRSSBytes: 90 << 20},
		{Store: "emulator", Workers: 20, ManagementClusters: 50, Clusters: 200, Placements: 200, Elapsed: 4 * time.Second,
			Latencies: durations(20, 20, 20), CosmosRequests: 900, RequestCharge: 5000, Conflicts: 20},
		{Store: "emulator", Workers: 1, ManagementClusters: 50, Clusters: 200, Placements: 200, Elapsed: 25 * time.Second,
			Latencies: durations(80, 80, 80), CosmosRequests: 800, RequestCharge: 4400},
	}
	var buf bytes.Buffer
	require.NoError(t, WriteTable(&buf, runs))
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	require.Len(t, lines, 1+len(runs)+2, "header, a row per run, a ratio line per store:\n%s", buf.String())

	header := strings.Fields(lines[0])
	assert.Equal(t, "STORE", header[0])
	assert.Contains(t, header, "PLACEMENTS/S")
	assert.Contains(t, header, "P99")
	// The table part is aligned: with right alignment every line ends in the same column.
	for _, l := range lines[1 : 1+len(runs)] {
		assert.Equal(t, utf8.RuneCountInString(lines[0]), utf8.RuneCountInString(l), "row %q", l)
	}

	rows := []struct {
		store, workers string
		want           []string // cells that must appear, in table order
	}{
		{"memory", "20", []string{"50", "200", "200", "2.00s", "100.0", "12.0ms", "900.0ms", "900.0ms", "3.50", "0.00", "0.000", "96.0 MiB"}},
		{"memory", "1", []string{"50", "200", "200", "20.00s", "10.0", "40.0ms", "2.50s", "2.50s", "3.20", "0.00", "0.000", "90.0 MiB"}},
		{"emulator", "20", []string{"50", "200", "200", "4.00s", "50.0", "20.0ms", "20.0ms", "20.0ms", "4.50", "25.00", "0.100", "0.0 MiB"}},
		{"emulator", "1", []string{"50", "200", "200", "25.00s", "8.0", "80.0ms", "80.0ms", "80.0ms", "4.00", "22.00", "0.000", "0.0 MiB"}},
	}
	for i, want := range rows {
		fields := strings.Fields(lines[1+i])
		require.GreaterOrEqual(t, len(fields), 2)
		assert.Equal(t, want.store, fields[0], "row %d", i)
		assert.Equal(t, want.workers, fields[1], "row %d", i)
		assert.Equal(t, want.want, splitCells(fields[2:]), "row %d", i)
	}

	assert.Contains(t, lines[5], "memory: throughput ratio 20/1 workers = 10.00x")
	assert.Contains(t, lines[5], "p50 latency ratio = 0.30x")
	assert.Contains(t, lines[6], "emulator: throughput ratio 20/1 workers = 6.25x")
	assert.Contains(t, lines[6], "p50 latency ratio = 0.25x")
}

// splitCells rejoins "96.0" "MiB", the only cell with a space in it.
func splitCells(fields []string) []string {
	var out []string
	for _, f := range fields {
		if f == "MiB" && len(out) > 0 {
			out[len(out)-1] += " MiB"
			continue
		}
		out = append(out, f)
	}
	return out
}

func TestWriteTableEdges(t *testing.T) {
	tests := []struct {
		name  string
		runs  []Run
		lines int
		want  []string
	}{
		{
			name:  "no runs",
			runs:  nil,
			lines: 1,
			want:  []string{"no runs"},
		},
		{
			name:  "single run has no ratio",
			runs:  []Run{{Store: "memory", Workers: 20, Clusters: 5, Placements: 5, Elapsed: time.Second}},
			lines: 3,
			want:  []string{"memory: only 20 workers measured, no ratio"},
		},
		{
			name: "zero placements print zeros",
			runs: []Run{
				{Store: "emulator", Workers: 20, Clusters: 5, CosmosRequests: 9},
				{Store: "emulator", Workers: 1, Clusters: 5, CosmosRequests: 9},
			},
			lines: 4,
			want:  []string{"emulator: throughput ratio 20/1 workers = 0.00x (0.0 vs 0.0 placements/s)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, WriteTable(&buf, tt.runs))
			out := buf.String()
			assert.Len(t, strings.Split(strings.TrimRight(out, "\n"), "\n"), tt.lines, out)
			for _, w := range tt.want {
				assert.Contains(t, out, w)
			}
			assert.NotContains(t, out, "NaN")
			assert.NotContains(t, out, "Inf")
		})
	}
}

func TestFormatSeconds(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{0.00042, "420µs"},
		{0.00123, "1.23ms"},
		{0.0456, "45.6ms"},
		{0.9999, "999.9ms"},
		{1.5, "1.50s"},
		{42.123, "42.12s"},
		{324.6, "325s"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, formatSeconds(tt.in), "%v s", tt.in)
	}
}

type failingWriter struct{}

var errDiskFull = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func TestWriteTableReportsWriteErrors(t *testing.T) {
	for _, runs := range [][]Run{nil, {{Store: "memory", Workers: 1}}} {
		err := WriteTable(failingWriter{}, runs)
		require.ErrorIs(t, err, errDiskFull)
		assert.Contains(t, err.Error(), "benchmark table")
	}
}
