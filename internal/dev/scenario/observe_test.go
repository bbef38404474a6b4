package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcpsched/hcpsched/internal/api"
)

// parentKey cuts an SPC's ID to its cluster's cache key, as the resource ID parser would.
func TestParentKey(t *testing.T) {
	cluster := api.MustParseResourceID("/subscriptions/S/resourceGroups/RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/C1")
	spc := api.ServiceProviderClusterResourceID(cluster)
	tests := []struct{ in, want string }{
		{spc.String(), cluster.Key()},
		{"/A/b/C/d", "/a/b"},
		{"/subscriptions/s", ""},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, parentKey(tt.in), tt.in)
	}
}
