package benchreport

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxChartBytes is the brief's bound for four runs of 20,000 clusters.
const maxChartBytes = 300 << 10

func writeChart(t *testing.T, runs []Run) (*node, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nested", "dir", "chart.svg")
	require.NoError(t, WriteChart(path, runs))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	root := parseXML(t, path)
	require.Equal(t, "svg", root.name)
	assert.Equal(t, "http://www.w3.org/2000/svg", root.attrs["xmlns"])
	assert.NotContains(t, string(data), "NaN")
	assert.NotContains(t, string(data), "Inf")
	// Self-contained: nothing fetched from elsewhere when the file is opened.
	for _, outside := range []string{"<script", "@import", "@font-face", "href="} {
		assert.NotContains(t, string(data), outside)
	}
	return root, string(data)
}

func labels(runs []Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = runLabel(r)
	}
	return out
}

// series are the per-run lines of a panel, by their run label.
func series(t *testing.T, panel *node) []string {
	t.Helper()
	var out []string
	for _, p := range panel.find(named("polyline")) {
		out = append(out, p.attrs["data-run"])
	}
	return out
}

// parsePoints checks every coordinate is a finite number inside [xlo,xhi] x [ylo,yhi].
func parsePoints(t *testing.T, points string, xlo, xhi, ylo, yhi float64) int {
	t.Helper()
	fields := strings.Fields(points)
	for _, f := range fields {
		xs, ys, ok := strings.Cut(f, ",")
		require.True(t, ok, "point %q", f)
		x, err := strconv.ParseFloat(xs, 64)
		require.NoError(t, err)
		y, err := strconv.ParseFloat(ys, 64)
		require.NoError(t, err)
		require.False(t, math.IsNaN(x) || math.IsNaN(y), "point %q", f)
		assert.True(t, x >= xlo-0.1 && x <= xhi+0.1, "x %v outside [%v,%v]", x, xlo, xhi)
		assert.True(t, y >= ylo-0.1 && y <= yhi+0.1, "y %v outside [%v,%v]", y, ylo, yhi)
	}
	return len(fields)
}

func TestWriteChartFourLargeRuns(t *testing.T) {
	runs := fourRuns(20_000)
	root, data := writeChart(t, runs)
	assert.Less(t, len(data), maxChartBytes, "chart must stay small")

	want := labels(runs)
	legend := root.byID("legend")
	require.NotNil(t, legend)
	assert.Equal(t, want, legend.texts())
	assert.Equal(t, []string{"memory, 20 workers", "memory, 1 workers", "emulator, 20 workers", "emulator, 1 workers"}, want)

	titles := root.texts()
	require.NotEmpty(t, titles)
	assert.Contains(t, titles[0], "50 management clusters")
	assert.Contains(t, titles[0], "20,000 clusters")
	assert.Contains(t, titles[0], "emulator adds 5ms per request")

	for i, id := range []string{"panel-cumulative", "panel-latency"} {
		panel := root.byID(id)
		require.NotNil(t, panel, id)
		assert.Equal(t, want, series(t, panel), id)
		left := float64(i*panelWidth + plotLeft)
		right := float64(i*panelWidth + plotRight)
		for _, p := range panel.find(named("polyline")) {
			n := parsePoints(t, p.attrs["points"], left, right, plotTop, plotBottom)
			assert.LessOrEqual(t, n, maxPoints, "%s %s", id, p.attrs["data-run"])
			assert.Greater(t, n, 50, "%s %s keeps the curve's shape", id, p.attrs["data-run"])
		}
	}

	latency := root.byID("panel-latency")
	assert.Len(t, latency.find(named("circle")), 3*len(runs), "p50/p90/p99 marked per run")
	latencyTexts := strings.Join(latency.texts(), "|")
	for _, p := range []string{"p50", "p90", "p99"} {
		assert.Contains(t, latencyTexts, p)
	}
	// The single-worker backlog spreads latencies over five decades.
	assert.Contains(t, latencyTexts, "log10 scale")

	throughput := root.byID("panel-throughput")
	require.NotNil(t, throughput)
	bars := throughput.find(func(n *node) bool { return n.name == "rect" && n.attrs["class"] == "bar" })
	require.Len(t, bars, len(runs))
	for i, b := range bars {
		assert.Equal(t, runColour(i), b.attrs["fill"], "bar %d has its run's colour", i)
		h, err := strconv.ParseFloat(b.attrs["height"], 64)
		require.NoError(t, err)
		assert.Positive(t, h)
	}
	summary := Summary(runs)
	throughputTexts := throughput.texts()
	for _, store := range []string{"memory", "emulator"} {
		ratio := summary[store]["throughput_ratio_20_to_1"].(float64)
		assert.Contains(t, throughputTexts, "20/1 workers: "+strconv.FormatFloat(ratio, 'f', 2, 64)+"×")
	}
}

