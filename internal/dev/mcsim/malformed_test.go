package mcsim

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/dev/logbuffer"
)

// raw stores body, a document no decoder accepts, as it is.
func (e *env) raw(container string, doc map[string]any) {
	b, err := json.Marshal(doc)
	require.NoError(e.t, err)
	_, err = e.store.Container(container).Create(e.t.Context(), doc["partitionKey"].(string), b)
	require.NoError(e.t, err)
}

// encoded is doc as a JSON tree, for a test to break.
func encoded[P any](t *testing.T, doc *api.Document[P]) map[string]any {
	b, err := api.Encode(doc)
	require.NoError(t, err)
	var tree map[string]any
	require.NoError(t, json.Unmarshal(b, &tree))
	return tree
}

func lowered(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strings.ToLower(id)
	}
	return out
}

// hostedControlPlanes is every HCP a report lists, ready or not, lowercased: Cluster
// Service holds the names lowercased.
func hostedControlPlanes(r *api.CapacityReport) []string {
	var out []string
	for _, id := range append(slices.Clone(r.Status.HostedControlPlanes.ReadyResourceIDs), r.Status.HostedControlPlanes.NotReadyResourceIDs...) {
		out = append(out, strings.ToLower(id))
	}
	return out
}

// TestSyncSkipsMalformedDocuments: one document no decoder accepts must not keep every
// other MC from reporting, or no reservation ever drains; it is skipped and logged by id.
func TestSyncSkipsMalformedDocuments(t *testing.T) {
	for _, tc := range []struct {
		name string
		// bad stores the malformed document and returns its Cosmos id.
		bad func(e *env) string
	}{
		{"a cluster whose customerProperties is a string", func(e *env) string {
			doc, err := frontend.Cluster(900, false, time.Now())
			require.NoError(e.t, err)
			tree := encoded(e.t, doc)
			tree["properties"].(map[string]any)["customerProperties"] = "not an object"
			e.raw(api.ResourcesContainer, tree)
			return doc.ID
		}},
		{"a cluster whose resource ID does not parse", func(e *env) string {
			doc, err := frontend.Cluster(901, false, time.Now())
			require.NoError(e.t, err)
			tree := encoded(e.t, doc)
			tree["resourceID"] = "hcp-local-901"
			e.raw(api.ResourcesContainer, tree)
			return doc.ID
		}},
		{"a management cluster whose status is a string", func(e *env) string {
			mcID := api.ManagementClusterResourceID("broken")
			pk, err := api.FleetPartitionKey(mcID)
			require.NoError(e.t, err)
			doc := api.NewDocument(mcID, pk, api.ManagementClusterProperties{Spec: &api.ManagementClusterSpec{SchedulingPolicy: api.Schedulable}})
			tree := encoded(e.t, doc)
			tree["properties"].(map[string]any)["status"] = "not an object"
			e.raw(api.FleetContainer, tree)
			return doc.ID
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			mcA, shardA := e.addMC("a", true)
			mcB, shardB := e.addMC("b", true)
			e.addCluster(shardA, swiftHA)
			e.addCluster(shardB, swiftSingle)
			badID := tc.bad(e)

			var logs logbuffer.Buffer
			sim := New(Config{
				Store: e.store, ClusterServiceURL: e.url,
				Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			})
			require.NoError(t, sim.Sync(t.Context()))

			require.Len(t, e.onShard(shardA), 1)
			require.Len(t, e.onShard(shardB), 1)
			_, repA := e.report(mcA)
			_, repB := e.report(mcB)
			assert.Equal(t, lowered(e.onShard(shardA)), hostedControlPlanes(repA))
			assert.Equal(t, lowered(e.onShard(shardB)), hostedControlPlanes(repB))
			assert.Equal(t, "3", repA.Status.Usage[api.SwiftNIC], "an HA HCP")
			assert.Equal(t, "1", repB.Status.Usage[api.SwiftNIC], "the other clusters' modes are still read")
			assert.Contains(t, logs.String(), fmt.Sprintf(`"id":%q`, badID), "the skipped document is logged by its id")

			require.NoError(t, sim.Sync(t.Context()))
			assert.Equal(t, 1, strings.Count(logs.String(), fmt.Sprintf(`"id":%q`, badID)), "one line per version of the document, not one per pass")
		})
	}
}
