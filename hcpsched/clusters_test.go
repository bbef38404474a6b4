package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// clustersStamp2 is `clusters --management-cluster 2` in the scene, as docs/operations.md
// shows it.
const clustersStamp2 = `management cluster: stamp 2 (/providers/microsoft.redhatopenshift/stamps/2/managementclusters/default)

CLUSTER            KIND                  INTENT  OBSERVED  STATE             RESERVED-HERE  CLUSTER-SERVICE-ID                                               PROVISIONING
rg/mismatch        SWIFT single-replica  1       2         MISMATCH          no             /api/aro_hcp/v1alpha1/clusters/mismatch000000000000000000000000  Provisioning
rg/placed          SWIFT HA              2       2         placed            no             /api/aro_hcp/v1alpha1/clusters/placed00000000000000000000000000  Succeeded
rg/reserved-twice  SWIFT HA              2       -         not yet observed  yes            -                                                                Accepted

3 clusters: 1 placed, 1 not yet observed, 1 MISMATCH
1 MISMATCH: Cluster Service put it elsewhere than placement's intent (the pin was not honoured); see hcpsched explain CLUSTER

other reservations: 2 reservations for clusters neither intended nor observed here (PendingCleanup's work)
CLUSTER      INTENT  OBSERVED  PENDING-CLEANUP
rg/inflight  -       -         keeps it: placement in flight
rg/gone      -       -         releases it: ServiceProviderCluster confirmed gone
`

