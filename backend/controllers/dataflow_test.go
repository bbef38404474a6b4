package controllers

import (
	"os"
	"testing"

	"github.com/hcpsched/hcpsched/internal/dev/dataflowtest"
)

// TestMain runs the controller tests, recording every field the controllers change in
// Cosmos, and fails the package when one is missing from its controller's Write rows in
// docs/cosmos-data-flow.md.
func TestMain(m *testing.M) {
	os.Exit(dataflowtest.Main(m, "../../docs/cosmos-data-flow.md"))
}
