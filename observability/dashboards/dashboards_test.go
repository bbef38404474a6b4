// Package dashboards holds hcpsched's Grafana dashboards; this test keeps every query of
// a dashboard panel, and of the alerts, on metrics the binaries really export.
package dashboards

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/hcpsched/hcpsched/backend/candidates"
	"github.com/hcpsched/hcpsched/backend/controllers"
	"github.com/hcpsched/hcpsched/backend/metrics"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
	"github.com/hcpsched/hcpsched/internal/process"
)

// recorder is a Registerer that remembers the name of every metric registered through
// it. Describe is the only way to learn what a collector exports before it has series:
// a metric vector with no children, or a collector over empty caches, gathers nothing.
type recorder struct {
	prometheus.Registerer
	names map[string]bool
	// distributions are the histograms and summaries, whose series are also queried as
	// <name>_bucket, <name>_sum and <name>_count.
	distributions map[string]bool
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *recorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	distribution := false
	switch c.(type) {
	case prometheus.Histogram, *prometheus.HistogramVec, prometheus.Summary, *prometheus.SummaryVec:
		distribution = true
	}
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			r.names[m[1]] = true
			r.distributions[m[1]] = distribution
		}
	}
	return r.Registerer.Register(c)
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// registeredNames are the metric names the backend and the fleet export, built with
// the very constructors their main functions call (backend/main.go, fleet/controller.go):
//   - the process shell (process.New): Go and process collectors and hcpsched_is_leader;
//   - the Cosmos client's metrics policy (cosmos.Open calls cosmos.NewMetricsPolicy);
//   - the informer factory's change-feed metrics;
//   - the controller and workqueue metrics (controller.NewMetrics);
//   - the backend's placement metrics, capacity collector and cluster collector.
//
// The fleet registers a subset of these (shell, Cosmos, informers, controllers) and
// nothing of its own. The OCM SDK's Cluster Service request metrics are left out: their
// names depend on each binary's subsystem, so panels must not query them until this
// test learns them.
func registeredNames(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{Registerer: prometheus.NewRegistry(), names: map[string]bool{}, distributions: map[string]bool{}}

	// The shell takes a concrete registry; its metrics are all plain metrics, so they
	// gather even without series of their own.
	shellReg := prometheus.NewRegistry()
	opts := process.NewOptions("dashboards-test")
	opts.MetricsAddress, opts.HealthAddress, opts.LeaderElect = "127.0.0.1:0", "127.0.0.1:0", false
	shell, err := process.New(opts, shellReg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.NoError(t, shell.Close())
	mfs, err := shellReg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		rec.names[mf.GetName()] = true
		rec.distributions[mf.GetName()] = mf.GetType() == dto.MetricType_HISTOGRAM || mf.GetType() == dto.MetricType_SUMMARY
	}

	_, err = cosmos.NewMetricsPolicy(rec)
	require.NoError(t, err)
	f, err := informers.NewFactory(memory.New(), informers.Options{Registerer: rec})
	require.NoError(t, err)
	_, err = controller.NewMetrics(rec)
	require.NoError(t, err)
	_, err = controllers.NewPlacementMetrics(rec)
	require.NoError(t, err)
	_, err = controllers.NewCreationWaits(rec)
	require.NoError(t, err)
	caches := informers.NewCaches(f)
	snapshot, err := candidates.New(caches, placement.DefaultConfig())
	require.NoError(t, err)
	rec.MustRegister(metrics.NewCollector(caches, snapshot, nil))
	return rec
}

// Words of PromQL that look like metric names, and everything that is not a metric
// name: label matchers, grouping label lists, ranges, strings and function names.
var (
	promqlKeywords = map[string]bool{"and": true, "or": true, "unless": true, "by": true, "without": true, "on": true,
		"ignoring": true, "group_left": true, "group_right": true, "offset": true, "bool": true, "inf": true, "nan": true}
	stripMatchers  = regexp.MustCompile(`\{[^}]*\}`)
	stripGroupings = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	stripRanges    = regexp.MustCompile(`\[[^\]]*\]`)
	stripStrings   = regexp.MustCompile(`"[^"]*"`)
	stripNumbers   = regexp.MustCompile(`\b[0-9][0-9a-zA-Z_.+-]*`)
	identifier     = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
)

