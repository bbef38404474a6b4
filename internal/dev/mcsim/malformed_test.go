package mcsim_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/backend/clusterbody"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/dev/logbuffer"
	"github.com/hcpsched/hcpsched/internal/dev/mcsim"
)

// region is a store with MCs registered and clusters created in the fake Cluster Service
// the way hcpsched's backend creates them, for the simulator to report.
type region struct {
	t     *testing.T
	store database.Store
	fake  *fakeclusterservice.Server
	cs    *clusterservice.Client
	url   string
	n     int
}

func newRegion(t *testing.T) *region {
	fake := fakeclusterservice.New()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	cs, err := clusterservice.New(t.Context(), clusterservice.Config{URL: srv.URL, DisableRetries: true, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return &region{t: t, store: memory.New(), fake: fake, cs: cs, url: srv.URL}
}

// mc registers stamp's MC with its provision shard and the capacity ReadDesire the fleet
// creates, and returns the MC's resource ID and shard.
func (r *region) mc(stamp string) (*api.ResourceID, string) {
	t := r.t
	shard, err := arohcp.NewProvisionShard().
		Region(arohcp.NewCloudRegion().ID("eastus")).
		CloudProvider(arohcp.NewCloudProvider().ID("azure")).
		Topology("shared").
		AzureShard(arohcp.NewAzureShard().
			AksManagementClusterResourceId("/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/mc/providers/Microsoft.ContainerService/managedClusters/mc-" + stamp).
			PublicDnsZoneResourceId("/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/dns/providers/Microsoft.Network/dnszones/example.com").
			CxManagedIdentitiesKeyVaultUrl("https://mi.vault.azure.net/").
			CxSecretsKeyVaultUrl("https://secrets.vault.azure.net/").
			CxSecretsKeyVaultManagedIdentityClientId("11111111-1111-4111-8111-111111111111")).
		MaestroConfig(arohcp.NewProvisionShardMaestroConfig().
			ConsumerName("consumer-" + stamp).
			RestApiConfig(arohcp.NewProvisionShardMaestroRestApiConfig().Url("http://maestro:8000")).
			GrpcApiConfig(arohcp.NewProvisionShardMaestroGrpcApiConfig().Url("maestro:8090"))).
		Build()
	require.NoError(t, err)
	created, err := r.cs.CreateProvisionShard(t.Context(), shard)
	require.NoError(t, err)
	href, err := clusterservice.ShardHREF(created.ID())
	require.NoError(t, err)

	mcID := api.ManagementClusterResourceID(stamp)
	pk, err := api.FleetPartitionKey(mcID)
	require.NoError(t, err)
	container := "kubeapplier-" + stamp
	_, err = database.Create(t.Context(), r.store.Container(api.FleetContainer), api.NewDocument(mcID, pk, api.ManagementClusterProperties{
		Spec:   &api.ManagementClusterSpec{SchedulingPolicy: api.Schedulable},
		Status: &api.ManagementClusterStatus{ClusterServiceProvisionShardID: href, KubeApplierCosmosContainerName: container},
	}))
	require.NoError(t, err)
	body := fmt.Sprintf(`{"id":%q,"resourceID":%q,"partitionKey":%q,"properties":{"spec":{"managementCluster":%q,"targetItem":{"group":%q,"version":%q,"resource":%q,"name":%q}}}}`,
		api.CosmosID(api.CapacityReadDesireResourceID(mcID).String()), api.CapacityReadDesireResourceID(mcID), api.KubeApplierPartitionKey(mcID), mcID,
		api.CapacityReportGroup, api.CapacityReportVersion, api.CapacityReportResource, api.CapacityReportName)
	rd, err := api.Decode[api.ReadDesireProperties]([]byte(body))
	require.NoError(t, err)
	_, err = database.Create(t.Context(), r.store.Container(container), rd)
	require.NoError(t, err)
	return mcID, created.ID()
}

// cluster writes cluster n's Subscription and cluster documents as ARO-HCP's frontend
// does and creates it in Cluster Service on shard, as ClusterServiceCreate would; it
// returns the cluster's resource ID.
func (r *region) cluster(shard string, singleReplica bool) string {
	t := r.t
	r.n++
	resources := r.store.Container(api.ResourcesContainer)
	sub, err := frontend.Subscription(frontend.SubscriptionID(r.n), frontend.Tenant)
	require.NoError(t, err)
	_, err = database.Create(t.Context(), resources, sub)
	require.NoError(t, err)
	doc, err := frontend.Cluster(r.n, singleReplica, time.Now())
	require.NoError(t, err)
	href, err := clusterservice.ClusterHREF(clusterservice.NewClusterID())
	require.NoError(t, err)
	doc.Properties.ServiceProviderProperties.PendingClusterServiceID = href
	_, err = database.Create(t.Context(), resources, doc)
	require.NoError(t, err)

	rid, err := doc.ParsedResourceID()
	require.NoError(t, err)
	spcID := api.ServiceProviderClusterResourceID(rid)
	spc := api.NewDocument(spcID, doc.PartitionKey, api.ServiceProviderClusterProperties{Spec: &api.ServiceProviderClusterSpec{
		ControlPlaneVersion: &api.ControlPlaneVersionSpec{DesiredVersion: "4.20.8"},
	}})
	body, err := clusterbody.Build(clusterbody.Input{Cluster: doc, SPC: spc, TenantID: frontend.Tenant, ShardID: shard})
	require.NoError(t, err)
	_, err = r.cs.CreatePinnedCluster(t.Context(), body, shard)
	require.NoError(t, err)
	return doc.ResourceID
}

// raw stores body, a document no decoder accepts, as it is.
func (r *region) raw(container string, doc map[string]any) {
	b, err := json.Marshal(doc)
	require.NoError(r.t, err)
	_, err = r.store.Container(container).Create(r.t.Context(), doc["partitionKey"].(string), b)
	require.NoError(r.t, err)
}

// encoded is doc as a JSON tree, for a test to break.
func encoded[P any](t *testing.T, doc *api.Document[P]) map[string]any {
	b, err := api.Encode(doc)
	require.NoError(t, err)
	var tree map[string]any
	require.NoError(t, json.Unmarshal(b, &tree))
	return tree
}

func capacityReport(t *testing.T, store database.Store, mcID *api.ResourceID) *api.CapacityReport {
	rd, err := database.Get[api.ReadDesireProperties](t.Context(), store.Container("kubeapplier-"+mcID.Names[0]),
		api.KubeApplierPartitionKey(mcID), api.CapacityReadDesireResourceID(mcID).String())
	require.NoError(t, err)
	require.NotNil(t, rd.Properties.Status, "no capacity report was written for %s", mcID)
	report, err := api.DecodeCapacityReport(rd.Properties.Status.KubeContent)
	require.NoError(t, err)
	return report
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
		bad func(r *region) string
	}{
		{"a cluster whose customerProperties is a string", func(r *region) string {
			doc, err := frontend.Cluster(900, false, time.Now())
			require.NoError(r.t, err)
			tree := encoded(r.t, doc)
			tree["properties"].(map[string]any)["customerProperties"] = "not an object"
			r.raw(api.ResourcesContainer, tree)
			return doc.ID
		}},
		{"a cluster whose resource ID does not parse", func(r *region) string {
			doc, err := frontend.Cluster(901, false, time.Now())
			require.NoError(r.t, err)
			tree := encoded(r.t, doc)
			tree["resourceID"] = "hcp-local-901"
			r.raw(api.ResourcesContainer, tree)
			return doc.ID
		}},
		{"a management cluster whose status is a string", func(r *region) string {
			mcID := api.ManagementClusterResourceID("broken")
			pk, err := api.FleetPartitionKey(mcID)
			require.NoError(r.t, err)
			doc := api.NewDocument(mcID, pk, api.ManagementClusterProperties{Spec: &api.ManagementClusterSpec{SchedulingPolicy: api.Schedulable}})
			tree := encoded(r.t, doc)
			tree["properties"].(map[string]any)["status"] = "not an object"
			r.raw(api.FleetContainer, tree)
			return doc.ID
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRegion(t)
			mcA, shardA := r.mc("a")
			mcB, shardB := r.mc("b")
			haA := r.cluster(shardA, false)
			singleB := r.cluster(shardB, true)
			badID := tc.bad(r)

			var logs logbuffer.Buffer
			sim := mcsim.New(mcsim.Config{
				Store: r.store, ClusterServiceURL: r.url,
				Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			})
			require.NoError(t, sim.Sync(t.Context()))

			repA, repB := capacityReport(t, r.store, mcA), capacityReport(t, r.store, mcB)
			assert.Equal(t, []string{strings.ToLower(haA)}, hostedControlPlanes(repA))
			assert.Equal(t, []string{strings.ToLower(singleB)}, hostedControlPlanes(repB))
			assert.Equal(t, "3", repA.Status.Usage[api.SwiftNIC], "an HA HCP")
			assert.Equal(t, "1", repB.Status.Usage[api.SwiftNIC], "the other clusters' modes are still read")
			assert.Contains(t, logs.String(), fmt.Sprintf(`"id":%q`, badID), "the skipped document is logged by its id")

			require.NoError(t, sim.Sync(t.Context()))
			assert.Equal(t, 1, strings.Count(logs.String(), fmt.Sprintf(`"id":%q`, badID)), "one line per version of the document, not one per pass")
		})
	}
}
