package memory_test

import (
	"testing"

	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/conformance"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) database.Container {
		return memory.New().Container(t.Name())
	})
}
