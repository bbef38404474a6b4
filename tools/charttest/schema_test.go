package charttest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/engine"
)

// TestSchemaRejectsMistakes proves values.schema.json catches what the templates
// would otherwise ignore or render into a broken manifest.
func TestSchemaRejectsMistakes(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"misspelt component key": {"fleet": map[string]any{"replica": 3}},
		"misspelt top-level key": {"healthport": 9091},
		"port out of range":      {"metricsPort": 80800},
		"flag name not a flag":   {"config": map[string]any{"COSMOS_ENDPOINT": "https://x"}},
		"nested flag value":      {"backend": map[string]any{"config": map[string]any{"workers": map[string]any{"n": 1}}}},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := renderValues(t, values)
			assert.ErrorContains(t, err, "values don't meet the specifications of the schema")
		})
	}
}

func TestChartRejectsSharedPort(t *testing.T) {
	chrt, vals, err := renderValues(t, map[string]any{"metricsPort": 8081})
	require.NoError(t, err)
	_, err = engine.Render(chrt, vals)
	assert.ErrorContains(t, err, "metricsPort and healthPort must differ")
}
