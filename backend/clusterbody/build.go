package clusterbody

import (
	"fmt"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
)

// Input is what a create is built from. The caller has checked the preconditions: the
// cluster has a pending CS ID, the SPC a desired version, the subscription a tenant, and
// the placed management cluster a provision shard.
type Input struct {
	Cluster *api.Cluster
	SPC     *api.ServiceProviderCluster
	// TenantID is the subscription's properties.properties.tenantId, case kept.
	TenantID string
	// ShardID is the bare provision shard ID of the placed management cluster.
	ShardID string
}

// Build returns the cluster to POST. An error names the Cosmos field that cannot be
// turned into a CS value; such a document stays uncreated until it changes.
func Build(in Input) (*arohcp.Cluster, error) {
	rid, err := in.Cluster.ParsedResourceID()
	if err != nil {
		return nil, err
	}
	csID, err := clusterservice.ParseClusterHREF(in.Cluster.Properties.ServiceProvider().PendingClusterServiceID)
	if err != nil {
		return nil, fmt.Errorf("properties.serviceProviderProperties.pendingClusterServiceID: %w", err)
	}
	mrg := ""
	if cp := in.Cluster.Properties.CustomerProperties; cp != nil && cp.Platform != nil {
		mrg = cp.Platform.ManagedResourceGroup
	}
	// TODO(issue 16): the whole body, field for field as docs/cluster-service-create.md says.
	body, err := arohcp.NewCluster().
		ID(csID).
		Name(rid.Name()).
		Azure(arohcp.NewAzure().
			SubscriptionID(rid.SubscriptionID).
			ResourceGroupName(rid.ResourceGroup).
			ResourceName(rid.Name()).
			TenantID(in.TenantID).
			ManagedResourceGroupName(mrg)).
		ProvisionShardID(in.ShardID).
		Build()
	if err != nil {
		return nil, fmt.Errorf("building the Cluster Service cluster %s: %w", csID, err)
	}
	return body, nil
}
