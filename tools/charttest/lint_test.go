package charttest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// TestLint runs `helm lint`'s rules for the required values alone and the override
// set; informational messages (such as a missing icon) are allowed, warnings are not.
func TestLint(t *testing.T) {
	for name, values := range map[string]map[string]any{"required values only": nil, "overrides": overrideValues()} {
		t.Run(name, func(t *testing.T) {
			linter := lint.All(chartDir, withRequired(values), releaseNamespace, false)
			assert.Less(t, linter.HighestSeverity, support.WarningSev, "lint messages: %v", linter.Messages)
		})
	}
}
