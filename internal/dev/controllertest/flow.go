package controllertest

// The backend's creation flow in tests, over any store and a fake Cluster Service: the
// documents other components would write (management clusters, scheduling documents,
// placement's SPC spec, ARO-HCP's desired version; clusters and subscriptions are in
// documents.go), provision shards registered in CS, and waits for what the backend
// writes. The backend's controller tests, its binary's emulator test and its
// metrics tests use them.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	csapi "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
)

// RegisterShard registers and activates provision shard n in CS and returns its bare ID.
func RegisterShard(t testing.TB, cs clusterservice.ProvisionShards, n int) string {
	t.Helper()
	shard, err := csapi.NewProvisionShard().
		Region(csapi.NewCloudRegion().ID("eastus")).
		CloudProvider(csapi.NewCloudProvider().ID("azure")).
		Topology("shared").
		AzureShard(csapi.NewAzureShard().
			AksManagementClusterResourceId(fmt.Sprintf("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/mc-rg/providers/Microsoft.ContainerService/managedClusters/mc-%d", n)).
			PublicDnsZoneResourceId("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/dns/providers/Microsoft.Network/dnszones/example.com").
			CxManagedIdentitiesKeyVaultUrl("https://mi.vault.azure.net/").
			CxSecretsKeyVaultUrl("https://secrets.vault.azure.net/").
			CxSecretsKeyVaultManagedIdentityClientId("11111111-1111-1111-1111-111111111111")).
		MaestroConfig(csapi.NewProvisionShardMaestroConfig().
			ConsumerName(fmt.Sprintf("hcp-underlay-mc-%d", n)).
			RestApiConfig(csapi.NewProvisionShardMaestroRestApiConfig().Url("http://maestro.maestro.svc:8000")).
			GrpcApiConfig(csapi.NewProvisionShardMaestroGrpcApiConfig().Url("maestro-grpc.maestro.svc:8090"))).
		Build()
	require.NoError(t, err)
	created, err := cs.CreateProvisionShard(t.Context(), shard)
	require.NoError(t, err)
	_, err = cs.ActivateProvisionShard(t.Context(), created.ID())
	require.NoError(t, err)
	return created.ID()
}

// CreateManagementCluster stores a ready, schedulable MC for a stamp, registered as the
// given provision shard (none when shardID is empty), as the fleet would.
func CreateManagementCluster(t testing.TB, fleet database.Container, stamp, shardID string) *api.ResourceID {
	t.Helper()
	rid := api.ManagementClusterResourceID(stamp)
	pk, err := api.FleetPartitionKey(rid)
	require.NoError(t, err)
	status := &api.ManagementClusterStatus{
		Conditions: []api.Condition{{Type: "Ready", Status: api.ConditionTrue, Reason: "AllRegistered", LastTransitionTime: time.Now().UTC().Truncate(time.Second)}},
	}
	if shardID != "" {
		href, err := clusterservice.ShardHREF(shardID)
		require.NoError(t, err)
		status.ClusterServiceProvisionShardID = href
	}
	_, err = database.Create(t.Context(), fleet, api.NewDocument(rid, pk, api.ManagementClusterProperties{
		LegacyResourceID: rid.String(),
		Spec:             &api.ManagementClusterSpec{SchedulingPolicy: api.Schedulable},
		Status:           status,
	}))
	require.NoError(t, err)
	return rid
}

// StoreCluster creates a cluster document and returns its resource ID.
func StoreCluster(t testing.TB, resources database.Container, c *api.Cluster) *api.ResourceID {
	t.Helper()
	_, err := database.Create(t.Context(), resources, c)
	require.NoError(t, err)
	rid, err := c.ParsedResourceID()
	require.NoError(t, err)
	return rid
}

// GetCluster reads a cluster from the store.
func GetCluster(t testing.TB, resources database.Container, rid *api.ResourceID) *api.Cluster {
	t.Helper()
	c, err := database.Get[api.ClusterProperties](t.Context(), resources, strings.ToLower(rid.SubscriptionID), rid.String())
	require.NoError(t, err)
	return c
}

