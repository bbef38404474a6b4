package main

import (
	"io"
	"testing"

	"github.com/hcpsched/hcpsched/internal/dev/configdoc"
	"github.com/hcpsched/hcpsched/internal/process"
)

// docs/configuration.md lists every backend flag with its default as the code defines
// them, and the chart's values schema accepts exactly these flags in backend.config and
// requires the ones validate does; HCPSCHED_UPDATE_DOCS=1 regenerates both.
func TestConfigurationDoc(t *testing.T) {
	fs, _ := newFlagSet(io.Discard)
	docs := process.Describe(fs)
	configdoc.Check(t, "../docs/configuration.md", "backend", docs)
	t.Run("chart values schema", func(t *testing.T) {
		configdoc.CheckChartSchema(t, configdoc.ChartSchemaPath, configdoc.ChartComponent{
			Name:  "backend",
			Flags: docs,
			Validate: func(args []string) error {
				fs, cfg := newFlagSet(io.Discard)
				if err := process.Parse(fs, args, configdoc.NoEnv); err != nil {
					return err
				}
				return cfg.validate()
			},
		})
	})
}
