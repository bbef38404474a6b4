// Package alerts holds hcpsched's Prometheus alerts: PrometheusRule files for the
// cluster, the plain rule files promtool unit-tests (test.sh), and this test, which
// keeps the two in step and every alert documented.
package alerts

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// runbookBase is where every alert's runbook_url points, followed by the anchor of the
// alert's section in docs/alerts.md.
const runbookBase = "https://github.com/hcpsched/hcpsched/blob/main/docs/alerts.md#"

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

func TestEveryAlertIsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "alerts.md"))
	require.NoError(t, err)
	sections := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^## (\S+)\s*$`).FindAllStringSubmatch(string(doc), -1) {
		sections[m[1]] = true
	}

	var got []string
	for _, f := range prometheusRules(t) {
		var rg ruleGroups
		readYAML(t, strings.TrimSuffix(f, ".yaml")+".rules.yaml", &rg)
		for _, g := range rg.Groups {
			for _, r := range g.Rules {
				if r.Alert == "" {
					continue
				}
				got = append(got, r.Alert)
				assert.NotEmpty(t, r.Annotations["summary"], "%s: summary", r.Alert)
				assert.NotEmpty(t, r.Annotations["description"], "%s: description", r.Alert)
				assert.Equal(t, runbookBase+strings.ToLower(r.Alert), r.Annotations["runbook_url"], "%s: runbook_url", r.Alert)
				assert.True(t, sections[r.Alert], "docs/alerts.md has no section \"## %s\"", r.Alert)
				assert.Contains(t, r.Expr, "max without (prometheus_replica)", "%s: HA-Prometheus dedup", r.Alert)
			}
		}
	}
	sort.Strings(got)
	assert.Equal(t, wantAlerts, got)
}
