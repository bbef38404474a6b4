package main

import (
	"io"
	"testing"

	"github.com/hcpsched/hcpsched/internal/dev/configdoc"
	"github.com/hcpsched/hcpsched/internal/process"
)

// docs/configuration.md lists every backend flag with its default as the code defines
// them; HCPSCHED_UPDATE_DOCS=1 regenerates the table.
func TestConfigurationDoc(t *testing.T) {
	fs, _ := newFlagSet(io.Discard)
	configdoc.Check(t, "../docs/configuration.md", "backend", process.Describe(fs))
}
