// Package dashboards holds hcpsched's Grafana dashboards. Its tests keep every query of
// a dashboard panel, and of the alerts, on metrics the binaries really export, and keep
// the dashboard readable at 3 a.m.: one unit per panel, every variable defined and
// applied, no line per management cluster, every panel titled and described, and every
// panel the runbooks name present.
package dashboards

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
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
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
	"github.com/hcpsched/hcpsched/internal/process"
)

// recorder is a Registerer that remembers the name and labels of every metric
// registered through it. Describe is the only way to learn what a collector exports
// before it has series: a metric vector with no children, or a collector over empty
// caches, gathers nothing.
type recorder struct {
	prometheus.Registerer
	names map[string]bool
	// distributions are the histograms and summaries, whose series are also queried as
	// <name>_bucket, <name>_sum and <name>_count.
	distributions map[string]bool
	// labels are each metric's variable labels.
	labels map[string]map[string]bool
}

var (
	fqName         = regexp.MustCompile(`fqName: "([^"]+)"`)
	variableLabels = regexp.MustCompile(`variableLabels: \{([^}]*)\}\}$`)
)

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
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			continue
		}
		r.names[m[1]] = true
		r.distributions[m[1]] = distribution
		r.labels[m[1]] = map[string]bool{}
		if l := variableLabels.FindStringSubmatch(d.String()); l != nil && l[1] != "" {
			for _, name := range strings.Split(l[1], ",") {
				r.labels[m[1]][strings.TrimSuffix(strings.TrimPrefix(name, "c("), ")")] = true
			}
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

// labelsOf is the labels a metric, or a series of a histogram, carries.
func (r *recorder) labelsOf(metric string) map[string]bool {
	if l, ok := r.labels[metric]; ok {
		return l
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(metric, suffix); ok && r.distributions[base] {
			return r.labels[base]
		}
	}
	return nil
}

// registeredNames are the metric names the backend and the fleet export, built with
// the very constructors their main functions call (backend/main.go, fleet/controller.go):
//   - the process shell (process.New): Go and process collectors and hcpsched_is_leader;
//   - the Cosmos client's metrics policy (cosmos.Open calls cosmos.NewMetricsPolicy);
//   - the informer factory's change-feed metrics;
//   - the controller and workqueue metrics (controller.NewMetrics);
//   - the Cluster Service client's request metrics (clusterservice.New, which both
//     binaries call with their registry: one name, clusterservice.MetricsSubsystem);
//   - the backend's placement metrics, capacity collector and cluster collector.
//
// The fleet registers a subset of these (shell, Cosmos, informers, controllers, Cluster
// Service) and its capacity reporting's refusal counter, which no panel queries.
func registeredNames(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{Registerer: prometheus.NewRegistry(), names: map[string]bool{}, distributions: map[string]bool{},
		labels: map[string]map[string]bool{}}

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
		rec.labels[mf.GetName()] = map[string]bool{}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				rec.labels[mf.GetName()][l.GetName()] = true
			}
		}
	}

	_, err = cosmos.NewMetricsPolicy(rec)
	require.NoError(t, err)
	f, err := informers.NewFactory(memory.New(), informers.Options{Registerer: rec})
	require.NoError(t, err)
	_, err = controller.NewMetrics(rec)
	require.NoError(t, err)
	// Building the connection registers the metrics; no request is sent.
	cs, err := clusterservice.New(t.Context(), clusterservice.Config{URL: "http://127.0.0.1:1", MetricsRegisterer: rec,
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	require.NoError(t, cs.Close())
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

// metricNames returns the metric names an expression selects.
func metricNames(expr string) ([]string, error) {
	n, err := parsePromQL(expr)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range selectors(n) {
		out = append(out, s.metric)
	}
	return out, nil
}

func TestMetricNames(t *testing.T) {
	got, err := metricNames(`sum by (job, x) (rate(a_total{s=~"412|429"}[$__rate_interval])) / on (resource_id) group_left (y) max(b_seconds) and c offset 5m > bool 1e-3 or topk($top, d{m=~"$mc"})`)
	require.NoError(t, err)
	assert.Equal(t, []string{"a_total", "b_seconds", "c", "d"}, got)
	n, err := parsePromQL(`label_replace(a, "x", "$1", "y", "(.*)")`)
	require.NoError(t, err)
	_, err = analyze(n, func(string) map[string]bool { return nil })
	assert.ErrorContains(t, err, "label_replace", "a function the checks do not know fails, it is not waved through")
	_, err = parsePromQL(`rate(a[5m])[1h:5m]`)
	assert.Error(t, err, "a subquery is refused")
}

// The reader knows each query's unit and what it plots per management cluster.
func TestAnalyze(t *testing.T) {
	labels := func(m string) map[string]bool {
		if strings.HasPrefix(m, "mc_") {
			return map[string]bool{mcLabel: true}
		}
		return nil
	}
	tests := []struct {
		expr    string
		dim     string
		perMC   bool
		limited bool
	}{
		{`count(max by (resource_id) (a_info)) or vector(0)`, dimCount, false, false},
		{`sum by (job, code) (rate(a_request_count{code!~"2.."}[5m]))`, dimPerSecond, false, false},
		{`histogram_quantile(0.99, sum by (le) (rate(a_seconds_bucket[5m])))`, dimSeconds, false, false},
		{`max by (job, instance) (time() - a_last_poll_timestamp_seconds)`, dimSeconds, false, false},
		{`topk($top, max by (management_cluster_resource_id) (mc_pending))`, dimCount, true, true},
		{`bottomk(5, max by (management_cluster_resource_id) (mc_used) / max by (management_cluster_resource_id) (mc_ceiling))`, dimRatio, true, true},
		{`sum(max by (management_cluster_resource_id) (mc_pending))`, dimCount, false, false},
		{`mc_report_age_seconds`, dimSeconds, true, false},
		{`sum by (pod) (changes(process_start_time_seconds[1h]))`, dimCount, false, false},
		{`sum by (le) (increase(a_seconds_bucket[5m]))`, dimCount, false, false},
	}
	for _, tt := range tests {
		n, err := parsePromQL(tt.expr)
		require.NoError(t, err, tt.expr)
		r, err := analyze(n, labels)
		require.NoError(t, err, tt.expr)
		assert.Equal(t, tt.dim, r.dim, tt.expr)
		assert.Equal(t, tt.perMC, r.keeps[mcLabel], tt.expr)
		assert.Equal(t, tt.limited, r.limited, tt.expr)
	}
	for _, bad := range []string{`a_seconds / 60`, `a_seconds + a_total`, `rate(a_seconds[5m])`, `rate(a_gauge[5m])`, `histogram_quantile(0.5, a_total)`} {
		n, err := parsePromQL(bad)
		require.NoError(t, err, bad)
		_, err = analyze(n, labels)
		assert.Error(t, err, bad)
	}
}

// The check has teeth: a histogram's series count as its name, a made-up name does not;
// the Cluster Service metrics are known under their one name.
func TestRegistered(t *testing.T) {
	names := registeredNames(t)
	for _, n := range []string{"backend_cluster_info", "backend_placement_decision_duration_seconds_bucket", "hcpsched_is_leader",
		"workqueue_retries_total", "hcpsched_cosmos_requests_total", "backend_placement_latency_seconds_bucket",
		"hcpsched_cluster_service_request_count", "hcpsched_cluster_service_request_duration_bucket", "process_start_time_seconds"} {
		assert.True(t, registered(names, n), n)
	}
	for _, n := range []string{"backend_cluster_placement_latency_seconds", "backend_cluster_info_bucket", "hcpsched_controller_panics",
		"hcpsched_fleet_clusters_service_request_count"} {
		assert.False(t, registered(names, n), n)
	}
	assert.True(t, names.labelsOf("backend_management_cluster_pending_reservations")[mcLabel])
	assert.True(t, names.labelsOf("hcpsched_cluster_service_request_count")["code"])
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

// The parts of a Grafana dashboard the checks read.
type dashboard struct {
	Title      string `json:"title"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type variable struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Label      string `json:"label"`
	Query      any    `json:"query"`
	Multi      bool   `json:"multi"`
	IncludeAll bool   `json:"includeAll"`
	AllValue   string `json:"allValue"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
}

type panel struct {
	Type        string  `json:"type"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Panels      []panel `json:"panels"`
	Datasource  *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets     []target `json:"targets"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
		Overrides []struct {
			Properties []struct {
				ID string `json:"id"`
			} `json:"properties"`
		} `json:"overrides"`
	} `json:"fieldConfig"`
	Options struct {
		YAxis struct {
			Unit string `json:"unit"`
		} `json:"yAxis"`
		CellValues struct {
			Unit string `json:"unit"`
		} `json:"cellValues"`
	} `json:"options"`
}

type target struct {
	Expr   string `json:"expr"`
	Format string `json:"format"`
}

func loadDashboards(t *testing.T) map[string]dashboard {
	t.Helper()
	files, err := filepath.Glob("*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string]dashboard{}
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		var d dashboard
		require.NoError(t, json.Unmarshal(b, &d), file)
		out[file] = d
	}
	return out
}

// allPanels lists the panels, those inside rows included, rows excluded.
func allPanels(d dashboard) []panel {
	var out []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type != "row" {
				out = append(out, p)
			}
		}
	}
	walk(d.Panels)
	return out
}

