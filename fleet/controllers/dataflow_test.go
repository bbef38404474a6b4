package controllers

import (
	"os"
	"testing"

	"github.com/hcpsched/hcpsched/internal/dev/dataflowtest"
)

// TestMain runs the controller tests, recording every field the controllers change in
// Cosmos (credited to the controller named in the write's ctx), and fails the package
// when one is missing from its controller's Write rows in docs/cosmos-data-flow.md, or
// when a write through a recorded container names no controller.
func TestMain(m *testing.M) {
	os.Exit(dataflowtest.Main(m, "../../docs/cosmos-data-flow.md"))
}
