package register

import (
	"bytes"
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/docwrite"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// stamp1 registers what ARO-HCP's fixtures hold for stamp 1.
func stamp1() Options {
	return Options{
		Stamp: "1", AutoApprove: true, SchedulingPolicy: api.Schedulable,
		AKSResourceID:                                        "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/hcp-underlay-dev-westus3-mgmt-1/providers/Microsoft.ContainerService/managedClusters/dev-westus3-mgmt-1",
		PublicDNSZoneResourceID:                              "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/global/providers/Microsoft.Network/dnszones/usw3.hcp.osadev.cloud",
		HostedClustersSecretsKeyVaultURL:                     "https://ah-dev-cx-usw3-1.vault.azure.net/",
		HostedClustersManagedIdentitiesKeyVaultURL:           "https://ah-dev-mi-usw3-1.vault.azure.net/",
		HostedClustersSecretsKeyVaultManagedIdentityClientID: "6f1c3a52-9d7e-4b1a-8c55-2f0e9d41b7a3",
		MaestroConsumerName:                                  "hcp-underlay-usw3-mgmt-1",
		MaestroRESTAPIURL:                                    "http://maestro.maestro.svc.cluster.local:8000",
		MaestroGRPCTarget:                                    "maestro-grpc.maestro.svc.cluster.local:8090",
		KubeApplierCosmosContainerName:                       "Manifests-MC-1",
	}
}

// approvedAt is when ARO-HCP's fixture stamp 1 was auto-approved.
var approvedAt = time.Date(2026, 8, 19, 14, 2, 11, 0, time.UTC)

func tree(t *testing.T, b []byte, drop ...[]string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	require.NoError(t, dec.Decode(&m))
	for _, k := range []string{"_etag", "_ts", "_rid", "_self", "_attachments"} {
		delete(m, k)
	}
	for _, path := range drop {
		cur := m
		for _, k := range path[:len(path)-1] {
			cur = cur[k].(map[string]any)
		}
		delete(cur, path[len(path)-1])
	}
	return m
}

func stored(t *testing.T, s database.Store, rid *api.ResourceID) database.Item {
	t.Helper()
	pk, err := api.FleetPartitionKey(rid)
	require.NoError(t, err)
	item, err := s.Container(api.FleetContainer).Get(context.Background(), pk, api.CosmosID(rid.String()))
	require.NoError(t, err)
	return item
}

func seed(t *testing.T, s database.Store, fixtures ...string) {
	t.Helper()
	for _, f := range fixtures {
		b := arohcp.Get(f)
		var env struct {
			PartitionKey string `json:"partitionKey"`
		}
		require.NoError(t, json.Unmarshal(b, &env))
		_, err := s.Container(api.FleetContainer).Create(context.Background(), env.PartitionKey, b)
		require.NoError(t, err)
	}
}

// A new stamp is written as ARO-HCP's `fleet register --auto-approve` writes it; the new
// management cluster as ARO-HCP's, before any controller ran; the scheduling document as
// ARO-HCP first creates it.
func TestRegisterCreatesWhatARODoes(t *testing.T) {
	s := memory.New()
	require.NoError(t, Run(t.Context(), s, stamp1(), approvedAt))

	assert.Equal(t, tree(t, arohcp.Get("constructed/fleet-stamp-1-auto-approved.json")),
		tree(t, stored(t, s, api.StampResourceID("1")).Body))

	metadata := []string{"properties", "cosmosMetadata"}
	wantMC := tree(t, arohcp.Get("constructed/fleet-managementcluster-1-ready-schedulable.json"),
		append(metadata, "etag"), []string{"properties", "status", "conditions"}, []string{"properties", "status", "clusterServiceProvisionShardID"})
	wantMC["properties"].(map[string]any)["cosmosMetadata"].(map[string]any)["instanceVersion"] = json.Number("1")
	assert.Equal(t, wantMC, tree(t, stored(t, s, api.ManagementClusterResourceID("1")).Body))

	wantScheduling := tree(t, arohcp.Get("constructed/fleet-scheduling-stamp-3-initial-empty.json"))
	got := tree(t, stored(t, s, api.SchedulingResourceID(api.ManagementClusterResourceID("1"))).Body)
	for _, k := range []string{"id", "partitionKey", "resourceID"} {
		delete(wantScheduling, k)
		delete(got, k)
	}
	delete(wantScheduling["properties"].(map[string]any), "cosmosMetadata")
	delete(got["properties"].(map[string]any), "cosmosMetadata")
	assert.Equal(t, wantScheduling, got)
}

func TestRegisterTwiceWritesNothing(t *testing.T) {
	s := memory.New()
	require.NoError(t, Run(t.Context(), s, stamp1(), approvedAt))
	ids := []*api.ResourceID{api.StampResourceID("1"), api.ManagementClusterResourceID("1"), api.SchedulingResourceID(api.ManagementClusterResourceID("1"))}
	var etags []string
	for _, id := range ids {
		etags = append(etags, stored(t, s, id).ETag)
	}
	require.NoError(t, Run(t.Context(), s, stamp1(), approvedAt.Add(time.Hour)))
	for i, id := range ids {
		assert.Equal(t, etags[i], stored(t, s, id).ETag, id.String())
	}
}

// Re-registering an ARO-HCP management cluster changes what register owns and keeps
// what the controllers wrote.
func TestRegisterUpdatesOnlyItsFields(t *testing.T) {
	s := memory.New()
	seed(t, s, "constructed/fleet-stamp-1-auto-approved.json", "constructed/fleet-managementcluster-1-ready-schedulable.json",
		"constructed/fleet-scheduling-stamp-1-observed.json")
	stampBefore := stored(t, s, api.StampResourceID("1"))
	mcBefore := stored(t, s, api.ManagementClusterResourceID("1"))
	schedulingBefore := stored(t, s, api.SchedulingResourceID(api.ManagementClusterResourceID("1")))

	o := stamp1()
	o.SchedulingPolicy = api.Unschedulable
	o.MaestroGRPCTarget = "maestro-grpc.other.svc:8090"
	o.PublicDNSZoneResourceID, o.MaestroConsumerName = "", "" // left out: kept
	require.NoError(t, Run(t.Context(), s, o, approvedAt.Add(time.Hour)))

	assert.Equal(t, stampBefore.ETag, stored(t, s, api.StampResourceID("1")).ETag, "already approved")
	assert.Equal(t, schedulingBefore.ETag, stored(t, s, api.SchedulingResourceID(api.ManagementClusterResourceID("1"))).ETag)

	want := tree(t, mcBefore.Body)
	props := want["properties"].(map[string]any)
	props["cosmosMetadata"].(map[string]any)["instanceVersion"] = json.Number("5")
	props["cosmosMetadata"].(map[string]any)["etag"] = mcBefore.ETag
	props["spec"].(map[string]any)["schedulingPolicy"] = api.Unschedulable
	props["status"].(map[string]any)["maestroGRPCTarget"] = "maestro-grpc.other.svc:8090"
	assert.Equal(t, want, tree(t, stored(t, s, api.ManagementClusterResourceID("1")).Body))
}

func TestRegisterLeavesApprovalAloneWithoutAutoApprove(t *testing.T) {
	s := memory.New()
	seed(t, s, "constructed/fleet-stamp-3-approval-revoked.json")
	before := stored(t, s, api.StampResourceID("3"))
	o := stamp1()
	o.Stamp, o.AutoApprove = "3", false
	require.NoError(t, Run(t.Context(), s, o, approvedAt))
	assert.Equal(t, before.ETag, stored(t, s, api.StampResourceID("3")).ETag, "a revoked approval stays revoked")

	o.Stamp = "4"
	require.NoError(t, Run(t.Context(), s, o, approvedAt))
	stamp, err := database.DecodeItem[api.StampProperties](stored(t, s, api.StampResourceID("4")))
	require.NoError(t, err)
	assert.Nil(t, stamp.Properties.Status, "a new stamp waits for an operator")
}

func TestRegisterValidates(t *testing.T) {
	err := Run(t.Context(), memory.New(), Options{Stamp: "a/b", SchedulingPolicy: "Sometimes", AKSResourceID: "aks"}, approvedAt)
	require.Error(t, err)
	for _, want := range []string{"--stamp-identifier", "--scheduling-policy", "--aks-resource-id", "--kube-applier-cosmos-container-name"} {
		assert.ErrorContains(t, err, want)
	}
	o := stamp1()
	o.PublicDNSZoneResourceID = "zone"
	assert.ErrorContains(t, o.Validate(), "--public-dns-zone-resource-id")
	assert.NoError(t, stamp1().Validate())
}

// racingStore lets another writer change the document just before register's first
// replace or patch, so that write fails with 412 and register must read again.
type racingStore struct {
	database.Store
	raced atomic.Bool
}

func (s *racingStore) Container(name string) database.Container {
	return &racingContainer{Container: s.Store.Container(name), store: s}
}

type racingContainer struct {
	database.Container
	store *racingStore
}

func (c *racingContainer) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	if err := c.race(ctx, pk, id); err != nil {
		return database.Item{}, err
	}
	return c.Container.Replace(ctx, pk, id, body, ifMatch)
}

