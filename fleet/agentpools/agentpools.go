// Package agentpools lists the AKS agent pools of a management cluster: from ARM through
// the Azure SDK in production, or from a static file for local runs. The scale ceiling is
// computed from them.
package agentpools

import (
	"context"
	"strconv"
)

// Labels and tags ARO-HCP's infrastructure puts on agent pools.
const (
	// RoleLabel is the node label that says what a pool's nodes are for.
	RoleLabel = "aro-hcp.azure.com/role"
	// WorkerRole is RoleLabel's value on pools that host hosted control planes.
	WorkerRole = "worker"
	// NICSecondaryCountTag is the pool tag carrying the configured number of secondary
	// (swift) NICs per node.
	NICSecondaryCountTag = "aks-nic-secondary-count"
)

// Pool is the part of an AKS agent pool the scale ceiling needs.
type Pool struct {
	Name              string
	VMSize            string
	Count             int32
	EnableAutoScaling bool
	// MaxCount is only meaningful with EnableAutoScaling; nil when ARM omits it.
	MaxCount   *int32
	NodeLabels map[string]string
	Tags       map[string]string
}

// IsWorker reports whether the pool's nodes host hosted control planes.
func (p Pool) IsWorker() bool { return p.NodeLabels[RoleLabel] == WorkerRole }

// MaxNodes is the most nodes the pool can have: its autoscaler maximum when autoscaling,
// otherwise its fixed count.
func (p Pool) MaxNodes() int64 {
	if p.EnableAutoScaling && p.MaxCount != nil {
		return int64(*p.MaxCount)
	}
	return int64(p.Count)
}

// SecondaryNICs is the per-node swift NIC count from NICSecondaryCountTag, if the tag is
// present and a non-negative integer.
func (p Pool) SecondaryNICs() (int64, bool) {
	v, ok := p.Tags[NICSecondaryCountTag]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// Source lists the agent pools of one AKS cluster, named by its ARM resource ID.
type Source interface {
	List(ctx context.Context, aksResourceID string) ([]Pool, error)
}