// A check reads a dashboard and says what is wrong with it, one sentence a problem.
type check func(d dashboard, names *recorder) []string

// checkQueriesRegistered: every query reads, and names only metrics a binary registers.
func checkQueriesRegistered(d dashboard, names *recorder) []string {
	var out []string
	for _, p := range allPanels(d) {
		for _, tg := range p.Targets {
			got, err := metricNames(tg.Expr)
			if err != nil {
				out = append(out, fmt.Sprintf("panel %q: %s: %v", p.Title, tg.Expr, err))
				continue
			}
			if len(got) == 0 {
				out = append(out, fmt.Sprintf("panel %q: %s queries no metric", p.Title, tg.Expr))
			}
			for _, n := range got {
				if !registered(names, n) {
					out = append(out, fmt.Sprintf("panel %q queries %s, which no binary registers", p.Title, n))
				}
			}
		}
	}
	return out
}

// unitDimension is what a Grafana unit measures; ok is false for units the check does
// not know, which it refuses rather than guesses. A suffix unit ("suffix: RU/s") is a
// count, or a rate when it ends in /s.
func unitDimension(unit string) (string, bool) {
	switch unit {
	case "s":
		return dimSeconds, true
	case "short", "none":
		return dimCount, true
	case "ops", "reqps", "rps", "cps", "wps":
		return dimPerSecond, true
	case "percentunit":
		return dimRatio, true
	}
	if suffix, ok := strings.CutPrefix(unit, "suffix:"); ok {
		if strings.HasSuffix(strings.TrimSpace(suffix), "/s") {
			return dimPerSecond, true
		}
		return dimCount, true
	}
	return "", false
}

