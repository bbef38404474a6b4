package placement_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

func TestUnmappableRecorded(t *testing.T) {
	const href = "/api/clusters_mgmt/v1/clusters/1243e9e9-d150-4ef1-9735-2bbc3cabc7d0"
	unmappable := api.Condition{Type: placement.ConditionCapacityAvailable, Status: api.ConditionFalse,
		Reason: placement.ConditionReasonClusterServiceIDUnmappable, Message: placement.UnmappableMessage(href)}
	tests := []struct {
		name             string
		clusterServiceID string
		conditions       []api.Condition
		noStatus         bool
		want             bool
	}{
		{name: "recorded for the cluster's clusterServiceID", clusterServiceID: href, conditions: []api.Condition{unmappable}, want: true},
		{name: "recorded for an ID the cluster no longer has", clusterServiceID: href + "0", conditions: []api.Condition{unmappable}},
		{name: "a cluster without a clusterServiceID is never unmappable", conditions: []api.Condition{unmappable}},
		{name: "another reason", clusterServiceID: href, conditions: []api.Condition{{
			Type: placement.ConditionCapacityAvailable, Status: api.ConditionFalse,
			Reason: placement.ConditionReasonInsufficientCapacity, Message: unmappable.Message}}},
		{name: "another condition", clusterServiceID: href, conditions: []api.Condition{{
			Type: "Other", Status: api.ConditionFalse, Reason: unmappable.Reason, Message: unmappable.Message}}},
		{name: "no placement status", clusterServiceID: href},
		{name: "no status", clusterServiceID: href, noStatus: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cluster := api.NewDocument(api.MustParseResourceID(clusterID), "s", api.ClusterProperties{
				ServiceProviderProperties: &api.ClusterServiceProviderProperties{ClusterServiceID: tt.clusterServiceID},
			})
			props := api.ServiceProviderClusterProperties{Status: &api.ServiceProviderClusterStatus{}}
			if tt.conditions != nil {
				props.Status.Placement = &api.PlacementStatus{Conditions: tt.conditions}
			}
			if tt.noStatus {
				props.Status = nil
			}
			spc := api.NewDocument(api.ServiceProviderClusterResourceID(api.MustParseResourceID(clusterID)), "s", props)
			assert.Equal(t, tt.want, placement.UnmappableRecorded(cluster, spc))
		})
	}
}
