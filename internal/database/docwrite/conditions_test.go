package docwrite

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A writer that owns one condition of a list may set or change that condition, creating
// the list and its parents, but not touch the others or their order.
func TestOwnedCondition(t *testing.T) {
	owned := Fields{"properties.status.placement.conditions[CapacityAvailable]"}
	tests := []struct {
		name          string
		before, after string
		wantNotOwned  string
	}{
		{
			name:   "set on a document without status",
			before: `{"properties":{"spec":{}}}`,
			after:  `{"properties":{"spec":{},"status":{"placement":{"conditions":[{"type":"CapacityAvailable","status":"True"}]}}}}`,
		},
		{
			name:   "changed beside another condition",
			before: `{"properties":{"status":{"placement":{"conditions":[{"type":"Other","status":"True"},{"type":"CapacityAvailable","status":"False"}]}}}}`,
			after:  `{"properties":{"status":{"placement":{"conditions":[{"type":"Other","status":"True"},{"type":"CapacityAvailable","status":"True"}]}}}}`,
		},
		{
			name:   "appended after another condition",
			before: `{"properties":{"status":{"placement":{"conditions":[{"type":"Other","status":"True"}]}}}}`,
			after:  `{"properties":{"status":{"placement":{"conditions":[{"type":"Other","status":"True"},{"type":"CapacityAvailable","status":"True"}]}}}}`,
		},
		{
			name:         "another condition changed",
			before:       `{"properties":{"status":{"placement":{"conditions":[{"type":"Other","status":"True"}]}}}}`,
			after:        `{"properties":{"status":{"placement":{"conditions":[{"type":"Other","status":"False"},{"type":"CapacityAvailable","status":"True"}]}}}}`,
			wantNotOwned: "properties.status.placement.conditions",
		},
		{
			name:         "another condition dropped",
			before:       `{"properties":{"status":{"placement":{"conditions":[{"type":"Other","status":"True"},{"type":"CapacityAvailable","status":"True"}]}}}}`,
			after:        `{"properties":{"status":{"placement":{"conditions":[{"type":"CapacityAvailable","status":"False"}]}}}}`,
			wantNotOwned: "properties.status.placement.conditions",
		},
		{
			name:         "the others reordered",
			before:       `{"properties":{"status":{"placement":{"conditions":[{"type":"A"},{"type":"B"}]}}}}`,
			after:        `{"properties":{"status":{"placement":{"conditions":[{"type":"B"},{"type":"A"}]}}}}`,
			wantNotOwned: "properties.status.placement.conditions",
		},
		{
			name:         "a field beside the list",
			before:       `{"properties":{"status":{"placement":{}}}}`,
			after:        `{"properties":{"status":{"placement":{"reason":"x","conditions":[{"type":"CapacityAvailable"}]}}}}`,
			wantNotOwned: "properties.status.placement.reason",
		},
		{
			name:         "the list replaced by something else",
			before:       `{"properties":{"status":{"placement":{"conditions":[]}}}}`,
			after:        `{"properties":{"status":{"placement":{"conditions":"none"}}}}`,
			wantNotOwned: "properties.status.placement.conditions",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := confined([]byte(tt.before), []byte(tt.after), owned)
			if tt.wantNotOwned == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrNotOwned)
			assert.Contains(t, err.Error(), ": "+tt.wantNotOwned+" (owned:")
		})
	}
}