// checkUnits: a panel has one unit, set explicitly, and every query of the panel yields
// values of that unit; so a count and an age never share an axis. A heatmap's cells are
// counts and its y axis is the unit of the histogram's bucket bounds.
func checkUnits(d dashboard, names *recorder) []string {
	var out []string
	for _, p := range allPanels(d) {
		for _, o := range p.FieldConfig.Overrides {
			for _, prop := range o.Properties {
				if prop.ID == "unit" {
					out = append(out, fmt.Sprintf("panel %q: an override sets a second unit; one unit per panel", p.Title))
				}
			}
		}
		unit := p.FieldConfig.Defaults.Unit
		if p.Type == "heatmap" {
			unit = p.Options.CellValues.Unit
			if unit == "" {
				unit = "short"
			}
			out = append(out, checkHeatmapAxis(p)...)
		}
		want, ok := unitDimension(unit)
		if !ok {
			out = append(out, fmt.Sprintf("panel %q: unit %q is missing or unknown to the check", p.Title, unit))
			continue
		}
		for _, tg := range p.Targets {
			n, err := parsePromQL(tg.Expr)
			if err != nil {
				out = append(out, fmt.Sprintf("panel %q: %s: %v", p.Title, tg.Expr, err))
				continue
			}
			r, err := analyze(n, names.labelsOf)
			if err != nil {
				out = append(out, fmt.Sprintf("panel %q: %s: %v", p.Title, tg.Expr, err))
				continue
			}
			if !compatible(r.dim, want) {
				out = append(out, fmt.Sprintf("panel %q has unit %q (%s) but %s yields %s", p.Title, unit, want, tg.Expr, r.dim))
			}
		}
	}
	return out
}

