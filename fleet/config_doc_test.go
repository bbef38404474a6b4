package main

import (
	"bytes"
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/dev/configdoc"
)

// docs/configuration.md lists every flag of fleet controller and fleet register with its
// default as the code defines them, and the chart's values schema accepts exactly the
// controller's flags in fleet.config and requires the ones its validation does;
// HCPSCHED_UPDATE_DOCS=1 regenerates both. The FlagSets are private to their parse
// functions, so the flags are read back from -help.
func TestConfigurationDoc(t *testing.T) {
	for _, tc := range []struct {
		section string
		parse   func(args []string, stderr io.Writer) error
	}{
		{"fleet controller", func(args []string, stderr io.Writer) error {
			_, err := parseControllerFlags(args, stderr, nil)
			return err
		}},
		{"fleet register", func(args []string, stderr io.Writer) error {
			_, err := parseRegisterFlags(args, stderr, nil)
			return err
		}},
	} {
		t.Run(tc.section, func(t *testing.T) {
			var usage bytes.Buffer
			require.ErrorIs(t, tc.parse([]string{"-help"}, &usage), flag.ErrHelp)
			configdoc.Check(t, "../docs/configuration.md", tc.section, configdoc.FromUsage(usage.String(), configdoc.ProcessFlags(component)))
		})
	}
	t.Run("chart values schema", func(t *testing.T) {
		var usage bytes.Buffer
		_, err := parseControllerFlags([]string{"-help"}, &usage, nil)
		require.ErrorIs(t, err, flag.ErrHelp)
		configdoc.CheckChartSchema(t, configdoc.ChartSchemaPath, configdoc.ChartComponent{
			Name:  "fleet",
			Flags: configdoc.FromUsage(usage.String(), configdoc.ProcessFlags(component)),
			Validate: func(args []string) error {
				_, err := parseControllerFlags(args, io.Discard, configdoc.NoEnv)
				return err
			},
		})
	})
}
