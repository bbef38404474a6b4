package charttest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// updateEnv, set to 1, makes the generated-file tests rewrite the files instead of
// comparing them; the product module's doc tests use the same variable
// (internal/dev/configdoc.UpdateEnv).
const updateEnv = "HCPSCHED_UPDATE_DOCS"

var (
	// alertsDir holds the rule files promtool tests, which the observability owners edit.
	alertsDir = filepath.Join(repoRoot, "observability", "alerts")
	// chartAlertsDir holds the chart's copies: Helm's templates read files inside the
	// chart only.
	chartAlertsDir = filepath.Join(chartDir, "files", "alerts")
)

const ruleFileGlob = "*.rules.yaml"

func chartRuleFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartAlertsDir, ruleFileGlob))
	require.NoError(t, err)
	require.NotEmpty(t, files, "the chart has no rule files in %s", chartAlertsDir)
	return files
}

// TestChartAlertRules keeps the chart's rule files byte-for-byte copies of
// observability/alerts/*.rules.yaml, with nothing left over from a file renamed or
// removed there; HCPSCHED_UPDATE_DOCS=1 rewrites the copies. It also holds the rule files
// to what the chart's rewrite of runbook_url needs: every alert has one, and they all
// share one base followed by "#" and the alert's section, whatever that base is.
func TestChartAlertRules(t *testing.T) {
	sources, err := filepath.Glob(filepath.Join(alertsDir, ruleFileGlob))
	require.NoError(t, err)
	require.NotEmpty(t, sources)

	bases := map[string][]string{}
	want := map[string][]byte{}
	for _, src := range sources {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		want[filepath.Base(src)] = b
		var groups ruleGroups
		require.NoError(t, yaml.UnmarshalStrict(b, &groups), src)
		for _, g := range groups.Groups {
			for _, r := range g.Rules {
				if r.Alert == "" {
					continue
				}
				url := r.Annotations["runbook_url"]
				base, anchor, ok := strings.Cut(url, "#")
				if assert.True(t, ok && base != "" && anchor != "" && !strings.Contains(anchor, "#"),
					"%s: alert %s: runbook_url %q is not <base>#<section>", src, r.Alert, url) {
					bases[base] = append(bases[base], r.Alert)
				}
			}
		}
	}
	assert.Len(t, bases, 1, "every runbook_url must share one base, which the chart replaces by alerts.runbookBaseURL; bases and their alerts: %v", bases)

	if os.Getenv(updateEnv) == "1" {
		require.NoError(t, os.MkdirAll(chartAlertsDir, 0o755))
		for _, stale := range staleCopies(t, want) {
			require.NoError(t, os.Remove(stale))
		}
		for name, b := range want {
			require.NoError(t, os.WriteFile(filepath.Join(chartAlertsDir, name), b, 0o644))
		}
		return
	}
	regenerate := fmt.Sprintf("run `%s=1 go test -run TestChartAlertRules ./tools/charttest/` to copy them", updateEnv)
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join(chartAlertsDir, name))
		if !assert.NoError(t, err, "the chart has no copy of %s; %s", name, regenerate) {
			continue
		}
		assert.True(t, bytes.Equal(b, got), "%s differs from observability/alerts/%s; %s", filepath.Join(chartAlertsDir, name), name, regenerate)
	}
	assert.Empty(t, staleCopies(t, want), "rule files of the chart that observability/alerts no longer has; %s", regenerate)
}

// staleCopies are the chart's rule files without a source.
func staleCopies(t *testing.T, sources map[string][]byte) []string {
	t.Helper()
	copies, err := filepath.Glob(filepath.Join(chartAlertsDir, ruleFileGlob))
	require.NoError(t, err)
	var stale []string
	for _, c := range copies {
		if _, ok := sources[filepath.Base(c)]; !ok {
			stale = append(stale, c)
		}
	}
	return stale
}