// checkHeatmapAxis: a heatmap reads one histogram's buckets, as a heatmap, on a y axis in
// the unit of the bucket bounds.
func checkHeatmapAxis(p panel) []string {
	var out []string
	axis, ok := unitDimension(p.Options.YAxis.Unit)
	if !ok {
		out = append(out, fmt.Sprintf("panel %q: heatmap y-axis unit %q is missing or unknown", p.Title, p.Options.YAxis.Unit))
	}
	for _, tg := range p.Targets {
		if tg.Format != "heatmap" {
			out = append(out, fmt.Sprintf("panel %q: heatmap target %s has format %q, not heatmap", p.Title, tg.Expr, tg.Format))
		}
		got, err := metricNames(tg.Expr)
		if err != nil {
			continue
		}
		for _, n := range got {
			dim, isBucket := bucketDimension(n)
			if !isBucket {
				out = append(out, fmt.Sprintf("panel %q: heatmap of %s, which is not a histogram's buckets", p.Title, n))
			} else if ok && dim != axis {
				out = append(out, fmt.Sprintf("panel %q: heatmap y axis in %s but the buckets of %s are in %s", p.Title, axis, n, dim))
			}
		}
	}
	return out
}

// Grafana's own variables.
var builtinVariables = map[string]bool{"__rate_interval": true, "__interval": true, "__interval_ms": true, "__range": true,
	"__range_s": true, "__range_ms": true, "__from": true, "__to": true}

func variableRefs(s string) []string {
	var out []string
	for _, m := range variableRef.FindAllStringSubmatch(s, -1) {
		for _, g := range m[1:] {
			if g != "" {
				out = append(out, g)
			}
		}
	}
	return out
}

func variableQuery(v variable) string {
	switch q := v.Query.(type) {
	case string:
		return q
	case map[string]any:
		s, _ := q["query"].(string)
		return s
	}
	return ""
}

// checkVariables: every variable a query, a title or a data source names is defined (or
// is Grafana's), and every variable defined is used, so that choosing a value changes
// what the panels show.
func checkVariables(d dashboard, _ *recorder) []string {
	var out []string
	defined := map[string]bool{}
	for _, v := range d.Templating.List {
		defined[v.Name] = true
	}
	used := map[string]bool{}
	use := func(where, s string) {
		for _, ref := range variableRefs(s) {
			used[ref] = true
			if !defined[ref] && !builtinVariables[ref] {
				out = append(out, fmt.Sprintf("%s uses $%s, which the dashboard does not define", where, ref))
			}
		}
	}
	for _, v := range d.Templating.List {
		use(fmt.Sprintf("variable %q", v.Name), variableQuery(v))
		if v.Datasource != nil {
			use(fmt.Sprintf("variable %q", v.Name), v.Datasource.UID)
		}
	}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			use(fmt.Sprintf("panel %q", p.Title), p.Title)
			if p.Datasource != nil {
				use(fmt.Sprintf("panel %q", p.Title), p.Datasource.UID)
			}
			for _, tg := range p.Targets {
				use(fmt.Sprintf("panel %q", p.Title), tg.Expr)
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if !used[v.Name] {
			out = append(out, fmt.Sprintf("variable %q is defined but no panel uses it", v.Name))
		}
	}
	return out
}

// The dashboard's variables, which the filter and per-MC checks expect by name.
const (
	regionVariable = "region"
	binaryVariable = "binary"
	mcVariable     = "mc"
)

func filtersBy(s *selector, label, variable string) bool {
	for _, m := range s.matchers {
		if m.label == label && m.op == "=~" {
			for _, ref := range variableRefs(m.value) {
				if ref == variable {
					return true
				}
			}
		}
	}
	return false
}

