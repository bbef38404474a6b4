// Package alerts holds hcpsched's Prometheus alerts: PrometheusRule files for the
// cluster, the plain rule files promtool unit-tests (test.sh), and this test, which
// keeps the two in step and every alert documented.
package alerts

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// runbookBase is the one base of every alert's runbook_url, which is followed by "#" and
// the anchor of the alert's section in docs/alerts.md. It is a placeholder that says so:
// the chart replaces it with its value alerts.runbookBaseURL (docs/alerts.md, "Runbook
// links"), and .invalid never resolves, so an unconfigured link fails visibly instead of
// sending the SRE to someone else's copy. It is the only form of it in the rule files.
const runbookBase = "https://runbooks.invalid/override-with-alerts.runbookBaseURL/docs/alerts.md"

// docSections are the sections of docs/alerts.md that are not an alert's.
var docSections = []string{"Before you start", "Metrics"}

// wantAlerts are the alerts issue #8 asks for, and issue #14's change-feed alerts.
var wantAlerts = []string{
	"CapacityReportStale",
	"ChangeFeedErrors",
	"ChangeFeedLagging",
	"ChangeFeedMalformedDocuments",
	"ChangeFeedStalled",
	"ClusterCreationBlocked",
	"ControllerPanic",
	"ControllerRetryHotLoop",
	"CosmosThrottling",
	"PendingReservationsNotDraining",
	"PlacementBacklog",
	"RegionHeadroomLow",
	"SchedulerPlacementMismatch",
}

type ruleGroups struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []rule `json:"rules"`
	} `json:"groups"`
}

type rule struct {
	Alert       string            `json:"alert"`
	Record      string            `json:"record"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// prometheusRules are the PrometheusRule files: every YAML file that is neither a plain
// rule file nor a promtool test.
func prometheusRules(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	require.NoError(t, err)
	var out []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".rules.yaml") && !strings.HasSuffix(f, ".test.yaml") {
			out = append(out, f)
		}
	}
	require.NotEmpty(t, out)
	return out
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, yaml.UnmarshalStrict(b, into), path)
}

// promtool cannot read the PrometheusRule wrapper, so it tests the plain file; this
// makes sure what it tests is what is deployed.
func TestPrometheusRuleMatchesPlainRules(t *testing.T) {
	for _, f := range prometheusRules(t) {
		t.Run(f, func(t *testing.T) {
			var crd struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   any    `json:"metadata"`
				Spec       any    `json:"spec"`
			}
			readYAML(t, f, &crd)
			assert.Equal(t, "monitoring.coreos.com/v1", crd.APIVersion)
			assert.Equal(t, "PrometheusRule", crd.Kind)

			plain := strings.TrimSuffix(f, ".yaml") + ".rules.yaml"
			var groups any
			readYAML(t, plain, &groups)
			assert.Equal(t, groups, crd.Spec, "spec of %s must equal %s", f, plain)
			_, err := os.Stat(strings.TrimSuffix(f, ".yaml") + ".test.yaml")
			assert.NoError(t, err, "promtool tests of %s", plain)
		})
	}
}

// githubAnchor is the anchor GitHub gives a Markdown heading: lowercased, every character
// but letters, digits, spaces, hyphens and underscores dropped, spaces made hyphens.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

func TestGithubAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"SchedulerPlacementMismatch": "schedulerplacementmismatch",
		"Before you start":           "before-you-start",
		"Runbook links (v2.0)":       "runbook-links-v20",
	} {
		assert.Equal(t, want, githubAnchor(heading), heading)
	}
}

// runbook is docs/alerts.md cut into its sections, by heading.
func runbook(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "alerts.md"))
	require.NoError(t, err)
	sections := map[string]string{}
	parts := regexp.MustCompile(`(?m)^## (.+)$`).Split(string(doc), -1)
	headings := regexp.MustCompile(`(?m)^## (.+)$`).FindAllStringSubmatch(string(doc), -1)
	require.Len(t, parts, len(headings)+1)
	for i, h := range headings {
		sections[strings.TrimSpace(h[1])] = parts[i+1]
	}
	return sections
}

// alertRule is one alert with the group it is in.
type alertRule struct {
	rule
	group string
}

