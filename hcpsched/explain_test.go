package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// testSubscription holds every test cluster, in resource group testGroup.
const (
	testSubscription = "00000000-0000-0000-0000-000000000001"
	testGroup        = "rg"
)

func clusterRID(name string) *api.ResourceID {
	return api.MustParseResourceID(fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/%s/%s", testSubscription, testGroup, api.ClusterResourceType, name))
}

// csHREF is a Cluster Service cluster reference in Cluster Service's ID shape: 32
// lowercase letters and digits.
func csHREF(name string) string {
	id := (name + strings.Repeat("0", 32))[:32]
	return clusterservice.ClustersPath + "/" + id
}

// cluster stores the document the frontend writes for a PUT of cluster name of kind k,
// shaped by edits to the fields ARO-HCP's backend writes later (provisioning state,
// Cluster Service IDs).
func (r *testRegion) cluster(t *testing.T, name string, k frontend.Kind, edits ...func(*api.ClusterServiceProviderProperties)) *api.ResourceID {
	t.Helper()
	c, err := frontend.ClusterOfKindAt(clusterRID(name), "mrg-"+name, k, r.reportedAt.Add(-time.Hour))
	require.NoError(t, err)
	for _, e := range edits {
		e(c.Properties.ServiceProviderProperties)
	}
	return controllertest.StoreCluster(t, r.resources(), c)
}

func withProvisioningState(s string) func(*api.ClusterServiceProviderProperties) {
	return func(p *api.ClusterServiceProviderProperties) { p.ProvisioningState = s }
}

// inClusterService: Cluster Service has the cluster (ClusterServiceCreate recorded its
// ID and cleared the pending one).
func inClusterService(name string) func(*api.ClusterServiceProviderProperties) {
	return func(p *api.ClusterServiceProviderProperties) { p.ClusterServiceID = csHREF(name) }
}

// withPendingID: PendingClusterServiceIDAssign pre-assigned its ID; no create yet.
func withPendingID(name string) func(*api.ClusterServiceProviderProperties) {
	return func(p *api.ClusterServiceProviderProperties) { p.PendingClusterServiceID = csHREF(name) }
}

// spc stores the cluster's ServiceProviderCluster as CreateServiceProviderCluster
// creates it once ARO-HCP's version controller chose the version, shaped by edits to
// the fields placement and placement sync write.
func (r *testRegion) spc(t *testing.T, cluster *api.ResourceID, edits ...func(*api.ServiceProviderCluster)) {
	t.Helper()
	controllertest.StoreSPC(t, r.resources(), cluster, edits...)
}

// placedOn is placement's record: the intent, its time and the condition, in one write.
func placedOn(mc *api.ResourceID, at time.Time) func(*api.ServiceProviderCluster) {
	return func(s *api.ServiceProviderCluster) {
		s.Properties.Spec.ManagementClusterResourceID = strings.ToLower(mc.String())
		s.Properties.Spec.ManagementClusterPlacementTime = at
		withCapacityCondition(api.ConditionTrue, placement.ConditionReasonAvailable, "placed on stamp "+stampOf(mc.String()), at)(s)
	}
}

// observedOn is placement sync's record of where Cluster Service put the cluster.
func observedOn(mc *api.ResourceID) func(*api.ServiceProviderCluster) {
	return func(s *api.ServiceProviderCluster) { s.Properties.Status.ManagementClusterResourceID = mc.String() }
}

// withCapacityCondition sets the CapacityAvailable condition as placement writes it.
func withCapacityCondition(status, reason, message string, at time.Time) func(*api.ServiceProviderCluster) {
	return func(s *api.ServiceProviderCluster) {
		if s.Properties.Status.Placement == nil {
			s.Properties.Status.Placement = &api.PlacementStatus{}
		}
		api.SetCondition(&s.Properties.Status.Placement.Conditions, api.Condition{
			Type: placement.ConditionCapacityAvailable, Status: status, Reason: reason, Message: message,
		}, at)
	}
}

// storeUnschedulable sets a stored MC's scheduling policy to Unschedulable.
func (r *testRegion) storeUnschedulable(t *testing.T, mc *api.ResourceID) {
	t.Helper()
	pk, err := api.FleetPartitionKey(mc)
	require.NoError(t, err)
	doc, err := database.Get[api.ManagementClusterProperties](t.Context(), r.fleet(), pk, mc.String())
	require.NoError(t, err)
	doc.Properties.Spec.SchedulingPolicy = api.Unschedulable
	_, err = database.Replace(t.Context(), r.fleet(), doc)
	require.NoError(t, err)
}

// scene is a region with every case the explain and clusters verbs tell apart:
//
//   - stamp 1: 32 swift NICs, 26 used, a reservation for reserved-twice (3): 3 left;
//   - stamp 2: 64, 20 used, reservations for reserved-twice (3), inflight (0, non-SWIFT)
//     and gone (no such cluster: charged 3): 38 left;
//   - stamp 3: 32, 31 used: 1 left, too little for a SWIFT HA cluster;
//   - stamp 10: cordoned.
//
// Clusters: placed (on stamp 2, observed there), mismatch (intended on stamp 1,
// observed on stamp 2), reserved-twice (placed on stamp 2 and reserved on 1 and 2),
// inflight (reserved on stamp 2, intent not recorded yet) and fresh (no intent).
type scene struct {
	*testRegion
	stamp1, stamp2, stamp3, stamp10               *api.ResourceID
	placed, mismatch, reservedTwice, inflight     *api.ResourceID
	fresh, gone                                   *api.ResourceID
	placedAt, mismatchPlacedAt, reservedTwiceTime time.Time
}

func newScene(t *testing.T) *scene {
	t.Helper()
	s := &scene{testRegion: newTestRegion(t)}
	s.placed, s.mismatch, s.reservedTwice = clusterRID("placed"), clusterRID("mismatch"), clusterRID("reserved-twice")
	s.inflight, s.fresh, s.gone = clusterRID("inflight"), clusterRID("fresh"), clusterRID("gone")
	s.placedAt = s.reportedAt.Add(-40 * time.Minute)
	s.mismatchPlacedAt = s.reportedAt.Add(-30 * time.Minute)
	s.reservedTwiceTime = s.reportedAt.Add(-2 * time.Minute)

	s.stamp1 = s.mc(t, "1", 32, 26, s.reservedTwice.String())
	s.stamp2 = s.mc(t, "2", 64, 20, s.reservedTwice.Key(), s.inflight.Key(), s.gone.Key())
	s.stamp3 = s.mc(t, "3", 32, 31)
	s.stamp10 = s.mc(t, "10", 64, 0)
	s.storeUnschedulable(t, s.stamp10)

	s.cluster(t, "placed", frontend.Kind{Swift: true}, withProvisioningState(api.ProvisioningStateSucceeded), inClusterService("placed"))
	s.spc(t, s.placed, placedOn(s.stamp2, s.placedAt), observedOn(s.stamp2))

	s.cluster(t, "mismatch", frontend.Kind{Swift: true, SingleReplica: true}, withProvisioningState("Provisioning"), inClusterService("mismatch"))
	s.spc(t, s.mismatch, placedOn(s.stamp1, s.mismatchPlacedAt), observedOn(s.stamp2))

	s.cluster(t, "reserved-twice", frontend.Kind{Swift: true}, withPendingID("reservedtwice"))
	s.spc(t, s.reservedTwice, placedOn(s.stamp2, s.reservedTwiceTime))

	s.cluster(t, "inflight", frontend.Kind{}, withPendingID("inflight"))
	s.spc(t, s.inflight)

	s.cluster(t, "fresh", frontend.Kind{Swift: true})
	s.spc(t, s.fresh)
	return s
}

// rfc3339 formats a time as the tables do.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func TestExplainEmulator(t *testing.T) {
	s := newScene(t)
	placedWant := `cluster:             /subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/placed
kind:                SWIFT HA (aro.openshift.io/swift-nic=3 per control plane)
provisioning state:  Succeeded
deleting:            no

ServiceProviderCluster:
  intent:             stamp 2 (/providers/microsoft.redhatopenshift/stamps/2/managementclusters/default), placed ` + rfc3339(s.placedAt) + `
  observed:           stamp 2 (/providers/microsoft.redhatopenshift/stamps/2/managementclusters/default)
  CapacityAvailable:  True, reason Available, lastTransitionTime ` + rfc3339(s.placedAt) + `
  message:            placed on stamp 2

reservations:             none
pendingClusterServiceID:  -
clusterServiceID:         /api/aro_hcp/v1alpha1/clusters/placed00000000000000000000000000

backend now: placed on stamp 2; placement does not move it

engine now (what-if: the backend does not act on it): would choose stamp 2
STAMP  AVAILABLE(aro.openshift.io/swift-nic)  RESERVATIONS  VERDICT
2      38                                     3             chosen, score 32
1      3                                      1             feasible, score -1
3      1                                      0             InsufficientCapacity: aro.openshift.io/swift-nic 1 available, 3 needed
10     64                                     0             Unschedulable: cordoned
`
	for _, tc := range []struct {
		name string
		arg  string
		want string
	}{
		{name: "placed", arg: s.placed.String(), want: placedWant},
		// Resource IDs compare case-insensitively; the output keeps the stored casing.
		{name: "placed, ID in capitals", arg: strings.ToUpper(s.placed.String()), want: placedWant},
		{
			// The single-replica cluster costs 1 NIC, so stamp 3's last one fits it.
			name: "mismatch", arg: s.mismatch.String(),
			want: `cluster:             /subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/mismatch
kind:                SWIFT single-replica (aro.openshift.io/swift-nic=1 per control plane)
provisioning state:  Provisioning
deleting:            no

ServiceProviderCluster:
  intent:             stamp 1 (/providers/microsoft.redhatopenshift/stamps/1/managementclusters/default), placed ` + rfc3339(s.mismatchPlacedAt) + `
  observed:           stamp 2 (/providers/microsoft.redhatopenshift/stamps/2/managementclusters/default)  MISMATCH: Cluster Service put it elsewhere than placement chose
  CapacityAvailable:  True, reason Available, lastTransitionTime ` + rfc3339(s.mismatchPlacedAt) + `
  message:            placed on stamp 1

reservations:             none
pendingClusterServiceID:  -
clusterServiceID:         /api/aro_hcp/v1alpha1/clusters/mismatch000000000000000000000000

backend now: placed on stamp 1; placement does not move it

engine now (what-if: the backend does not act on it): would choose stamp 2
STAMP  AVAILABLE(aro.openshift.io/swift-nic)  RESERVATIONS  VERDICT
2      38                                     3             chosen, score 34
1      3                                      1             feasible, score 1
3      1                                      0             feasible, score 0
10     64                                     0             Unschedulable: cordoned
`,
		},
		{
			// Reserved on two MCs: PendingCleanup releases the one its intent does not
			// name; the engine, asked now, would reuse the lowest-ID one.
			name: "reservation", arg: s.reservedTwice.String(),
			want: `cluster:             /subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/reserved-twice
kind:                SWIFT HA (aro.openshift.io/swift-nic=3 per control plane)
provisioning state:  Accepted
deleting:            no

ServiceProviderCluster:
  intent:             stamp 2 (/providers/microsoft.redhatopenshift/stamps/2/managementclusters/default), placed ` + rfc3339(s.reservedTwiceTime) + `
  observed:           not yet observed
  CapacityAvailable:  True, reason Available, lastTransitionTime ` + rfc3339(s.reservedTwiceTime) + `
  message:            placed on stamp 2

reservations:             stamp 1 (PendingCleanup releases it: placed on another management cluster: stamp 2)
                          stamp 2 (PendingCleanup keeps it: placed here)
                          WARNING: 2 management clusters hold a reservation for this cluster; each holds its capacity until released
pendingClusterServiceID:  /api/aro_hcp/v1alpha1/clusters/reservedtwice0000000000000000000
clusterServiceID:         -

backend now: placed on stamp 2; placement does not move it

engine now (what-if: the backend does not act on it): would choose stamp 1, reusing its reservation there
STAMP  AVAILABLE(aro.openshift.io/swift-nic)  RESERVATIONS               VERDICT
1      3                                      1 (one is this cluster's)  chosen, score 3
2      38                                     3 (one is this cluster's)  feasible, score 36
3      1                                      0                          InsufficientCapacity: aro.openshift.io/swift-nic 1 available, 3 needed
10     64                                     0                          Unschedulable: cordoned
`,
		},
		{
			// Crashed between reserving and recording: the next attempt reuses it.
			name: "in flight", arg: s.inflight.String(),
			want: `cluster:             /subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/inflight
kind:                non-SWIFT HA (aro.openshift.io/swift-nic=0 per control plane)
provisioning state:  Accepted
deleting:            no

ServiceProviderCluster:
  intent:             none (not placed)
  observed:           not yet observed
  CapacityAvailable:  not set

reservations:             stamp 2 (PendingCleanup keeps it: placement in flight)
pendingClusterServiceID:  /api/aro_hcp/v1alpha1/clusters/inflight000000000000000000000000
clusterServiceID:         -

backend now: place on stamp 2, reusing the reservation it holds there, then record the intent

engine now: would choose stamp 2, reusing its reservation there
STAMP  AVAILABLE(aro.openshift.io/swift-nic)  RESERVATIONS               VERDICT
2      38                                     3 (one is this cluster's)  chosen, score 36
1      3                                      1                          feasible, score 2
3      1                                      0                          feasible, score 1
10     64                                     0                          Unschedulable: cordoned
`,
		},
		{
			name: "not placed yet", arg: s.fresh.String(),
			want: `cluster:             /subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/fresh
kind:                SWIFT HA (aro.openshift.io/swift-nic=3 per control plane)
provisioning state:  Accepted
deleting:            no

ServiceProviderCluster:
  intent:             none (not placed)
  observed:           not yet observed
  CapacityAvailable:  not set

reservations:             none
pendingClusterServiceID:  -
clusterServiceID:         -

backend now: place on stamp 2: reserve there, then record the intent

engine now: would choose stamp 2
STAMP  AVAILABLE(aro.openshift.io/swift-nic)  RESERVATIONS  VERDICT
2      38                                     3             chosen, score 32
1      3                                      1             feasible, score -1
3      1                                      0             InsufficientCapacity: aro.openshift.io/swift-nic 1 available, 3 needed
10     64                                     0             Unschedulable: cordoned
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := s.cli(t, "explain", tc.arg)
			require.Equal(t, exitOK, code, errOut)
			assert.Equal(t, tc.want, out)
			assert.Empty(t, errOut)
		})
	}

	t.Run("json", func(t *testing.T) {
		out, errOut, code := s.cli(t, "explain", s.reservedTwice.String(), "-o", "json")
		require.Equal(t, exitOK, code, errOut)
		var got explainReport
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		assert.Equal(t, s.reservedTwice.String(), got.ResourceID)
		assert.Equal(t, "SWIFT HA", got.Kind)
		assert.Equal(t, []string{api.SwiftNIC}, got.Resources)
		assert.Equal(t, []string{"3"}, got.Cost)
		require.NotNil(t, got.ServiceProviderCluster)
		assert.Equal(t, s.stamp2.String(), got.ServiceProviderCluster.Intent)
		require.NotNil(t, got.ServiceProviderCluster.PlacementTime)
		assert.True(t, s.reservedTwiceTime.Equal(*got.ServiceProviderCluster.PlacementTime))
		assert.Empty(t, got.ServiceProviderCluster.Observed)
		assert.Equal(t, []explainReservation{
			{ManagementCluster: s.stamp1.String(), Stamp: "1", Kept: false, Why: "placed on another management cluster: stamp 2"},
			{ManagementCluster: s.stamp2.String(), Stamp: "2", Kept: true, Why: "placed here"},
		}, got.Reservations)
		assert.Equal(t, csHREF("reservedtwice"), got.PendingClusterServiceID)
		assert.Empty(t, got.ClusterServiceID)
		assert.Equal(t, actionPlaced, got.Backend.Action)
		assert.True(t, got.Decision.WhatIf)
		assert.Equal(t, string(placement.OutcomePlaced), got.Decision.Outcome)
		assert.Equal(t, s.stamp1.String(), got.Decision.Chosen)
		assert.True(t, got.Decision.Reused)
		var order []string
		for _, v := range got.Decision.Verdicts {
			order = append(order, v.Stamp+":"+v.Verdict)
		}
		assert.Equal(t, []string{"1:chosen", "2:feasible", "3:rejected", "10:rejected"}, order)
		require.NotNil(t, got.Decision.Verdicts[1].Score)
		assert.Equal(t, 36.0, *got.Decision.Verdicts[1].Score)
		assert.Equal(t, explainVerdict{
			ResourceID: s.stamp3.String(), Stamp: "3", Verdict: verdictRejected,
			Reason: string(placement.ReasonInsufficientCapacity), Detail: "aro.openshift.io/swift-nic 1 available, 3 needed",
			Available: []string{"1"}, Reservations: 0,
		}, got.Decision.Verdicts[2])
	})

	t.Run("mismatch json", func(t *testing.T) {
		out, errOut, code := s.cli(t, "explain", s.mismatch.String(), "--output=json")
		require.Equal(t, exitOK, code, errOut)
		var got explainReport
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		require.NotNil(t, got.ServiceProviderCluster)
		assert.True(t, got.ServiceProviderCluster.Mismatch)
		assert.Equal(t, s.stamp1.String(), got.ServiceProviderCluster.Intent)
		assert.Equal(t, s.stamp2.String(), got.ServiceProviderCluster.Observed)
	})

	t.Run("unknown cluster", func(t *testing.T) {
		out, errOut, code := s.cli(t, "explain", s.gone.String())
		assert.Equal(t, exitNotFound, code)
		assert.Empty(t, out)
		assert.Equal(t, "hcpsched: explain: cluster "+s.gone.String()+": not found (the region has 5 clusters)\n", errOut)
	})
}

func TestExplainFitsNowhereEmulator(t *testing.T) {
	r := newTestRegion(t)
	r.mc(t, "1", 32, 30)
	r.storeUnschedulable(t, r.mc(t, "2", 64, 0))
	waiting := r.cluster(t, "waiting", frontend.Kind{Swift: true})
	// The condition placement wrote at its last attempt, when stamp 1 had one NIC less:
	// explain shows it as stored, beside what the engine says now.
	decidedAt := r.reportedAt.Add(-5 * time.Minute)
	stored := "0 of 2 management clusters fit: stamp 1: InsufficientCapacity (aro.openshift.io/swift-nic 1 available, 3 needed); stamp 2: Unschedulable (cordoned)"
	r.spc(t, waiting, withCapacityCondition(api.ConditionFalse, placement.ConditionReasonInsufficientCapacity, stored, decidedAt))
	noSPC := r.cluster(t, "new", frontend.Kind{Swift: true})

	now := "0 of 2 management clusters fit: stamp 1: InsufficientCapacity (aro.openshift.io/swift-nic 2 available, 3 needed); stamp 2: Unschedulable (cordoned)"
	out, errOut, code := r.cli(t, "explain", waiting.String())
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `cluster:             /subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/waiting
kind:                SWIFT HA (aro.openshift.io/swift-nic=3 per control plane)
provisioning state:  Accepted
deleting:            no

ServiceProviderCluster:
  intent:             none (not placed)
  observed:           not yet observed
  CapacityAvailable:  False, reason InsufficientCapacity, lastTransitionTime `+rfc3339(decidedAt)+`
  message:            `+stored+`

reservations:             none
pendingClusterServiceID:  -
clusterServiceID:         -

backend now: fits nowhere: `+now+`; it waits until a management cluster changes so that it fits

engine now: fits nowhere (capacity_exhausted)
STAMP  AVAILABLE(aro.openshift.io/swift-nic)  RESERVATIONS  VERDICT
1      2                                      0             InsufficientCapacity: aro.openshift.io/swift-nic 2 available, 3 needed
2      64                                     0             Unschedulable: cordoned
`, out)

	out, errOut, code = r.cli(t, "explain", waiting.String(), "-o", "json")
	require.Equal(t, exitOK, code, errOut)
	var got explainReport
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.NotNil(t, got.ServiceProviderCluster)
	require.NotNil(t, got.ServiceProviderCluster.CapacityAvailable)
	cond := *got.ServiceProviderCluster.CapacityAvailable
	assert.Equal(t, api.ConditionFalse, cond.Status)
	assert.Equal(t, placement.ConditionReasonInsufficientCapacity, cond.Reason)
	assert.Equal(t, stored, cond.Message)
	assert.True(t, decidedAt.Equal(cond.LastTransitionTime))
	assert.Empty(t, got.ServiceProviderCluster.Intent)
	assert.Equal(t, explainBackend{Action: actionWait, Summary: "fits nowhere: " + now + "; it waits until a management cluster changes so that it fits"}, got.Backend)
	assert.False(t, got.Decision.WhatIf)
	assert.Equal(t, string(placement.OutcomeCapacityExhausted), got.Decision.Outcome)
	assert.Empty(t, got.Decision.Chosen)
	assert.Equal(t, now, got.Decision.Message)

	out, errOut, code = r.cli(t, "explain", noSPC.String())
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `cluster:             /subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/new
kind:                SWIFT HA (aro.openshift.io/swift-nic=3 per control plane)
provisioning state:  Accepted
deleting:            no

ServiceProviderCluster: none yet

reservations:             none
pendingClusterServiceID:  -
clusterServiceID:         -

backend now: waiting for its ServiceProviderCluster (CreateServiceProviderCluster creates it); placement starts once it exists

engine now (what-if: the backend does not act on it): fits nowhere (capacity_exhausted)
STAMP  AVAILABLE(aro.openshift.io/swift-nic)  RESERVATIONS  VERDICT
1      2                                      0             InsufficientCapacity: aro.openshift.io/swift-nic 2 available, 3 needed
2      64                                     0             Unschedulable: cordoned
`, out)
}

// Arguments that name no cluster are usage errors, found before anything is read: the
// endpoint does not exist.
func TestExplainArguments(t *testing.T) {
	cluster := clusterRID("c").String()
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "no cluster", args: []string{"explain"}, wantErr: "usage: hcpsched explain CLUSTER"},
		{name: "two clusters", args: []string{"explain", cluster, cluster}, wantErr: "usage: hcpsched explain CLUSTER"},
		{name: "not a resource ID", args: []string{"explain", "my-cluster"}, wantErr: `CLUSTER must be a cluster's ARM resource ID, /subscriptions/{subscription}/resourceGroups/{group}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/{name}: invalid resource ID "my-cluster": must start with '/'`},
		{name: "malformed", args: []string{"explain", "/subscriptions//resourceGroups/rg"}, wantErr: "empty path segment"},
		{name: "a subscription", args: []string{"explain", "/subscriptions/" + testSubscription}, wantErr: `is a Microsoft.Resources/subscriptions, not a cluster`},
		{name: "a management cluster", args: []string{"explain", api.ManagementClusterResourceID("1").String()}, wantErr: "is a microsoft.redhatopenshift/stamps/managementclusters, not a cluster"},
		{name: "its SPC", args: []string{"explain", cluster + "/serviceProviderClusters/default"}, wantErr: "not a cluster; its cluster is " + cluster},
		{name: "no resource group", args: []string{"explain", "/subscriptions/" + testSubscription + "/providers/" + api.ClusterResourceType + "/c"}, wantErr: "not a cluster: CLUSTER must be"},
	} {
		t.Run(tc.name, func(t *testing.T) { assertUsageError(t, tc.args, tc.wantErr) })
	}
}

func FuzzParseClusterArg(f *testing.F) {
	for _, seed := range []string{clusterRID("c").String(), clusterRID("c").String() + "/serviceProviderClusters/default", "/subscriptions/s", "", "/", "x", "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		rid, err := parseClusterArg(arg)
		if err != nil {
			var usage usageError
			require.ErrorAs(t, err, &usage, "every refusal is a usage error")
			return
		}
		assert.True(t, strings.EqualFold(rid.ResourceType(), api.ClusterResourceType), rid.ResourceType())
		assert.NotEmpty(t, rid.SubscriptionID)
		assert.NotEmpty(t, rid.ResourceGroup)
		assert.Equal(t, arg, rid.String())
	})
}