// checkPerMC: no query plots one series per management cluster (or per cluster) unless
// it is a top-N (topk or bottomk), and one per management cluster also filters by the
// management cluster variable. Fifty lines on one panel say nothing.
func checkPerMC(d dashboard, names *recorder) []string {
	var out []string
	for _, p := range allPanels(d) {
		for _, tg := range p.Targets {
			n, err := parsePromQL(tg.Expr)
			if err != nil {
				continue // checkQueriesRegistered says why
			}
			r, err := analyze(n, names.labelsOf)
			if err != nil {
				continue // checkUnits says why
			}
			labels := make([]string, 0, len(r.keeps))
			for l := range r.keeps {
				labels = append(labels, l)
			}
			sort.Strings(labels)
			if len(labels) > 0 && !r.limited {
				out = append(out, fmt.Sprintf("panel %q: %s plots one series per %s; make it a topk/bottomk($top, ...)", p.Title, tg.Expr, strings.Join(labels, " and ")))
			}
			if !r.keeps[mcLabel] {
				continue
			}
			for _, s := range selectors(n) {
				if names.labelsOf(s.metric)[mcLabel] && !filtersBy(s, mcLabel, mcVariable) {
					out = append(out, fmt.Sprintf("panel %q: %s is plotted per management cluster without %s=~\"$%s\"", p.Title, s.metric, mcLabel, mcVariable))
				}
			}
		}
	}
	return out
}

// checkFilters: every series is chosen by region, and a metric both binaries export by
// binary too, so that the variables mean the same on every panel. The backend's own
// metrics (backend_*) have one binary.
func checkFilters(d dashboard, _ *recorder) []string {
	var out []string
	for _, p := range allPanels(d) {
		for _, tg := range p.Targets {
			n, err := parsePromQL(tg.Expr)
			if err != nil {
				continue
			}
			for _, s := range selectors(n) {
				if !filtersBy(s, "region", regionVariable) {
					out = append(out, fmt.Sprintf("panel %q: %s is not filtered by region=~\"$%s\"", p.Title, s.metric, regionVariable))
				}
				if !strings.HasPrefix(s.metric, "backend_") && !filtersBy(s, "job", binaryVariable) {
					out = append(out, fmt.Sprintf("panel %q: %s is not filtered by job=~\"$%s\"", p.Title, s.metric, binaryVariable))
				}
			}
		}
	}
	return out
}

// checkDescribed: every panel has a title, unique so that a runbook can name it, and a
// description that says what it shows.
func checkDescribed(d dashboard, _ *recorder) []string {
	var out []string
	seen := map[string]bool{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			switch {
			case strings.TrimSpace(p.Title) == "":
				out = append(out, fmt.Sprintf("a %s panel has no title", p.Type))
			case seen[p.Title]:
				out = append(out, fmt.Sprintf("two panels are titled %q", p.Title))
			}
			seen[p.Title] = true
			if p.Type != "row" && len(strings.Fields(p.Description)) < 8 {
				out = append(out, fmt.Sprintf("panel %q has no description an SRE can act on", p.Title))
			}
		}
	}
	walk(d.Panels)
	return out
}

var checks = map[string]check{
	"queries registered": checkQueriesRegistered,
	"units":              checkUnits,
	"variables":          checkVariables,
	"per MC":             checkPerMC,
	"filters":            checkFilters,
	"described":          checkDescribed,
}

func TestDashboards(t *testing.T) {
	names := registeredNames(t)
	for file, d := range loadDashboards(t) {
		t.Run(file, func(t *testing.T) {
			require.NotEmpty(t, allPanels(d))
			for name, c := range checks {
				assert.Empty(t, c(d, names), "check %s", name)
			}
		})
	}
}

// The hcpsched dashboard has the variables the SRE filters by, each multi-valued with
// All, so that one dashboard serves every region and management cluster.
func TestHcpschedVariables(t *testing.T) {
	d := loadDashboards(t)["hcpsched.json"]
	vars := map[string]variable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	assert.Equal(t, "datasource", vars["datasource"].Type)
	for _, name := range []string{regionVariable, binaryVariable, mcVariable} {
		v, ok := vars[name]
		require.True(t, ok, "variable %s", name)
		assert.Equal(t, "query", v.Type, name)
		assert.True(t, v.Multi && v.IncludeAll, "%s: multi-select with All", name)
		assert.Equal(t, ".*", v.AllValue, "%s: All matches series without the label too", name)
	}
	assert.Contains(t, variableQuery(vars[mcVariable]), mcLabel)
	assert.Contains(t, variableQuery(vars[binaryVariable]), "job")
	assert.Contains(t, variableQuery(vars[regionVariable]), "region")
}

