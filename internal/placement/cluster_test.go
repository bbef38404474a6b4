package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClusterKind(t *testing.T) {
	for _, tc := range []struct {
		cluster Cluster
		want    string
	}{
		{Cluster{Swift: true}, "SWIFT HA"},
		{Cluster{Swift: true, SingleReplica: true}, "SWIFT single-replica"},
		{Cluster{}, "non-SWIFT HA"},
		{Cluster{SingleReplica: true}, "non-SWIFT single-replica"},
	} {
		assert.Equal(t, tc.want, tc.cluster.Kind())
	}
}
