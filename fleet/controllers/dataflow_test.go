package controllers

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
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

// The fields each controller tells docwrite it owns are its Write rows in
// docs/cosmos-data-flow.md.
func TestOwnedFieldsAreTheDocumentedWrites(t *testing.T) {
	t.Parallel()
	scheduling, err := api.NewManagementClusterScheduling(mc1)
	require.NoError(t, err)
	readDesire := api.NewDocument(capacityReadDesireOf1, api.KubeApplierPartitionKey(mc1), api.ReadDesireProperties{Spec: &api.ReadDesireSpec{}})
	setCapacityReadDesireSpec(readDesire.Properties.Spec, mc1)
	tests := []struct {
		def     controller.Definition[Env]
		docType string
		owned   docwrite.Fields
		created []byte // the document the controller creates, if any
	}{
		{clustersServiceRegistrationDefinition(), "ManagementCluster", registrationOwns, nil},
		{lifecycleDefinition(), "ManagementCluster", lifecycleOwns, nil},
		{capacityReadDesireDefinition(), "ReadDesire", readDesireOwns, encoded(t, readDesire)},
		{capacityReportingDefinition(), "ManagementClusterScheduling", reportingOwns, encoded(t, scheduling)},
		{scaleCeilingDefinition(), "ManagementClusterScheduling", scaleCeilingOwns, encoded(t, scheduling)},
	}
	for _, tc := range tests {
		t.Run(tc.def.Name, func(t *testing.T) {
			t.Parallel()
			var created [][]byte
			if tc.created != nil {
				created = append(created, tc.created)
			}
			controllertest.AssertOwnsItsWriteRows(t, dataFlowDoc, strings.TrimSuffix(tc.def.Name, "Controller"), tc.docType, tc.owned, created...)
		})
	}
}

func encoded[P any](t *testing.T, doc *api.Document[P]) []byte {
	t.Helper()
	body, err := api.Encode(doc)
	require.NoError(t, err)
	return body
}
