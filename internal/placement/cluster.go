package placement

import "github.com/hcpsched/hcpsched/internal/api"

// Cluster is what the engine needs to know of a cluster: its resource ID and the two
// facts of its document that decide what its hosted control plane costs.
type Cluster struct {
	ResourceID string
	// SingleReplica: serviceProviderProperties.experimentalFeatures.singleReplica is
	// "SingleReplica", so its control plane runs one replica instead of three.
	SingleReplica bool
	// Swift: customerProperties.platform.vnetIntegrationSubnetId is set, so its control
	// plane's pods take swift NICs (VNet integration); a cluster without it takes none.
	Swift bool
}

// ClusterOf reads a cluster document as the engine sees it.
func ClusterOf(resourceID string, c *api.Cluster) Cluster {
	out := Cluster{ResourceID: resourceID}
	if f := c.Properties.ServiceProvider().ExperimentalFeatures; f != nil {
		out.SingleReplica = f.SingleReplica == api.SingleReplica
	}
	if cp := c.Properties.CustomerProperties; cp != nil && cp.Platform != nil {
		out.Swift = cp.Platform.VnetIntegrationSubnetID != ""
	}
	return out
}

// Kind names the cluster's cost class as operators read it: "SWIFT HA", "SWIFT
// single-replica", "non-SWIFT HA" or "non-SWIFT single-replica".
func (c Cluster) Kind() string {
	name := "non-SWIFT"
	if c.Swift {
		name = "SWIFT"
	}
	if c.SingleReplica {
		return name + " single-replica"
	}
	return name + " HA"
}

// ClusterLookup finds a cluster that an MC lists as not ready or reserved. A cluster it
// does not know costs as much as a SWIFT HA one, as upstream charges it: better to
// under-commit an MC than to overcommit it.
type ClusterLookup func(resourceID string) (Cluster, bool)

// kind indexes the four cost classes of a hosted control plane.
type kind uint8

func kindOf(c Cluster) kind {
	var k kind
	if c.Swift {
		k |= 1
	}
	if c.SingleReplica {
		k |= 2
	}
	return k
}

// unknownKind is what a cluster the lookup does not know costs: SWIFT and HA.
const unknownKind kind = 1

const kinds = 4