func TestWriteChartEdges(t *testing.T) {
	tests := []struct {
		name string
		runs []Run
		// wantTexts must each appear in some text element.
		wantTexts []string
		// logAxis says whether the latency panel should be logarithmic.
		logAxis bool
	}{
		{
			name:      "single run",
			runs:      []Run{{Store: "memory", Workers: 20, ManagementClusters: 3, Clusters: 4, Placements: 4, Elapsed: time.Second, Latencies: durations(100, 200, 300, 400), PlacedAt: durations(250, 500, 750, 1000)}},
			wantTexts: []string{"hcpsched placement benchmark: 3 management clusters, 4 clusters per run", "memory, 20 workers"},
		},
		{
			name: "zero placements",
			runs: []Run{
				{Store: "emulator", Workers: 20, Clusters: 10, AddedLatency: 2 * time.Millisecond},
				{Store: "emulator", Workers: 1, Clusters: 10, AddedLatency: 2 * time.Millisecond},
			},
			wantTexts: []string{"emulator adds 2ms per request", "20/1 workers: 0.00×", "emulator, 1 workers"},
		},
		{
			name: "the memory store's modelled latency is named as such",
			runs: []Run{
				{Store: "memory", Workers: 20, Clusters: 10, AddedLatency: 8 * time.Millisecond},
				{Store: "emulator", Workers: 20, Clusters: 10, AddedLatency: 5 * time.Millisecond},
			},
			wantTexts: []string{"hcpsched placement benchmark: 0 management clusters, 10 clusters per run; memory store models 8ms per request, emulator adds 5ms per request"},
		},
		{
			name: "spread just over 50 is logarithmic",
			runs: []Run{
				{Store: "memory", Workers: 1, Placements: 2, Elapsed: time.Second, Latencies: durations(10, 510), PlacedAt: durations(10, 1000)},
			},
			logAxis: true,
		},
		{
			name: "spread of exactly 50 is linear",
			runs: []Run{
				{Store: "memory", Workers: 1, Placements: 2, Elapsed: time.Second, Latencies: durations(10, 500), PlacedAt: durations(10, 1000)},
			},
		},
		{
			name:      "markup in a store name is escaped",
			runs:      []Run{{Store: `a<b & "c"`, Workers: 2}},
			wantTexts: []string{`a<b & "c", 2 workers`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, _ := writeChart(t, tt.runs)
			texts := strings.Join(root.texts(), "\n")
			for _, w := range tt.wantTexts {
				assert.Contains(t, texts, w)
			}
			for _, id := range []string{"panel-cumulative", "panel-latency"} {
				panel := root.byID(id)
				require.NotNil(t, panel, id)
				assert.Len(t, series(t, panel), len(tt.runs), id)
			}
			bars := root.byID("panel-throughput").find(func(n *node) bool { return n.attrs["class"] == "bar" })
			assert.Len(t, bars, len(tt.runs))
			latencyTexts := strings.Join(root.byID("panel-latency").texts(), "\n")
			assert.Equal(t, tt.logAxis, strings.Contains(latencyTexts, "log10 scale"), latencyTexts)
		})
	}
}

