package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcpsched/hcpsched/internal/api"
)

// parentKey cuts an SPC's cache key to its cluster's, as the resource ID parser would.
func TestParentKey(t *testing.T) {
	cluster := api.MustParseResourceID("/subscriptions/S/resourceGroups/RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/C1")
	spc := api.ServiceProviderClusterResourceID(cluster)
	tests := []struct{ in, want string }{
		{spc.Key(), cluster.Key()},
		{"/a/b/c/d", "/a/b"},
		{"/subscriptions/s", ""},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, parentKey(tt.in), tt.in)
	}
}
