package main

import (
	"bytes"
	"flag"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/dev/configdoc"
)

// docs/configuration.md lists every mc-simulator flag with its default as the code
// defines them; HCPSCHED_UPDATE_DOCS=1 regenerates the table.
func TestConfigurationDoc(t *testing.T) {
	var usage bytes.Buffer
	_, err := parseFlags([]string{"-help"}, &usage, nil)
	require.ErrorIs(t, err, flag.ErrHelp)
	configdoc.Check(t, "../../docs/configuration.md", "mc-simulator", configdoc.FromUsage(usage.String(), configdoc.ProcessFlags(component)))
}
