package dataflowtest

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database/memory"
)

// A write is credited to the controller named in the ctx it is made with, whatever file
// makes it, and a write whose ctx names no controller is a problem of its own.
func TestWriteIsCreditedToTheControllerInItsContext(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/cosmos-data-flow.md")
	require.NoError(t, err)
	sections := ParseDoc(string(doc))
	rid := api.ManagementClusterResourceID("1")
	mc := func(policy, ready string) []byte {
		return []byte(`{"id":"` + api.CosmosID(rid.String()) + `","partitionKey":"1","resourceID":"` + rid.String() + `","resourceType":"` + api.ManagementClusterResourceType +
			`","properties":{"spec":{"schedulingPolicy":"` + policy + `"},"status":{"conditions":[{"type":"Ready","status":"` + ready + `"}]}}}`)
	}
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		after []byte
		// want are substrings of the problems Check reports, one per problem.
		want []string
	}{
		{
			name:  "the named controller documents the field",
			ctx:   controller.WithName(context.Background(), "LifecycleController"),
			after: mc("Schedulable", "True"),
		},
		{
			name:  "the named controller does not document the field",
			ctx:   controller.WithName(context.Background(), "LifecycleController"),
			after: mc("Unschedulable", "False"),
			want:  []string{"Lifecycle (lifecycle_controller.go): writes ManagementCluster `spec.schedulingPolicy`, missing from its Write rows"},
		},
		{
			name:  "the same write credited to another controller",
			ctx:   controller.WithName(context.Background(), "ClustersServiceRegistrationController"),
			after: mc("Schedulable", "True"),
			want:  []string{"ClustersServiceRegistration (clusters_service_registration_controller.go): writes ManagementCluster `status.conditions[Ready].status`, missing from its Write rows"},
		},
		{
			name:  "a controller the document has no section for",
			ctx:   controller.WithName(context.Background(), "Unheard"),
			after: mc("Schedulable", "True"),
			want:  []string{"Unheard: no section of the document is titled for this controller; it wrote ManagementCluster.status.conditions[Ready].status"},
		},
		{
			name:  "no controller name in the ctx",
			ctx:   context.Background(),
			after: mc("Schedulable", "True"),
			want:  []string{"a write outside any controller (its ctx names none) changed ManagementCluster.status.conditions[Ready].status"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.New().Container(api.FleetContainer)
			seeded, err := mem.Create(context.Background(), "1", mc("Schedulable", "False"))
			require.NoError(t, err)

			writes := newWrites(func() {
				_, err := Wrap(mem).Replace(tc.ctx, "1", seeded.ID, tc.after, seeded.ETag)
				require.NoError(t, err)
			})
			problems := Check(sections, writes)
			require.Len(t, problems, len(tc.want), "%q", problems)
			for i, w := range tc.want {
				assert.Contains(t, problems[i], w)
			}

			// The wrapper records; it does not change what is stored.
			got, err := mem.Get(context.Background(), "1", seeded.ID)
			require.NoError(t, err)
			assert.JSONEq(t, properties(t, tc.after), properties(t, got.Body))
		})
	}
}

// newWrites returns what Default recorded while write ran that it had not recorded
// before.
func newWrites(write func()) []Write {
	before := map[Write]bool{}
	for _, w := range Default.Writes() {
		before[w] = true
	}
	write()
	var out []Write
	for _, w := range Default.Writes() {
		if !before[w] {
			out = append(out, w)
		}
	}
	return out
}

func properties(t *testing.T, doc []byte) string {
	t.Helper()
	var d struct {
		Properties json.RawMessage `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(doc, &d))
	return string(d.Properties)
}
