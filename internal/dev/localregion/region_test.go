package localregion

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The flags `make run` and the scenario runner share keep the values they were given as
// defaults and set each its own field.
func TestRegionFlags(t *testing.T) {
	defaults := Region{ManagementClusters: 5, Clusters: 40, ReportInterval: time.Second, Timeout: time.Minute, OutputDir: "out"}
	for _, tc := range []struct {
		args []string
		want func(*Region)
	}{
		{args: nil, want: func(*Region) {}},
		{args: []string{"--management-clusters=2"}, want: func(r *Region) { r.ManagementClusters = 2 }},
		{args: []string{"--clusters=7"}, want: func(r *Region) { r.Clusters = 7 }},
		{args: []string{"--report-interval=3s"}, want: func(r *Region) { r.ReportInterval = 3 * time.Second }},
		{args: []string{"--timeout=2m"}, want: func(r *Region) { r.Timeout = 2 * time.Minute }},
		{args: []string{"--output-dir=/tmp/x"}, want: func(r *Region) { r.OutputDir = "/tmp/x" }},
	} {
		t.Run(caseName(tc.args), func(t *testing.T) {
			got := defaults
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			got.AddFlags(fs)
			require.NoError(t, fs.Parse(tc.args))
			want := defaults
			tc.want(&want)
			assert.Equal(t, want, got)
		})
	}
}

func caseName(args []string) string {
	if len(args) == 0 {
		return "defaults"
	}
	return args[0]
}