func alertRules(t *testing.T) []alertRule {
	t.Helper()
	var out []alertRule
	for _, f := range prometheusRules(t) {
		var rg ruleGroups
		readYAML(t, strings.TrimSuffix(f, ".yaml")+".rules.yaml", &rg)
		for _, g := range rg.Groups {
			for _, r := range g.Rules {
				if r.Alert != "" {
					out = append(out, alertRule{rule: r, group: g.Name})
				}
			}
		}
	}
	return out
}

// Every alert has its summary, description, HA dedup, and a runbook_url that is the base
// followed by the anchor of its own section in docs/alerts.md; every section is an
// alert's or one of docSections.
func TestEveryAlertIsDocumented(t *testing.T) {
	sections := runbook(t)
	anchors := map[string]bool{}
	for heading := range sections {
		anchors[githubAnchor(heading)] = true
	}

	var got []string
	for _, r := range alertRules(t) {
		got = append(got, r.Alert)
		assert.NotEmpty(t, r.Annotations["summary"], "%s: summary", r.Alert)
		assert.NotEmpty(t, r.Annotations["description"], "%s: description", r.Alert)
		_, documented := sections[r.Alert]
		assert.True(t, documented, "docs/alerts.md has no section \"## %s\"", r.Alert)
		url := r.Annotations["runbook_url"]
		anchor, ok := strings.CutPrefix(url, runbookBase+"#")
		if assert.True(t, ok, "%s: runbook_url %q is not on the base %s", r.Alert, url, runbookBase) {
			assert.Equal(t, githubAnchor(r.Alert), anchor, "%s: runbook_url names another section", r.Alert)
			assert.True(t, anchors[anchor], "%s: runbook_url anchor #%s is no section of docs/alerts.md", r.Alert, anchor)
		}
		assert.Contains(t, r.Expr, "max without (prometheus_replica)", "%s: HA-Prometheus dedup", r.Alert)
	}
	sort.Strings(got)
	assert.Equal(t, wantAlerts, got)

	for heading := range sections {
		assert.True(t, slices.Contains(got, heading) || slices.Contains(docSections, heading),
			"docs/alerts.md section %q is neither an alert nor one of %v", heading, docSections)
	}
}

// The base occurs once in each runbook_url and nowhere else, in every rule file, its
// PrometheusRule copy and its tests, so the chart can replace it without touching
// anything but the links.
func TestRunbookBaseOnlyInRunbookURLs(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		text := string(b)
		urls := regexp.MustCompile(`(?m)^\s*runbook_url:\s*(\S+)\s*$`).FindAllStringSubmatch(text, -1)
		assert.Equal(t, len(urls), strings.Count(text, "runbook_url"), "%s: every runbook_url is a plain one-line value", f)
		for _, u := range urls {
			assert.Equal(t, 1, strings.Count(u[1], runbookBase), "%s: %s", f, u[1])
			assert.True(t, strings.HasPrefix(u[1], runbookBase+"#"), "%s: %s", f, u[1])
		}
		assert.Equal(t, len(urls), strings.Count(text, runbookBase), "%s: the base appears outside runbook_url", f)
	}
}

// Every runbook can be followed half asleep: it says what the alert means, what to look
// at (a dashboard panel, commands against the region, PromQL), how to mitigate and what
// fixed looks like. The placement alerts' runbooks use the operator command.
func TestRunbooksHaveTheirParts(t *testing.T) {
	sections := runbook(t)
	for _, r := range alertRules(t) {
		text, ok := sections[r.Alert]
		if !ok {
			continue // TestEveryAlertIsDocumented says so
		}
		for _, part := range []string{"**Meaning.**", "**Look.**", "**Mitigate.**", "**Fixed when.**",
			"Dashboard hcpsched", "panel *", "```promql", "```sh", `kubectl -n "$NS"`} {
			assert.True(t, strings.Contains(text, part), "runbook of %s has no %s", r.Alert, part)
		}
		assert.True(t, regexp.MustCompile(`kubectl -n "\$NS" logs`).MatchString(text), "runbook of %s: no logs to read", r.Alert)
		if r.group == "hcpsched-placement" {
			assert.True(t, regexp.MustCompile(`exec deploy/"\$RELEASE"-backend -c backend -- hcpsched (explain|capacity|clusters|drain-plan|cordon|uncordon)`).MatchString(text),
				"runbook of %s: no hcpsched command that answers it", r.Alert)
		}
		assert.False(t, strings.Contains(text, "github.com/hcpsched"), "runbook of %s: a placeholder organisation's URL", r.Alert)
	}
}