// Patch races as Replace does: docwrite writes owned fields as patches.
func (c *racingContainer) Patch(ctx context.Context, pk, id string, ops []database.PatchOperation, opts database.PatchOptions) (database.Item, error) {
	if err := c.race(ctx, pk, id); err != nil {
		return database.Item{}, err
	}
	return c.Container.Patch(ctx, pk, id, ops, opts)
}

func (c *racingContainer) race(ctx context.Context, pk, id string) error {
	if c.store.raced.Swap(true) {
		return nil
	}
	cur, err := c.Container.Get(ctx, pk, id)
	if err != nil {
		return err
	}
	_, err = c.Container.Replace(ctx, pk, id, cur.Body, cur.ETag)
	return err
}

func TestRegisterRetriesALostRace(t *testing.T) {
	s := &racingStore{Store: memory.New()}
	seed(t, s, "constructed/fleet-stamp-1-auto-approved.json", "constructed/fleet-managementcluster-1-ready-schedulable.json")
	o := stamp1()
	o.SchedulingPolicy = api.Unschedulable
	require.NoError(t, Run(t.Context(), s, o, approvedAt))
	assert.True(t, s.raced.Load())
	mc, err := database.DecodeItem[api.ManagementClusterProperties](stored(t, s, api.ManagementClusterResourceID("1")))
	require.NoError(t, err)
	assert.Equal(t, api.Unschedulable, mc.Properties.Spec.SchedulingPolicy)
}