// panelReference is how the docs name a panel: dashboard hcpsched, panel *Title*.
var panelReference = regexp.MustCompile(`panel \*([^*]+)\*`)

// Every panel the runbooks and docs point at exists, under that exact title.
func TestDocumentedPanelsExist(t *testing.T) {
	titles := map[string]bool{}
	for _, p := range allPanels(loadDashboards(t)["hcpsched.json"]) {
		titles[p.Title] = true
	}
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	require.NoError(t, err)
	refs := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, m := range panelReference.FindAllStringSubmatch(string(b), -1) {
			refs++
			// Markdown reads a line break inside the name as a space.
			title := strings.Join(strings.Fields(m[1]), " ")
			assert.True(t, titles[title], "%s names panel %q, which the dashboard does not have", doc, title)
		}
	}
	assert.NotZero(t, refs, "the runbooks name the panels to look at")
}

// The PromQL the runbooks give to paste reads, and names only metrics a binary exports.
func TestRunbookPromQL(t *testing.T) {
	names := registeredNames(t)
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "alerts.md"))
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```promql\n(.*?)```").FindAllStringSubmatch(string(b), -1)
	require.NotEmpty(t, blocks)
	for _, block := range blocks {
		for _, line := range strings.Split(strings.TrimSpace(block[1]), "\n") {
			got, err := metricNames(line)
			if !assert.NoError(t, err, line) {
				continue
			}
			assert.NotEmpty(t, got, line)
			for _, n := range got {
				assert.True(t, registered(names, n), "docs/alerts.md: %s queries %s, which no binary registers", line, n)
			}
		}
	}
}