// GetSPC reads a cluster's SPC from the store; nil when there is none.
func GetSPC(t testing.TB, resources database.Container, cluster *api.ResourceID) *api.ServiceProviderCluster {
	t.Helper()
	spc, err := database.Get[api.ServiceProviderClusterProperties](t.Context(), resources,
		strings.ToLower(cluster.SubscriptionID), api.ServiceProviderClusterID(cluster))
	if err != nil {
		require.ErrorIs(t, err, database.ErrNotFound)
		return nil
	}
	return spc
}

// WaitForCluster waits until the stored cluster satisfies cond and returns it.
func WaitForCluster(t testing.TB, resources database.Container, rid *api.ResourceID, timeout time.Duration, what string, cond func(api.ClusterServiceProviderProperties) bool) *api.Cluster {
	t.Helper()
	var got *api.Cluster
	require.Eventually(t, func() bool {
		got = GetCluster(t, resources, rid)
		return cond(got.Properties.ServiceProvider())
	}, timeout, Tick, "cluster %s: %s", rid, what)
	return got
}

// WaitForSPC waits until the cluster's stored SPC exists and satisfies cond.
func WaitForSPC(t testing.TB, resources database.Container, cluster *api.ResourceID, timeout time.Duration, what string, cond func(*api.ServiceProviderCluster) bool) *api.ServiceProviderCluster {
	t.Helper()
	var got *api.ServiceProviderCluster
	require.Eventually(t, func() bool {
		got = GetSPC(t, resources, cluster)
		return got != nil && cond(got)
	}, timeout, Tick, "SPC of %s: %s", cluster, what)
	return got
}

// Place plays placement, for tests of the creation flow without it: once the SPC exists
// it records the chosen MC in its spec with an etag-guarded replace, as placement does.
func Place(t testing.TB, resources database.Container, cluster, mc *api.ResourceID, timeout time.Duration) {
	t.Helper()
	spc := WaitForSPC(t, resources, cluster, timeout, "exists", func(*api.ServiceProviderCluster) bool { return true })
	if spc.Properties.Spec == nil {
		spc.Properties.Spec = &api.ServiceProviderClusterSpec{}
	}
	spc.Properties.Spec.ManagementClusterResourceID = mc.String()
	spc.Properties.Spec.ManagementClusterPlacementTime = time.Now().UTC().Truncate(time.Second)
	_, err := database.Replace(t.Context(), resources, spc)
	require.NoError(t, err)
}

// DesiredVersion is the control plane version ChooseVersion writes: a full X.Y.Z, as
// ARO-HCP's ControlPlaneDesiredVersion controller resolves it from the update service.
const DesiredVersion = "4.20.8"

// desiredVersionPath is the one SPC field ControlPlaneDesiredVersion writes.
const desiredVersionPath = "properties.spec.control_plane_version.desired_version"

// ChooseVersion plays ARO-HCP's ControlPlaneDesiredVersion controller, which runs beside
// hcpsched: once the cluster's SPC exists it writes DesiredVersion into
// spec.control_plane_version.desired_version and nothing else, with an etag-guarded
// replace redone from a fresh read when hcpsched's own SPC writes win the race.
func ChooseVersion(t testing.TB, resources database.Container, cluster *api.ResourceID, timeout time.Duration) {
	t.Helper()
	WaitForSPC(t, resources, cluster, timeout, "exists", func(*api.ServiceProviderCluster) bool { return true })
	pk, err := api.ResourcesPartitionKey(cluster)
	require.NoError(t, err)
	replaceStored(t, resources, pk, api.ServiceProviderClusterResourceID(cluster), Set(desiredVersionPath, DesiredVersion))
}

// PostedCluster is one cluster create the fake CS received, as logged: the fields the
// tests check by name, and the whole body for the rest.
type PostedCluster struct {
	Status  int             `json:"-"`
	Fault   string          `json:"-"`
	Body    json.RawMessage `json:"-"`
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Shard   string          `json:"provision_shard_id"`
	Version struct {
		ID string `json:"id"`
	} `json:"version"`
	Azure struct {
		SubscriptionID           string `json:"subscription_id"`
		ResourceGroupName        string `json:"resource_group_name"`
		ResourceName             string `json:"resource_name"`
		TenantID                 string `json:"tenant_id"`
		ManagedResourceGroupName string `json:"managed_resource_group_name"`
	} `json:"azure"`
}

