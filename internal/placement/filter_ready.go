package placement

import "github.com/hcpsched/hcpsched/internal/api"

// readyFilter rejects an MC that is not Ready or has no Cluster Service provision shard.
type readyFilter struct{ staticFilter }

func (readyFilter) Name() string { return "Ready" }

func (readyFilter) check(j *judgement) (Reason, string) {
	st := j.mc.ManagementCluster.Properties.Status
	if st == nil || !api.IsConditionTrue(st.Conditions, api.ManagementClusterConditionReady) {
		return ReasonNotReady, "Ready is not True"
	}
	// A cluster is created pinned to its MC's provision shard: without one it could never
	// be created there (and one that lost its shard sends its clusters back to placement).
	if st.ClusterServiceProvisionShardID == "" {
		return ReasonNotReady, "no Cluster Service provision shard"
	}
	return "", ""
}