// The fields register tells docwrite it owns are its Write rows in
// docs/cosmos-data-flow.md; the rows may also name the fields of the documents it
// creates.
func TestOwnedFieldsAreTheDocumentedWrites(t *testing.T) {
	s := memory.New()
	require.NoError(t, Run(t.Context(), s, stamp1(), approvedAt))
	for _, tc := range []struct {
		docType string
		owned   docwrite.Fields
		created *api.ResourceID
	}{
		{"Stamp", stampOwns, api.StampResourceID("1")},
		{"ManagementCluster", managementClusterOwns, api.ManagementClusterResourceID("1")},
	} {
		t.Run(tc.docType, func(t *testing.T) {
			controllertest.AssertOwnsItsWriteRows(t, "../../docs/cosmos-data-flow.md", "register", tc.docType, tc.owned, stored(t, s, tc.created).Body)
		})
	}
}

// Register writes the scheduling policy only when it is given: a re-run without
// --scheduling-policy keeps what is stored (an SRE's cordon above all), and a new
// management cluster without one is refused before anything is written.
func TestRegisterKeepsThePolicyItIsNotGiven(t *testing.T) {
	withPolicy := func(policy string) Options {
		o := stamp1()
		o.SchedulingPolicy = policy
		return o
	}
	mcID := api.ManagementClusterResourceID("1")
	for _, tc := range []struct {
		name string
		// before registers first with this policy; "" registers nothing first.
		before     string
		run        Options
		wantErr    string
		wantPolicy string
		// wantWrite is whether the second run writes the MC.
		wantWrite bool
	}{
		{name: "omitted on a cordoned MC: kept", before: api.Unschedulable, run: withPolicy(""), wantPolicy: api.Unschedulable},
		{name: "omitted on a schedulable MC: kept", before: api.Schedulable, run: withPolicy(""), wantPolicy: api.Schedulable},
		{name: "given: written", before: api.Unschedulable, run: withPolicy(api.Schedulable), wantPolicy: api.Schedulable, wantWrite: true},
		{name: "given as stored: nothing written", before: api.Unschedulable, run: withPolicy(api.Unschedulable), wantPolicy: api.Unschedulable},
		{name: "omitted for a new MC: refused", run: withPolicy(""), wantErr: "--scheduling-policy is required for a new management cluster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := memory.New()
			var etag string
			if tc.before != "" {
				require.NoError(t, Run(t.Context(), s, withPolicy(tc.before), approvedAt))
				etag = stored(t, s, mcID).ETag
			}
			err := Run(t.Context(), s, tc.run, approvedAt.Add(time.Hour))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				for _, id := range []*api.ResourceID{api.StampResourceID("1"), mcID, api.SchedulingResourceID(mcID)} {
					pk, err := api.FleetPartitionKey(id)
					require.NoError(t, err)
					_, err = s.Container(api.FleetContainer).Get(t.Context(), pk, api.CosmosID(id.String()))
					assert.ErrorIs(t, err, database.ErrNotFound, "a refused register writes nothing: %s", id)
				}
				return
			}
			require.NoError(t, err)
			item := stored(t, s, mcID)
			mc, err := database.DecodeItem[api.ManagementClusterProperties](item)
			require.NoError(t, err)
			assert.Equal(t, tc.wantPolicy, mc.Properties.Spec.SchedulingPolicy)
			assert.Equal(t, tc.wantWrite, item.ETag != etag, "written")
		})
	}
}

