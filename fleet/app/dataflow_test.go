package app

import (
	"os"
	"testing"

	"github.com/hcpsched/hcpsched/internal/dev/dataflowtest"
)

// TestMain records every field the running fleet changes in Cosmos, and fails the
// package when one is missing from its controller's Write rows in
// docs/cosmos-data-flow.md.
func TestMain(m *testing.M) {
	os.Exit(dataflowtest.Main(m, "../../docs/cosmos-data-flow.md"))
}
