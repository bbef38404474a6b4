package localregion

import (
	"flag"
	"time"
)

// Region is what `make run` and the scenario runner are both asked for: how many
// management clusters and clusters, how often the simulated MCs report capacity, how
// long the region may take to settle, and where the binaries and logs go. Both
// commands' options embed it, and AddFlags binds it to the flags they share.
type Region struct {
	ManagementClusters int
	Clusters           int
	ReportInterval     time.Duration
	Timeout            time.Duration
	// OutputDir receives the binaries (bin/) and the logs; empty means <RepoRoot>/_output.
	OutputDir string
}

// AddFlags binds r's fields to their flags on fs, with r's values as the defaults.
func (r *Region) AddFlags(fs *flag.FlagSet) {
	fs.IntVar(&r.ManagementClusters, "management-clusters", r.ManagementClusters, "Management clusters in the region")
	fs.IntVar(&r.Clusters, "clusters", r.Clusters, "Clusters to create")
	fs.DurationVar(&r.ReportInterval, "report-interval", r.ReportInterval, "How often the simulated MCs write capacity reports and the fleet mirrors them (real MCs: 30s)")
	fs.DurationVar(&r.Timeout, "timeout", r.Timeout, "Longest the region may take to settle")
	fs.StringVar(&r.OutputDir, "output-dir", r.OutputDir, "Where the binaries (bin/) and the logs go (default: <repository>/_output)")
}