// metricNames returns the metric names an expression selects.
func metricNames(expr string) []string {
	expr = stripStrings.ReplaceAllString(expr, "")
	expr = stripMatchers.ReplaceAllString(expr, " ")
	expr = stripGroupings.ReplaceAllString(expr, " ")
	expr = stripRanges.ReplaceAllString(expr, " ")
	expr = strings.ReplaceAll(expr, "$__rate_interval", "")
	expr = stripNumbers.ReplaceAllString(expr, " ")
	var out []string
	for _, m := range identifier.FindAllString(expr, -1) {
		if strings.HasSuffix(m, "(") || promqlKeywords[strings.ToLower(m)] {
			continue
		}
		out = append(out, m)
	}
	return out
}

func TestMetricNames(t *testing.T) {
	assert.Equal(t, []string{"a_total", "b_seconds", "c"},
		metricNames(`sum by (job, x) (rate(a_total{s=~"412|429"}[$__rate_interval])) / on (resource_id) group_left (y) max(b_seconds) and c offset 5m > bool 1e-3`))
}

// The check has teeth: a histogram's series count as its name, a made-up name does not.
func TestRegistered(t *testing.T) {
	names := registeredNames(t)
	for _, n := range []string{"backend_cluster_info", "backend_placement_decision_duration_seconds_bucket", "hcpsched_is_leader", "workqueue_retries_total", "hcpsched_cosmos_requests_total"} {
		assert.True(t, registered(names, n), n)
	}
	for _, n := range []string{"backend_cluster_placement_latency_seconds", "backend_cluster_info_bucket", "hcpsched_controller_panics"} {
		assert.False(t, registered(names, n), n)
	}
}

// registered says whether name is a registered metric or a series of a registered
// histogram or summary.
func registered(names *recorder, name string) bool {
	if names.names[name] {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && names.distributions[base] {
			return true
		}
	}
	return false
}

type dashboard struct {
	Panels []panel `json:"panels"`
}

type panel struct {
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

func TestDashboardsQueryRegisteredMetrics(t *testing.T) {
	names := registeredNames(t)
	files, err := filepath.Glob("*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			b, err := os.ReadFile(file)
			require.NoError(t, err)
			var d dashboard
			require.NoError(t, json.Unmarshal(b, &d))
			queries := 0
			var walk func([]panel)
			walk = func(ps []panel) {
				for _, p := range ps {
					walk(p.Panels)
					for _, tg := range p.Targets {
						queries++
						got := metricNames(tg.Expr)
						assert.NotEmpty(t, got, "panel %q: %s queries no metric", p.Title, tg.Expr)
						for _, n := range got {
							assert.True(t, registered(names, n), "panel %q queries %s, which no binary registers", p.Title, n)
						}
					}
				}
			}
			walk(d.Panels)
			assert.NotZero(t, queries)
		})
	}
}

// The alerts are held to the same standard: an alert on a metric nobody exports never
// fires.
func TestAlertsQueryRegisteredMetrics(t *testing.T) {
	names := registeredNames(t)
	files, err := filepath.Glob(filepath.Join("..", "alerts", "*.rules.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		var rg struct {
			Groups []struct {
				Rules []struct {
					Alert string `json:"alert"`
					Expr  string `json:"expr"`
				} `json:"rules"`
			} `json:"groups"`
		}
		require.NoError(t, yaml.Unmarshal(b, &rg), file)
		for _, g := range rg.Groups {
			for _, r := range g.Rules {
				for _, n := range metricNames(r.Expr) {
					assert.True(t, registered(names, n), "%s: alert %s queries %s, which no binary registers", file, r.Alert, n)
				}
			}
		}
	}
}