// An ARO-HCP management cluster cordoned by the admin API keeps its cordon when
// register runs again without the flag, and the other fields register owns still change.
func TestRegisterWithoutPolicyKeepsAnAROHCPCordon(t *testing.T) {
	s := memory.New()
	seed(t, s, "constructed/fleet-stamp-3-approval-revoked.json", "constructed/fleet-managementcluster-3-cordoned-registration-checkfailed.json")
	before := stored(t, s, api.ManagementClusterResourceID("3"))
	o := stamp1()
	o.Stamp, o.AutoApprove, o.SchedulingPolicy = "3", false, ""
	o.MaestroGRPCTarget = "maestro-grpc.other.svc:8090"
	require.NoError(t, Run(t.Context(), s, o, approvedAt))

	mc, err := database.DecodeItem[api.ManagementClusterProperties](stored(t, s, api.ManagementClusterResourceID("3")))
	require.NoError(t, err)
	assert.Equal(t, api.Unschedulable, mc.Properties.Spec.SchedulingPolicy)
	assert.Equal(t, "maestro-grpc.other.svc:8090", mc.Properties.Status.MaestroGRPCTarget)
	assert.NotEqual(t, before.ETag, stored(t, s, api.ManagementClusterResourceID("3")).ETag, "the given fields were written")
}
