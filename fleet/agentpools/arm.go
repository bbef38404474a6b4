package agentpools

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v8"
)

// ARM lists agent pools through the Azure SDK. Pools are read live on every call: the
// autoscaler changes counts often and one call per management cluster is cheap.
type ARM struct {
	credential azcore.TokenCredential
	options    *arm.ClientOptions
}

// NewARM returns a source that authenticates with credential. options selects the cloud
// (its ResourceManager endpoint and audience) and the transport; nil means Azure public.
func NewARM(credential azcore.TokenCredential, options *arm.ClientOptions) *ARM {
	return &ARM{credential: credential, options: options}
}

// List pages through GET .../managedClusters/{name}/agentPools.
func (a *ARM) List(ctx context.Context, aksResourceID string) ([]Pool, error) {
	id, err := arm.ParseResourceID(aksResourceID)
	if err != nil {
		return nil, fmt.Errorf("listing agent pools: AKS resource ID: %w", err)
	}
	client, err := armcontainerservice.NewAgentPoolsClient(id.SubscriptionID, a.credential, a.options)
	if err != nil {
		return nil, fmt.Errorf("listing agent pools of %s: %w", aksResourceID, err)
	}
	var pools []Pool
	pager := client.NewListPager(id.ResourceGroupName, id.Name, nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing agent pools of %s: %w", aksResourceID, err)
		}
		for _, p := range page.Value {
			if pool, ok := fromARM(p); ok {
				pools = append(pools, pool)
			}
		}
	}
	return pools, nil
}

// fromARM keeps pools that say what they are made of; a pool without a VM size or a
// count cannot contribute to a ceiling.
func fromARM(p *armcontainerservice.AgentPool) (Pool, bool) {
	if p == nil || p.Properties == nil || p.Properties.VMSize == nil || p.Properties.Count == nil {
		return Pool{}, false
	}
	props := p.Properties
	pool := Pool{
		VMSize:     *props.VMSize,
		Count:      *props.Count,
		MaxCount:   props.MaxCount,
		NodeLabels: flatten(props.NodeLabels),
		Tags:       flatten(props.Tags),
	}
	if p.Name != nil {
		pool.Name = *p.Name
	}
	if props.EnableAutoScaling != nil {
		pool.EnableAutoScaling = *props.EnableAutoScaling
	}
	return pool, true
}

func flatten(m map[string]*string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}
