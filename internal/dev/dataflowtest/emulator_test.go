package dataflowtest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/dev/cosmostest"
)

// On real Cosmos documents (system properties, the emulator's etags) a Create records
// every leaf and a Replace only what it changed, attributed to the writer.
func TestRecordAgainstEmulator(t *testing.T) {
	store := cosmostest.New(t, "hcpsched-dataflow-test", nil, api.FleetContainer).Store
	rec := &Recorder{}
	c := &container{Container: store.Container(api.FleetContainer), rec: rec}
	rid := api.ManagementClusterResourceID("1")
	ctx := controller.WithName(context.Background(), "LifecycleController")

	doc := func(ready string) []byte {
		return []byte(`{"id":"` + api.CosmosID(rid.String()) + `","partitionKey":"1","resourceID":"` + rid.String() + `","resourceType":"` + api.ManagementClusterResourceType +
			`","properties":{"spec":{"schedulingPolicy":"Schedulable"},"status":{"conditions":[{"type":"Ready","status":"` + ready + `"}]}}}`)
	}
	created, err := c.Create(ctx, "1", doc("False"))
	require.NoError(t, err)
	w := func(path string) Write {
		return Write{Controller: "LifecycleController", Type: "ManagementCluster", Path: path}
	}
	assert.Equal(t, []Write{w("id"), w("partitionKey"), w("resourceID"), w("resourceType"), w("spec.schedulingPolicy"), w("status.conditions[Ready].status"), w("status.conditions[Ready].type")}, rec.Writes())

	rec = &Recorder{}
	c.rec = rec
	_, err = c.Replace(ctx, "1", created.ID, doc("True"), created.ETag)
	require.NoError(t, err)
	assert.Equal(t, []Write{w("status.conditions[Ready].status")}, rec.Writes())

	// A lost race records nothing.
	_, err = c.Replace(ctx, "1", created.ID, doc("False"), created.ETag)
	require.Error(t, err)
	assert.Equal(t, []Write{w("status.conditions[Ready].status")}, rec.Writes())
}