// backendAction answers as placement's reconcile decides, in its order.
func TestBackendAction(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	rid := clusterRID("c")
	mc := api.ManagementClusterResourceID("1")
	pk, err := api.FleetPartitionKey(mc)
	require.NoError(t, err)
	ready := api.NewDocument(mc, pk, api.ManagementClusterProperties{
		Spec: &api.ManagementClusterSpec{SchedulingPolicy: api.Schedulable},
		Status: &api.ManagementClusterStatus{
			Conditions:                     []api.Condition{{Type: api.ManagementClusterConditionReady, Status: api.ConditionTrue}},
			ClusterServiceProvisionShardID: "/api/aro_hcp/v1alpha1/provision_shards/shard-1",
		},
	})
	sched := func(pending ...string) *api.ManagementClusterScheduling {
		return api.NewDocument(api.SchedulingResourceID(mc), pk, api.ManagementClusterSchedulingProperties{Status: controllertest.SchedulingStatus(now, 64, 0, pending...)})
	}
	decide := func(c *api.Cluster, s *api.ManagementClusterScheduling) placement.Decision {
		var candidates []placement.Candidate
		if s != nil {
			candidates = []placement.Candidate{{ManagementCluster: ready, Scheduling: s}}
		}
		return placement.Decide(placement.ClusterOf(rid.String(), c), candidates, placement.DefaultConfig(), nil, now)
	}
	cluster := func(edits ...func(*api.ClusterServiceProviderProperties)) *api.Cluster {
		return frontendCluster(t, rid, now, edits...)
	}
	spc := func(edits ...func(*api.ServiceProviderCluster)) *api.ServiceProviderCluster {
		return emptySPC(rid, edits...)
	}
	deleting := func(p *api.ClusterServiceProviderProperties) {
		p.ProvisioningState = api.ProvisioningStateDeleting
		p.DeletionTimestamp = &now
	}
	legacy := "/api/clusters_mgmt/v1/clusters/1243e9e9-d150-4ef1-9735-2bbc3cabc7d0"
	unmappable := func(p *api.ClusterServiceProviderProperties) { p.ClusterServiceID = legacy }
	shards := func(string) bool { return true }
	noShards := func(string) bool { return false }

	for _, tc := range []struct {
		name     string
		cluster  *api.Cluster
		spc      *api.ServiceProviderCluster
		sched    *api.ManagementClusterScheduling
		hasShard func(string) bool
		want     explainBackend
	}{
		{name: "deleting, without an SPC", cluster: cluster(deleting), sched: sched(), hasShard: shards,
			want: explainBackend{actionDeleting, "nothing: the cluster is being deleted, so nothing is placed or reserved for it"}},
		{name: "deleting, placed", cluster: cluster(deleting), spc: spc(placedOn(mc, now)), sched: sched(), hasShard: shards,
			want: explainBackend{actionDeleting, "nothing: the cluster is being deleted, so nothing is placed or reserved for it"}},
		{name: "no SPC", cluster: cluster(), sched: sched(), hasShard: shards,
			want: explainBackend{actionWaitingForSPC, "waiting for its ServiceProviderCluster (CreateServiceProviderCluster creates it); placement starts once it exists"}},
		{name: "placed", cluster: cluster(), spc: spc(placedOn(mc, now)), sched: sched(), hasShard: shards,
			want: explainBackend{actionPlaced, "placed on stamp 1; placement does not move it"}},
		{name: "placed, its MC gone before the create", cluster: cluster(), spc: spc(placedOn(mc, now)), sched: sched(), hasShard: noShards,
			want: explainBackend{actionReplace, "placed on stamp 1, which is not in the region or has no provision shard, before Cluster Service created the cluster: placement withdraws the intent and places it again once the store confirms it and Cluster Service does not have the cluster"}},
		{name: "placed, its MC gone after the create", cluster: cluster(inClusterService("c")), spc: spc(placedOn(mc, now)), sched: sched(), hasShard: noShards,
			want: explainBackend{actionPlaced, "placed on stamp 1; placement does not move it"}},
		{name: "placed, its MC gone once observed", cluster: cluster(), spc: spc(placedOn(mc, now), observedOn(mc)), sched: sched(), hasShard: noShards,
			want: explainBackend{actionPlaced, "placed on stamp 1; placement does not move it"}},
		{name: "in Cluster Service", cluster: cluster(inClusterService("c")), spc: spc(), sched: sched(), hasShard: shards,
			want: explainBackend{actionAdoption, "adoption: Cluster Service already has it (clusterServiceID " + csHREF("c") + "); ClusterServiceAdoption sets its intent to where Cluster Service put it, placement does not place it"}},
		{name: "unmappable", cluster: cluster(unmappable),
			spc:   spc(withCapacityCondition(api.ConditionFalse, placement.ConditionReasonClusterServiceIDUnmappable, placement.UnmappableMessage(legacy), now)),
			sched: sched(), hasShard: shards,
			want: explainBackend{actionUnmappable, "nothing: clusterServiceID " + legacy + " does not resolve in Cluster Service; hcpsched neither places nor adopts it"}},
		{name: "failed", cluster: cluster(withProvisioningState(api.ProvisioningStateFailed)), spc: spc(), sched: sched(), hasShard: shards,
			want: explainBackend{actionTerminal, "nothing: provisioning state Failed ends its life without a control plane to place"}},
		{name: "canceled", cluster: cluster(withProvisioningState(api.ProvisioningStateCanceled)), spc: spc(), sched: sched(), hasShard: shards,
			want: explainBackend{actionTerminal, "nothing: provisioning state Canceled ends its life without a control plane to place"}},
		{name: "fits", cluster: cluster(), spc: spc(), sched: sched(), hasShard: shards,
			want: explainBackend{actionPlace, "place on stamp 1: reserve there, then record the intent"}},
		{name: "fits where it is reserved", cluster: cluster(), spc: spc(), sched: sched(rid.Key()), hasShard: shards,
			want: explainBackend{actionPlace, "place on stamp 1, reusing the reservation it holds there, then record the intent"}},
		{name: "no management clusters", cluster: cluster(), spc: spc(), hasShard: shards,
			want: explainBackend{actionWait, "fits nowhere: no management clusters are registered; it waits until a management cluster changes so that it fits"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := backendAction(tc.cluster, tc.spc, decide(tc.cluster, tc.sched), tc.hasShard)
			assert.Equal(t, tc.want, got)
		})
	}
}