// Each check has teeth: on a copy of the dashboard broken the way it guards against, it
// names the broken panel.
func TestChecksCatchBrokenDashboards(t *testing.T) {
	names := registeredNames(t)
	b, err := os.ReadFile("hcpsched.json")
	require.NoError(t, err)
	find := func(d *dashboard, title string) *panel {
		var found *panel
		var walk func([]panel)
		walk = func(ps []panel) {
			for i := range ps {
				walk(ps[i].Panels)
				if ps[i].Title == title {
					found = &ps[i]
				}
			}
		}
		walk(d.Panels)
		require.NotNil(t, found, "panel %q", title)
		return found
	}
	tests := []struct {
		name  string
		check string
		// panel is the title the problem must name.
		panel   string
		breakIt func(d *dashboard, p *panel)
	}{
		{"a count and an age on one axis", "units", "Pending reservations (top MCs)", func(_ *dashboard, p *panel) {
			p.Targets = append(p.Targets, target{Expr: `topk($top, max by (management_cluster_resource_id) (backend_management_cluster_oldest_reservation_age_seconds{region=~"$region", management_cluster_resource_id=~"$mc"}))`})
		}},
		{"an age scaled to minutes", "units", "Oldest reservation age (top MCs)", func(_ *dashboard, p *panel) {
			p.Targets[0].Expr = "(" + p.Targets[0].Expr + ") / 60"
		}},
		{"a unit that is not the queries'", "units", "Placement backlog", func(_ *dashboard, p *panel) {
			p.FieldConfig.Defaults.Unit = "s"
		}},
		{"no unit", "units", "Cluster Service errors (non-2xx by code)", func(_ *dashboard, p *panel) {
			p.FieldConfig.Defaults.Unit = ""
		}},
		{"a second unit by override", "units", "Change-feed lag", func(_ *dashboard, p *panel) {
			p.FieldConfig.Overrides = append(p.FieldConfig.Overrides, struct {
				Properties []struct {
					ID string `json:"id"`
				} `json:"properties"`
			}{Properties: []struct {
				ID string `json:"id"`
			}{{ID: "unit"}}})
		}},
		{"a heatmap on a count axis", "units", "Placement latency distribution", func(_ *dashboard, p *panel) {
			p.Options.YAxis.Unit = "short"
		}},
		{"a variable nobody defined", "variables", "Placement mismatches", func(_ *dashboard, p *panel) {
			p.Targets[0].Expr = strings.ReplaceAll(p.Targets[0].Expr, "$mc", "$management_cluster")
		}},
		{"a variable no panel applies", "variables", "", func(d *dashboard, _ *panel) {
			d.Templating.List = append(d.Templating.List, variable{Name: "stamp", Type: "query", Query: "label_values(hcpsched_is_leader, stamp)"})
		}},
		{"a line per management cluster", "per MC", "Pending reservations (top MCs)", func(_ *dashboard, p *panel) {
			p.Targets[0].Expr = `max by (management_cluster_resource_id) (backend_management_cluster_pending_reservations{region=~"$region", management_cluster_resource_id=~"$mc"})`
		}},
		{"a bare per-MC selector", "per MC", "Capacity report age (top MCs)", func(_ *dashboard, p *panel) {
			p.Targets[0].Expr = `backend_management_cluster_capacity_report_age_seconds{region=~"$region", management_cluster_resource_id=~"$mc"}`
		}},
		{"a top-N that ignores the MC variable", "per MC", "Oldest reservation age (top MCs)", func(_ *dashboard, p *panel) {
			p.Targets[0].Expr = strings.ReplaceAll(p.Targets[0].Expr, `, management_cluster_resource_id=~"$mc"`, "")
		}},
		{"a line per cluster", "per MC", "Oldest unplaced clusters", func(_ *dashboard, p *panel) {
			p.Targets[0].Expr = `max by (resource_id) (time() - backend_cluster_created_time_seconds{region=~"$region"})`
		}},
		{"a query of a metric nobody exports", "queries registered", "Placement outcomes", func(_ *dashboard, p *panel) {
			p.Targets[0].Expr = `sum by (outcome) (rate(hcpsched_fleet_clusters_service_request_count{region=~"$region", job=~"$binary"}[$__rate_interval]))`
		}},
		{"a panel blind to the region", "filters", "Leader by pod", func(_ *dashboard, p *panel) {
			p.Targets[0].Expr = strings.ReplaceAll(p.Targets[0].Expr, `region=~"$region", `, "")
		}},
		{"an undescribed panel", "described", "Restarts (last hour)", func(_ *dashboard, p *panel) {
			p.Description = ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d dashboard
			require.NoError(t, json.Unmarshal(b, &d))
			require.Empty(t, checks[tt.check](d, names), "the dashboard passes before it is broken")
			var p *panel
			if tt.panel != "" {
				p = find(&d, tt.panel)
			}
			tt.breakIt(&d, p)
			problems := checks[tt.check](d, names)
			require.NotEmpty(t, problems, "check %s misses it", tt.check)
			t.Logf("check %s: %s", tt.check, strings.Join(problems, "; "))
			if tt.panel != "" {
				assert.Contains(t, strings.Join(problems, "\n"), fmt.Sprintf("%q", tt.panel))
			}
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
				got, err := metricNames(r.Expr)
				require.NoError(t, err, "%s: alert %s", file, r.Alert)
				assert.NotEmpty(t, got, "%s: alert %s", file, r.Alert)
				for _, n := range got {
					assert.True(t, registered(names, n), "%s: alert %s queries %s, which no binary registers", file, r.Alert, n)
				}
			}
		}
	}
}

// targetLabels are the labels a scrape through the chart's ServiceMonitor gives every
// series (prometheus-operator's relabelling, and Azure Managed Prometheus's, which copies
// it; the scrape itself adds job and instance). With honor_labels off, a metric's own
// label of the same name is renamed exported_<name>, and every query that reads it
// reads the target's value instead.
var targetLabels = []string{"job", "instance", "namespace", "service", "endpoint", "pod", "container"}

func TestNoMetricLabelIsATargetLabel(t *testing.T) {
	rec := registeredNames(t)
	require.NotEmpty(t, rec.labels)
	for metric, labels := range rec.labels {
		for _, target := range targetLabels {
			assert.False(t, labels[target], "%s has a label %q, which the scrape's target label of that name overrides", metric, target)
		}
	}
}
