package clusterbody

import (
	"strings"
	"testing"

	arohcpsdk "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/clusterservice"
)

// The adoption search must match exactly what Build sends, or a create whose record was
// lost would be created again; Identity is both.
func TestIdentityIsWhatBuildSends(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		clusterKey string
		wantName   string
	}{
		{name: "name from properties.name, lowercased", clusterKey: "Mixed-Case", wantName: "mixed-case"},
		{name: "resource ID's name when properties.name is missing", clusterKey: "", wantName: strings.ToLower(testClusterRID.Name())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := minimalInput()
			in.Cluster.Properties.Name = tt.clusterKey
			id := Identity(in.Cluster, in.TenantID)
			assert.Equal(t, clusterservice.AzureIdentity{
				SubscriptionID:           strings.ToLower(testClusterRID.SubscriptionID),
				ResourceGroupName:        strings.ToLower(testClusterRID.ResourceGroup),
				ResourceName:             tt.wantName,
				TenantID:                 in.TenantID,
				ManagedResourceGroupName: in.Cluster.Properties.CustomerProperties.Platform.ManagedResourceGroup,
			}, id)
			if tt.clusterKey == "" {
				return // Build refuses a cluster without a name; only the search runs
			}
			body, err := Build(in)
			require.NoError(t, err)
			assert.Equal(t, id, sent(body.Azure()))
		})
	}
}

func sent(az *arohcpsdk.Azure) clusterservice.AzureIdentity {
	return clusterservice.AzureIdentity{
		SubscriptionID:           az.SubscriptionID(),
		ResourceGroupName:        az.ResourceGroupName(),
		ResourceName:             az.ResourceName(),
		TenantID:                 az.TenantID(),
		ManagedResourceGroupName: az.ManagedResourceGroupName(),
	}
}