// docs/operations.md names every global flag and has a section for every verb, and its
// example of the clusters verb is the output the emulator test compares.
func TestOperationsDoc(t *testing.T) {
	b, err := os.ReadFile("../docs/operations.md")
	require.NoError(t, err)
	doc := string(b)

	_, flags, ok := strings.Cut(doc, "\n## Global flags\n")
	require.True(t, ok, "docs/operations.md has no Global flags section")
	flags, _, _ = strings.Cut(flags, "\n## ")
	fs := flag.NewFlagSet("hcpsched", flag.ContinueOnError)
	addGlobalFlags(fs, &globals{})
	fs.VisitAll(func(f *flag.Flag) {
		name := "`--" + f.Name + "`"
		switch {
		case strings.HasPrefix(f.Name, "placement-"):
			name = "`--placement-*`"
		case len(f.Name) == 1:
			name = "`-" + f.Name + "`"
		}
		assert.True(t, strings.Contains(flags, name), "the Global flags section of docs/operations.md lacks %s", name)
	})

	var headings []string
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "## ") {
			headings = append(headings, line)
		}
	}
	for _, v := range verbs() {
		found := false
		for _, h := range headings {
			found = found || strings.Contains(h, "`hcpsched "+v.name+" ") || strings.Contains(h, "`hcpsched "+v.name+"`")
		}
		assert.True(t, found, "docs/operations.md has no section for %s", v.name)
	}

	assert.True(t, strings.Contains(doc, "$ hcpsched clusters --management-cluster 2\n"+clustersStamp2+"```"),
		"docs/operations.md's example of the clusters verb is not TestClustersEmulator's output")
}