func TestWriteChartNoRuns(t *testing.T) {
	root, _ := writeChart(t, nil)
	assert.Contains(t, root.texts(), "no runs")
	assert.Nil(t, root.byID("panel-cumulative"))
}

func TestWriteChartReportsUnwritablePath(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o644))
	err := WriteChart(filepath.Join(blocker, "chart.svg"), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), blocker)
}

// TestSampleChart renders the synthetic four-run matrix. With BENCHREPORT_SAMPLE_SVG set
// it writes there so a person can look at it; otherwise to a temporary directory, which
// still checks that the sample renders.
func TestSampleChart(t *testing.T) {
	path := os.Getenv("BENCHREPORT_SAMPLE_SVG")
	if path == "" {
		path = filepath.Join(t.TempDir(), "sample.svg")
	}
	require.NoError(t, WriteChart(path, fourRuns(20_000)))
	assert.Equal(t, "svg", parseXML(t, path).name)
}

func TestAxes(t *testing.T) {
	tickValues := func(a axis, labelled bool) []float64 {
		var out []float64
		for _, tk := range a.ticks {
			if (tk.label != "") == labelled {
				out = append(out, tk.v)
			}
		}
		return out
	}
	tickLabels := func(a axis) []string {
		var out []string
		for _, tk := range a.ticks {
			if tk.label != "" {
				out = append(out, tk.label)
			}
		}
		return out
	}

	linear := []struct {
		max    float64
		labels []string
	}{
		{20_000, []string{"0", "5000", "10000", "15000", "20000"}},
		{333, []string{"0", "100", "200", "300", "400"}},
		{2478.3 * 1.2, []string{"0", "1000", "2000", "3000"}},
		{1.1, []string{"0.00", "0.25", "0.50", "0.75", "1.00", "1.25"}},
		{0, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{math.NaN(), []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
	}
	for _, tt := range linear {
		a := linearAxis(tt.max, 0, 100)
		assert.Equal(t, tt.labels, tickLabels(a), "max %v", tt.max)
		if tt.max > 0 {
			assert.GreaterOrEqual(t, a.max, tt.max, "axis covers the data")
		}
		assert.InDelta(t, 0, a.px(0), 1e-9)
		assert.InDelta(t, 100, a.px(a.max), 1e-9)
	}

	a := logAxis(0.0021, 324, 0, 500)
	assert.Equal(t, []string{"0.001", "0.01", "0.1", "1", "10", "100", "1000"}, tickLabels(a))
	assert.Len(t, tickValues(a, false), 6*8, "minor ticks at 2..9 of each decade")
	assert.InDelta(t, 0, a.px(0.001), 1e-9)
	assert.InDelta(t, 500, a.px(1000), 1e-9)
	assert.InDelta(t, 250, a.px(1), 1e-9, "1 s is three decades of six in")
	assert.InDelta(t, 0, a.px(0), 1e-9, "zero clamps to the axis start, not -Inf")
}

func TestThin(t *testing.T) {
	line := func(n int, dx float64) []point {
		pts := make([]point, n)
		for i := range pts {
			pts[i] = point{x: float64(i) * dx, y: float64(i) * dx}
		}
		return pts
	}
	tests := []struct {
		name  string
		in    []point
		limit int
		want  int
	}{
		{"empty", nil, 10, 0},
		{"two points stay", line(2, 0.01), 10, 2},
		{"sub-unit moves collapse", line(1000, 0.01), 500, 11},
		{"over the limit is sampled", line(2000, 1), 500, 500},
		{"under the limit is untouched", line(300, 1), 500, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := thin(tt.in, tt.limit)
			assert.Len(t, got, tt.want)
			if len(tt.in) > 0 {
				assert.Equal(t, tt.in[0], got[0], "first point kept")
				assert.Equal(t, tt.in[len(tt.in)-1], got[len(got)-1], "last point kept")
			}
		})
	}
}