// ClusterPosts returns the cluster creates in the fake CS's request log, oldest first.
func ClusterPosts(t testing.TB, cs *fakeclusterservice.Server) []PostedCluster {
	t.Helper()
	var out []PostedCluster
	for _, r := range cs.Requests() {
		if r.Method != http.MethodPost || r.Path != clusterservice.ClustersPath {
			continue
		}
		var p PostedCluster
		require.NoError(t, json.Unmarshal([]byte(r.Body), &p), "POST body %s", r.Body)
		p.Status, p.Fault, p.Body = r.Status, r.Fault, json.RawMessage(r.Body)
		out = append(out, p)
	}
	return out
}

// CreatedClusters are the cluster creates CS accepted.
func CreatedClusters(t testing.TB, cs *fakeclusterservice.Server) []PostedCluster {
	t.Helper()
	var out []PostedCluster
	for _, p := range ClusterPosts(t, cs) {
		if p.Status == http.StatusCreated {
			out = append(out, p)
		}
	}
	return out
}

// StoreScheduling writes an MC's scheduling document as the fleet keeps it: fresh
// capacity data, a swift-NIC ceiling and usage, and optional reservations.
func StoreScheduling(t testing.TB, fleet database.Container, mc *api.ResourceID, ceiling, usage int, pending ...string) {
	t.Helper()
	pk, err := api.FleetPartitionKey(mc)
	require.NoError(t, err)
	now := time.Now().UTC().Truncate(time.Second)
	_, err = database.Create(t.Context(), fleet, api.NewDocument(api.SchedulingResourceID(mc), pk, api.ManagementClusterSchedulingProperties{
		Status: SchedulingStatus(now, ceiling, usage, pending...),
	}))
	require.NoError(t, err)
}

// SchedulingStatus is a fresh, current scheduling status with a swift-NIC ceiling and usage.
func SchedulingStatus(at time.Time, ceiling, usage int, pending ...string) *api.SchedulingStatus {
	return &api.SchedulingStatus{
		Conditions: []api.Condition{
			{Type: "CapacityDataCurrent", Status: api.ConditionTrue, Reason: "DataCollected", LastTransitionTime: at},
			{Type: "ScalingDataCurrent", Status: api.ConditionTrue, Reason: "DataCollected", LastTransitionTime: at},
		},
		ObservedResources:       &api.ObservedResources{LastReportedAt: at, Usage: api.ResourceList{api.SwiftNIC: fmt.Sprint(usage)}},
		ScaleCeiling:            &api.ScaleCeiling{LastReportedAt: at, Capacity: api.ResourceList{api.SwiftNIC: fmt.Sprint(ceiling)}},
		PendingAssignedClusters: pending,
	}
}

// StoreSPC stores a cluster's ServiceProviderCluster as it is once ARO-HCP's
// ControlPlaneDesiredVersion controller has chosen the version; edits shape it first.
func StoreSPC(t testing.TB, resources database.Container, cluster *api.ResourceID, edits ...func(*api.ServiceProviderCluster)) {
	t.Helper()
	pk, err := api.ResourcesPartitionKey(cluster)
	require.NoError(t, err)
	spc := api.NewDocument(api.ServiceProviderClusterResourceID(cluster), pk, api.ServiceProviderClusterProperties{
		Spec:   &api.ServiceProviderClusterSpec{ControlPlaneVersion: &api.ControlPlaneVersionSpec{DesiredVersion: DesiredVersion}},
		Status: &api.ServiceProviderClusterStatus{},
	})
	spc.ResourceType = api.ServiceProviderClusterResourceType
	for _, e := range edits {
		e(spc)
	}
	_, err = database.Create(t.Context(), resources, spc)
	require.NoError(t, err)
}
