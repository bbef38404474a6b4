package agentpools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v8"
)

// AnyCluster is the key of a static file's entry that applies to every AKS cluster not
// listed by its own resource ID.
const AnyCluster = "*"

// Static serves agent pools from configuration, for local runs without ARM. The file is a
// JSON object mapping AKS resource IDs (compared case-insensitively), or AnyCluster, to
// arrays of agent pools in ARM's REST shape (the "value" items of an agentPools list):
//
//	{
//	  "*": [
//	    {"name": "worker1", "properties": {"vmSize": "Standard_D16ds_v5", "count": 3,
//	      "enableAutoScaling": true, "maxCount": 10,
//	      "nodeLabels": {"aro-hcp.azure.com/role": "worker"},
//	      "tags": {"aks-nic-secondary-count": "16"}}}
//	  ]
//	}
type Static struct {
	byCluster map[string][]Pool
}

// LoadStatic reads a static agent pool file.
func LoadStatic(path string) (*Static, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading agent pool file: %w", err)
	}
	s, err := ParseStatic(b)
	if err != nil {
		return nil, fmt.Errorf("agent pool file %s: %w", path, err)
	}
	return s, nil
}

// ParseStatic reads the content of a static agent pool file.
func ParseStatic(data []byte) (*Static, error) {
	var raw map[string][]*armcontainerservice.AgentPool
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("decoding agent pools: %w", err)
	}
	s := &Static{byCluster: map[string][]Pool{}}
	for id, armPools := range raw {
		pools := []Pool{}
		for i, p := range armPools {
			pool, ok := fromARM(p)
			if !ok {
				return nil, fmt.Errorf("agent pool %d of %q: properties.vmSize and properties.count are required", i, id)
			}
			pools = append(pools, pool)
		}
		s.byCluster[strings.ToLower(id)] = pools
	}
	return s, nil
}

// List returns the pools configured for the cluster, else those under AnyCluster, else
// none.
func (s *Static) List(_ context.Context, aksResourceID string) ([]Pool, error) {
	if pools, ok := s.byCluster[strings.ToLower(aksResourceID)]; ok {
		return pools, nil
	}
	return s.byCluster[AnyCluster], nil
}