func TestClustersEmulator(t *testing.T) {
	s := newScene(t)
	for _, tc := range []struct {
		name string
		mc   string
		want string
	}{
		{name: "by stamp", mc: "2", want: clustersStamp2},
		// The MC's resource ID, in any casing, names it as well.
		{name: "by resource ID", mc: "/providers/Microsoft.RedHatOpenShift/stamps/2/managementClusters/DEFAULT", want: clustersStamp2},
		{
			// The mismatch is listed on both MCs; stamp 1's reservation for a cluster
			// placed on stamp 2 is PendingCleanup's to release.
			name: "intended here, observed elsewhere", mc: "1",
			want: `management cluster: stamp 1 (/providers/microsoft.redhatopenshift/stamps/1/managementclusters/default)

CLUSTER      KIND                  INTENT  OBSERVED  STATE     RESERVED-HERE  CLUSTER-SERVICE-ID                                               PROVISIONING
rg/mismatch  SWIFT single-replica  1       2         MISMATCH  no             /api/aro_hcp/v1alpha1/clusters/mismatch000000000000000000000000  Provisioning

1 cluster: 1 MISMATCH
1 MISMATCH: Cluster Service put it elsewhere than placement's intent (the pin was not honoured); see hcpsched explain CLUSTER

other reservations: 1 reservation for clusters neither intended nor observed here (PendingCleanup's work)
CLUSTER            INTENT  OBSERVED  PENDING-CLEANUP
rg/reserved-twice  2       -         releases it: placed on another management cluster: stamp 2
`,
		},
		{
			name: "empty", mc: "10",
			want: `management cluster: stamp 10 (/providers/microsoft.redhatopenshift/stamps/10/managementclusters/default)

no cluster is intended for or observed on it

other reservations: none
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := s.cli(t, "clusters", "--management-cluster", tc.mc)
			require.Equal(t, exitOK, code, errOut)
			assert.Equal(t, tc.want, out)
			assert.Empty(t, errOut)
		})
	}

	wantRows := []clustersRow{
		{ResourceID: s.mismatch.String(), Kind: "SWIFT single-replica", Intent: s.stamp1.String(), Observed: s.stamp2.String(), State: stateMismatch,
			ClusterServiceID: csHREF("mismatch"), ProvisioningState: "Provisioning"},
		{ResourceID: s.placed.String(), Kind: "SWIFT HA", Intent: s.stamp2.String(), Observed: s.stamp2.String(), State: statePlaced,
			ClusterServiceID: csHREF("placed"), ProvisioningState: api.ProvisioningStateSucceeded},
		{ResourceID: s.reservedTwice.String(), Kind: "SWIFT HA", Intent: s.stamp2.String(), State: stateNotYetObserved, ReservedHere: true,
			PendingClusterServiceID: csHREF("reservedtwice"), ProvisioningState: "Accepted"},
	}
	wantOthers := []clustersReservation{
		{Cluster: s.inflight.Key(), Kept: true, Why: "placement in flight"},
		{Cluster: s.gone.Key(), Kept: false, Why: "ServiceProviderCluster confirmed gone"},
	}

	t.Run("json", func(t *testing.T) {
		out, errOut, code := s.cli(t, "-o", "json", "clusters", "--management-cluster=2")
		require.Equal(t, exitOK, code, errOut)
		var got clustersReport
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		assert.Equal(t, clustersReport{ManagementCluster: s.stamp2.String(), Stamp: "2", Clusters: wantRows, Mismatches: 1, OtherReservations: wantOthers}, got)
	})

	t.Run("yaml", func(t *testing.T) {
		out, errOut, code := s.cli(t, "clusters", "--management-cluster", "2", "--output", "yaml")
		require.Equal(t, exitOK, code, errOut)
		assert.Contains(t, out, "state: mismatch\n")
		var got clustersReport
		require.NoError(t, yaml.Unmarshal([]byte(out), &got))
		assert.Equal(t, clustersReport{ManagementCluster: s.stamp2.String(), Stamp: "2", Clusters: wantRows, Mismatches: 1, OtherReservations: wantOthers}, got)
	})

	for _, tc := range []struct{ name, mc, wantErr string }{
		{name: "unknown stamp", mc: "7", wantErr: `hcpsched: clusters: management cluster "7": not found; known stamps: 1, 2, 3, 10` + "\n"},
		{
			name: "unknown resource ID", mc: api.ManagementClusterResourceID("7").String(),
			wantErr: `hcpsched: clusters: management cluster "/providers/microsoft.redhatopenshift/stamps/7/managementclusters/default": not found; known stamps: 1, 2, 3, 10` + "\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := s.cli(t, "clusters", "--management-cluster", tc.mc)
			assert.Equal(t, exitNotFound, code)
			assert.Equal(t, tc.wantErr, errOut)
			assert.Empty(t, out)
		})
	}
}

// An MC whose cluster is observed there before any intent (Cluster Service had it
// first; ClusterServiceAdoption has not written the intent yet), in a region with one MC.
func TestClustersObservedWithoutIntentEmulator(t *testing.T) {
	r := newTestRegion(t)
	mc := r.mc(t, "1", 32, 3)
	c := r.cluster(t, "adopted", frontend.Kind{Swift: true}, withProvisioningState(api.ProvisioningStateSucceeded), inClusterService("adopted"))
	r.spc(t, c, observedOn(mc))

	out, errOut, code := r.cli(t, "clusters", "--management-cluster", "1")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `management cluster: stamp 1 (/providers/microsoft.redhatopenshift/stamps/1/managementclusters/default)

CLUSTER     KIND      INTENT  OBSERVED  STATE                    RESERVED-HERE  CLUSTER-SERVICE-ID                                               PROVISIONING
rg/adopted  SWIFT HA  -       1         observed, no intent yet  no             /api/aro_hcp/v1alpha1/clusters/adopted0000000000000000000000000  Succeeded

1 cluster: 1 observed, no intent yet

other reservations: none
`, out)
}

// Arguments that can name no MC are usage errors, found before anything is read: the
// endpoint does not exist.
func TestClustersArguments(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "no management cluster", args: []string{"clusters"}, wantErr: "--management-cluster is required"},
		{name: "positional", args: []string{"clusters", "1"}, wantErr: "usage: hcpsched clusters --management-cluster MC"},
		{name: "malformed resource ID", args: []string{"clusters", "--management-cluster", "/providers//stamps/1"}, wantErr: "empty path segment"},
		{name: "a stamp's resource ID", args: []string{"clusters", "--management-cluster", api.StampResourceID("1").String()}, wantErr: "is a microsoft.redhatopenshift/stamps, not a management cluster"},
		{name: "a cluster's resource ID", args: []string{"clusters", "--management-cluster", clusterRID("c").String()}, wantErr: "not a management cluster"},
		{name: "a path", args: []string{"clusters", "--management-cluster", "stamps/1"}, wantErr: `management cluster "stamps/1": must be a stamp identifier`},
	} {
		t.Run(tc.name, func(t *testing.T) { assertUsageError(t, tc.args, tc.wantErr) })
	}
}

func FuzzParseManagementClusterArg(f *testing.F) {
	for _, seed := range []string{"1", "", " ", "stamps/1", api.ManagementClusterResourceID("1").String(), api.StampResourceID("1").String(), "/", "//"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		rid, err := parseManagementClusterArg(arg)
		if err != nil {
			var usage usageError
			require.ErrorAs(t, err, &usage, "every refusal is a usage error")
			return
		}
		assert.True(t, strings.EqualFold(rid.ResourceType(), api.ManagementClusterResourceType), rid.ResourceType())
		if !strings.HasPrefix(arg, "/") {
			assert.NotContains(t, arg, "/", "a stamp identifier is one path segment")
			assert.True(t, api.ResourceIDsEqual(rid.String(), api.ManagementClusterResourceID(arg).String()), "a stamp names its MC")
		}
	})
}

// reservationFate says what PendingCleanup does with a reservation, by its rules in its
// order.
func TestReservationFate(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	rid := clusterRID("c")
	here, there := api.ManagementClusterResourceID("1"), api.ManagementClusterResourceID("2")
	cluster := func(edits ...func(*api.ClusterServiceProviderProperties)) *api.Cluster {
		return frontendCluster(t, rid, now, edits...)
	}
	spc := func(edits ...func(*api.ServiceProviderCluster)) *api.ServiceProviderCluster {
		return emptySPC(rid, edits...)
	}
	legacy := "/api/clusters_mgmt/v1/clusters/1243e9e9-d150-4ef1-9735-2bbc3cabc7d0"
	for _, tc := range []struct {
		name     string
		cluster  *api.Cluster
		spc      *api.ServiceProviderCluster
		wantKept bool
		wantWhy  string
	}{
		{name: "deleting, though placed here", cluster: cluster(withProvisioningState(api.ProvisioningStateDeleting)), spc: spc(placedOn(here, now)), wantWhy: "cluster deleting or ended"},
		{name: "failed", cluster: cluster(withProvisioningState(api.ProvisioningStateFailed)), spc: spc(), wantWhy: "cluster deleting or ended"},
		{name: "no SPC", cluster: cluster(), wantWhy: "ServiceProviderCluster confirmed gone"},
		{name: "observed here, intended there", cluster: cluster(), spc: spc(placedOn(there, now), observedOn(here)), wantKept: true, wantWhy: "placed here"},
		{name: "observed there, intended here", cluster: cluster(), spc: spc(placedOn(here, now), observedOn(there)), wantWhy: "placed on another management cluster: stamp 2"},
		{name: "placed here", cluster: cluster(), spc: spc(placedOn(here, now)), wantKept: true, wantWhy: "placed here"},
		{name: "placed there", cluster: cluster(), spc: spc(placedOn(there, now)), wantWhy: "placed on another management cluster: stamp 2"},
		{name: "unmappable", cluster: cluster(func(p *api.ClusterServiceProviderProperties) { p.ClusterServiceID = legacy }),
			spc:     spc(withCapacityCondition(api.ConditionFalse, placement.ConditionReasonClusterServiceIDUnmappable, placement.UnmappableMessage(legacy), now)),
			wantWhy: "cluster has a Cluster Service ID that does not resolve; hcpsched will not place it"},
		{name: "cluster not cached", spc: spc(), wantKept: true, wantWhy: "cluster not in cache"},
		{name: "in flight", cluster: cluster(), spc: spc(), wantKept: true, wantWhy: "placement in flight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept, why := reservationFate(tc.cluster, tc.spc, here.String())
			assert.Equal(t, tc.wantKept, kept)
			assert.Equal(t, tc.wantWhy, why)
		})
	}
}
