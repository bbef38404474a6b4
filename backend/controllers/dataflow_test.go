package controllers

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/dev/dataflowtest"
)

const dataFlowDoc = "../../docs/cosmos-data-flow.md"

// TestMain runs the controller tests, recording every field the controllers change in
// Cosmos (credited to the controller named in the write's ctx), and fails the package
// when one is missing from its controller's Write rows in docs/cosmos-data-flow.md, or
// when a write through a recorded container names no controller.
func TestMain(m *testing.M) {
	os.Exit(dataflowtest.Main(m, dataFlowDoc))
}

// The fields each controller tells docwrite it owns are its Write rows in the data-flow
// document, no more and no fewer (cosmosMetadata is the store's to set on every
// replace). docwrite refuses a change outside them, so a row the code needs cannot be
// missing; this test catches a row the code no longer writes, or a claim to own more.
func TestOwnedFieldsAreTheWriteRows(t *testing.T) {
	b, err := os.ReadFile(dataFlowDoc)
	require.NoError(t, err)
	sections := map[string]dataflowtest.Section{}
	for _, s := range dataflowtest.ParseDoc(string(b)) {
		sections[s.Name()] = s
	}
	tests := []struct {
		controller, docType string
		owned               []docwrite.Fields
	}{
		{PendingClusterServiceIDAssignName, "HCPOpenShiftCluster", []docwrite.Fields{pendingClusterServiceIDFields}},
		{ClusterServiceCreateName, "HCPOpenShiftCluster", []docwrite.Fields{clusterServiceIDFields}},
		{ManagementClusterPlacementSyncName, "ServiceProviderCluster", []docwrite.Fields{observedPlacementFields}},
		{ClusterServiceAdoptionName, "ServiceProviderCluster", []docwrite.Fields{adoptionFields, capacityConditionFields}},
		{PlacementName, "ServiceProviderCluster", []docwrite.Fields{placementRecordFields, capacityConditionFields}},
		{PlacementName, "ManagementClusterScheduling", []docwrite.Fields{reservationFields}},
		{PendingCleanupName, "ManagementClusterScheduling", []docwrite.Fields{reservationFields}},
	}
	for _, tt := range tests {
		t.Run(tt.controller+"/"+tt.docType, func(t *testing.T) {
			section, ok := sections[tt.controller]
			require.True(t, ok, "no section for %s", tt.controller)
			var owned []string
			for _, fields := range tt.owned {
				for _, f := range fields {
					owned = append(owned, strings.TrimPrefix(f, "properties."))
				}
			}
			var rows []string
			for _, w := range section.Writes[tt.docType] {
				if !strings.HasPrefix(w, "cosmosMetadata.") {
					rows = append(rows, w)
				}
			}
			slices.Sort(owned)
			slices.Sort(rows)
			assert.Equal(t, slices.Compact(rows), slices.Compact(owned))
		})
	}
}
