package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/dev/controllertest"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// fixtureMC is ARO-HCP's management cluster of stamp 1, ready and schedulable, with
// every field ARO-HCP writes (its Maestro registration among them).
const fixtureMC = "constructed/fleet-managementcluster-1-ready-schedulable.json"

// storeFixtureMC stores ARO-HCP's MC of stamp 1 byte for byte, as ARO-HCP wrote it, with
// a scheduling document of the given swift-NIC ceiling and usage.
func (r *testRegion) storeFixtureMC(t *testing.T, ceiling, usage int) *api.ResourceID {
	t.Helper()
	rid := api.ManagementClusterResourceID("1")
	_, err := r.fleet().Create(t.Context(), "1", arohcp.Get(fixtureMC))
	require.NoError(t, err)
	_, err = database.Create(t.Context(), r.fleet(), api.NewDocument(api.SchedulingResourceID(rid), "1", api.ManagementClusterSchedulingProperties{
		Status: controllertest.SchedulingStatus(r.reportedAt, ceiling, usage),
	}))
	require.NoError(t, err)
	return rid
}

func (r *testRegion) storedMC(t *testing.T, rid *api.ResourceID) database.Item {
	t.Helper()
	pk, err := api.FleetPartitionKey(rid)
	require.NoError(t, err)
	item, err := r.fleet().Get(t.Context(), pk, api.CosmosID(rid.String()))
	require.NoError(t, err)
	return item
}

// loadRegion reads the test region as the command does, at r.now; its caches stop when
// the test ends.
func (r *testRegion) loadRegion(t *testing.T) *region {
	t.Helper()
	c, _, _, err := parseCommandLine([]string{
		"--cosmos-endpoint=" + r.db.Config.Endpoint,
		"--cosmos-key=" + r.db.Config.Key,
		"--cosmos-database=" + r.db.Config.Database,
		"capacity",
	}, &bytes.Buffer{}, deps{now: func() time.Time { return r.now }, lookupEnv: noEnv})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	reg, err := c.loadRegion(ctx)
	require.NoError(t, err)
	return reg
}

// decide is the backend's placement decision for a stored cluster in the region as it
// stands: what the placement controller would do now.
func (r *testRegion) decide(t *testing.T, cluster *api.ResourceID) placement.Decision {
	t.Helper()
	reg := r.loadRegion(t)
	doc, err := reg.caches.Clusters().Lister().Get(cluster.String())
	require.NoError(t, err)
	view := reg.snapshot.Current()
	return view.Model.Decide(placement.ClusterOf(cluster.String(), doc), view.MCs, reg.now)
}

// verdictOn is the decision's verdict for the MC of stamp.
func verdictOn(t *testing.T, d placement.Decision, stamp string) placement.Verdict {
	t.Helper()
	for _, v := range d.Verdicts() {
		if stampOf(v.ManagementCluster()) == stamp {
			return v
		}
	}
	require.Failf(t, "no verdict", "stamp %s was not judged", stamp)
	return placement.Verdict{}
}

// auditLine decodes the one JSON audit line the command wrote on stderr.
func auditLine(t *testing.T, stderr string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	require.Len(t, lines, 1, "one audit line: %s", stderr)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &m), lines[0])
	return m
}

const cordonReason = "AKS node image upgrade, INC-1234"

// Cordon writes spec.schedulingPolicy of ARO-HCP's own MC document and nothing else:
// every other field, including ones hcpsched has no use for, stays byte for byte; a
// second cordon writes nothing; uncordon, by resource ID in another casing, writes it
// back the same way.
func TestCordonAndUncordonEmulator(t *testing.T) {
	r := newTestRegion(t)
	rid := r.storeFixtureMC(t, 64, 0)
	user := osUser()

	before := r.storedMC(t, rid)
	out, errOut, code := r.cli(t, "cordon", "1", "--reason", cordonReason)
	require.Equal(t, exitOK, code, errOut)
	want := `MANAGEMENT CLUSTER  /providers/microsoft.redhatopenshift/stamps/1/managementclusters/default
STAMP               1
POLICY              Schedulable -> Unschedulable
WRITTEN             yes (instanceVersion 5)
REASON              AKS node image upgrade, INC-1234
USER                ` + user + `
PROVISION SHARD     /api/aro_hcp/v1alpha1/provision_shards/2lq3b6c1tq0h2o8k4mdsg7e5r9uvja1f

What follows:
- placement (backend): puts no new cluster on stamp 1; clusters waiting for capacity name it Unschedulable in their CapacityAvailable condition
- placement (backend): clusters already placed or reserved on stamp 1 stay there and keep their capacity; cordon moves nothing (what would move: hcpsched drain-plan 1)
- fleet: ClustersServiceRegistration sets its Cluster Service provision shard /api/aro_hcp/v1alpha1/provision_shards/2lq3b6c1tq0h2o8k4mdsg7e5r9uvja1f to maintenance on its next pass, so Cluster Service's own placement avoids it too; hcpsched's creates of clusters already placed there are pinned to the shard and still go to it
- metrics: stamp 1 adds nothing to backend_region_headroom_hcps; hcpsched capacity shows it with POLICY Unschedulable and PLACEABLE "no: Unschedulable: cordoned"
- the reason is not stored (ARO-HCP's ManagementCluster has no field for it): keep the audit line this command printed on stderr
`
	assert.Equal(t, want, out)
	after := r.storedMC(t, rid)
	assert.Equal(t, controllertest.ExpectReplaced(t, before, controllertest.Set("properties.spec.schedulingPolicy", api.Unschedulable)),
		controllertest.StoredTree(t, after), "only spec.schedulingPolicy (and the write counter) changed")
	assert.Equal(t, map[string]any{
		"time": r.now.UTC().Format(time.RFC3339), "level": "INFO", "msg": "hcpsched audit: management cluster scheduling policy",
		"verb": "cordon", "managementCluster": rid.String(), "stamp": "1", "oldPolicy": api.Schedulable, "newPolicy": api.Unschedulable,
		"written": true, "instanceVersion": float64(5), "reason": cordonReason, "user": user,
	}, auditLine(t, errOut))

	// Again: already cordoned, nothing is sent.
	out, errOut, code = r.cli(t, "cordon", "1", "--reason", cordonReason)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `MANAGEMENT CLUSTER  /providers/microsoft.redhatopenshift/stamps/1/managementclusters/default
STAMP               1
POLICY              Unschedulable (unchanged)
WRITTEN             no: already Unschedulable
REASON              AKS node image upgrade, INC-1234
USER                `+user+`
PROVISION SHARD     /api/aro_hcp/v1alpha1/provision_shards/2lq3b6c1tq0h2o8k4mdsg7e5r9uvja1f

What follows:
- nothing changes: the management cluster is already Unschedulable
`, out)
	out, errOut, code = r.cli(t, "cordon", "1", "--reason", cordonReason, "-o", "json")
	require.Equal(t, exitOK, code, errOut)
	var again policyChange
	require.NoError(t, json.Unmarshal([]byte(out), &again))
	assert.False(t, again.Written)
	assert.Equal(t, api.Unschedulable, again.OldPolicy)
	assert.Equal(t, []string{"nothing changes: the management cluster is already Unschedulable"}, again.Effects)
	assert.Equal(t, after.ETag, r.storedMC(t, rid).ETag, "a cordoned MC is not written again")
	assert.Equal(t, false, auditLine(t, errOut)["written"])

	out, errOut, code = r.cli(t, "uncordon", strings.ToUpper(rid.String()), "--reason=upgrade done")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "POLICY              Unschedulable -> Schedulable\nWRITTEN             yes (instanceVersion 6)\n")
	assert.Contains(t, out, "- fleet: ClustersServiceRegistration sets its Cluster Service provision shard /api/aro_hcp/v1alpha1/provision_shards/2lq3b6c1tq0h2o8k4mdsg7e5r9uvja1f to active on its next pass, so Cluster Service may place there again\n")
	assert.Equal(t, controllertest.ExpectReplaced(t, after, controllertest.Set("properties.spec.schedulingPolicy", api.Schedulable)), controllertest.StoredTree(t, r.storedMC(t, rid)),
		"uncordon restores the policy and changes nothing else")
	assert.Equal(t, "upgrade done", auditLine(t, errOut)["reason"])
}

// Cordon changes placement: the engine the backend decides with stops choosing the MC
// and says it is Unschedulable; after uncordon it chooses it again.
func TestCordonChangesPlacementEmulator(t *testing.T) {
	r := newTestRegion(t)
	r.storeFixtureMC(t, 64, 0)
	r.mc(t, "2", 32, 20)
	cluster := controllertest.StoreCluster(t, r.resources(), controllertest.ClusterFor(t,
		api.MustParseResourceID("/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/waiting")))

	chosenStamp := func(d placement.Decision) string {
		if d.Chosen == nil {
			return ""
		}
		return stampOf(d.Chosen.ID())
	}
	d := r.decide(t, cluster)
	require.Equal(t, "1", chosenStamp(d), "stamp 1 has the most room")

	_, errOut, code := r.cli(t, "cordon", "1", "--reason", cordonReason)
	require.Equal(t, exitOK, code, errOut)
	d = r.decide(t, cluster)
	assert.Equal(t, "2", chosenStamp(d), "a cordoned MC is not chosen")
	assert.Equal(t, placement.ReasonUnschedulable, verdictOn(t, d, "1").Reason)

	out, errOut, code := r.cli(t, "capacity")
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `(?m)^1\s+Unschedulable\s+yes\s.*no: Unschedulable: cordoned$`, out)

	_, errOut, code = r.cli(t, "uncordon", "1", "--reason", "done")
	require.Equal(t, exitOK, code, errOut)
	d = r.decide(t, cluster)
	assert.Equal(t, "1", chosenStamp(d))
	assert.Empty(t, verdictOn(t, d, "1").Reason)
}

// A cordon that loses the etag race to another writer reads the MC again and writes
// over the newer document, keeping that writer's change; one that loses every time
// gives up with exit 1 and writes nothing.
func TestCordonLostRaceEmulator(t *testing.T) {
	r := newTestRegion(t)
	rid := r.storeFixtureMC(t, 64, 0)
	// otherWriter plays ARO-HCP changing the MC between cordon's read and its write.
	otherWriter := func(t *testing.T, target string) {
		item := r.storedMC(t, rid)
		body := controllertest.ApplyEdits(t, item.Body, controllertest.Set("properties.status.maestroGRPCTarget", target))
		_, err := r.fleet().Replace(t.Context(), item.PartitionKey, item.ID, body, item.ETag)
		require.NoError(t, err)
	}

	hooks := &controllertest.Hooks{}
	hooks.BeforeNextReplace(func() { otherWriter(t, "maestro-grpc.raced.svc:8090") })
	out, errOut, code := r.cliThrough(t, hooks.Wrap, "cordon", "1", "--reason", cordonReason, "-o", "json")
	require.Equal(t, exitOK, code, errOut)
	var got policyChange
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.True(t, got.Written)
	assert.Equal(t, 2, got.Attempts, "read again once")
	replaces, creates := hooks.Writes()
	require.Len(t, replaces, 2)
	assert.ErrorIs(t, replaces[0].Err, database.ErrPreconditionFailed)
	assert.NoError(t, replaces[1].Err)
	assert.Empty(t, creates)
	mc, err := database.DecodeItem[api.ManagementClusterProperties](r.storedMC(t, rid))
	require.NoError(t, err)
	assert.Equal(t, api.Unschedulable, mc.Properties.Spec.SchedulingPolicy)
	assert.Equal(t, "maestro-grpc.raced.svc:8090", mc.Properties.Status.MaestroGRPCTarget, "the other writer's change is kept")

	// Now every write loses.
	always := &controllertest.Hooks{}
	n := 0
	var race func()
	race = func() {
		n++
		otherWriter(t, "maestro-grpc.race-"+string(rune('a'+n))+".svc:8090")
		always.BeforeNextReplace(race)
	}
	always.BeforeNextReplace(race)
	before := r.storedMC(t, rid)
	out, errOut, code = r.cliThrough(t, always.Wrap, "uncordon", "1", "--reason", "done")
	assert.Equal(t, exitFailed, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "uncordon: management cluster /providers/microsoft.redhatopenshift/stamps/1/managementclusters/default changed between every read and write (5 etag races lost); nothing was written: run the command again")
	assert.Equal(t, CordonAttempts, n)
	mc, err = database.DecodeItem[api.ManagementClusterProperties](r.storedMC(t, rid))
	require.NoError(t, err)
	assert.Equal(t, api.Unschedulable, mc.Properties.Spec.SchedulingPolicy, "never written")
	assert.NotEqual(t, before.ETag, r.storedMC(t, rid).ETag, "only by the other writer")
}

// Command-line mistakes are usage errors (exit 2) found before anything is read.
func TestCordonUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "no reason", args: []string{"cordon", "1"}, wantErr: "cordon: --reason is required and must not be empty"},
		{name: "blank reason", args: []string{"uncordon", "1", "--reason", "  "}, wantErr: "uncordon: --reason is required and must not be empty"},
		{name: "no MC", args: []string{"cordon", "--reason", "x"}, wantErr: "usage: hcpsched cordon MC --reason TEXT"},
		{name: "two MCs", args: []string{"cordon", "1", "2", "--reason", "x"}, wantErr: "usage: hcpsched cordon MC --reason TEXT"},
		{name: "not a stamp", args: []string{"cordon", "stamp 1", "--reason", "x"}, wantErr: `management cluster "stamp 1": must be a stamp identifier`},
		{name: "a cluster's ID", args: []string{"cordon", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c", "--reason", "x"},
			wantErr: "is a Microsoft.RedHatOpenShift/hcpOpenShiftClusters, not a management cluster"},
		{name: "malformed ID", args: []string{"drain-plan", "/providers/microsoft.redhatopenshift/stamps"}, wantErr: "drain-plan: management cluster \"/providers/microsoft.redhatopenshift/stamps\": must be a stamp identifier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			// An endpoint nothing answers: a usage error must not need it.
			args := append([]string{"--cosmos-endpoint=https://127.0.0.1:1/", "--cosmos-key=a2V5"}, tc.args...)
			code := run(t.Context(), args, &out, &errOut, deps{lookupEnv: noEnv, openStore: func(cosmos.Config) (database.Store, error) {
				t.Error("a usage error opened the store")
				return nil, assert.AnError
			}})
			assert.Equal(t, exitUsage, code, errOut.String())
			assert.Contains(t, errOut.String(), tc.wantErr)
			assert.Empty(t, out.String())
		})
	}
}

// An MC the region does not have is exit 3, naming the stamps it has.
func TestUnknownManagementClusterEmulator(t *testing.T) {
	r := newTestRegion(t)
	r.mc(t, "10", 64, 0)
	r.mc(t, "2", 64, 0)
	for _, args := range [][]string{
		{"cordon", "7", "--reason", "x"},
		{"uncordon", "/providers/microsoft.redhatopenshift/stamps/7/managementclusters/default", "--reason", "x"},
		{"drain-plan", "7"},
	} {
		t.Run(args[0], func(t *testing.T) {
			out, errOut, code := r.cli(t, args...)
			assert.Equal(t, exitNotFound, code, errOut)
			assert.Contains(t, errOut, `: not found; known stamps: 2, 10`)
			assert.Contains(t, errOut, `management cluster "`+args[1]+`"`)
			assert.Empty(t, out)
		})
	}
}

// The one field cordon tells docwrite it owns is its Write row in
// docs/cosmos-data-flow.md.
func TestCordonOwnsItsDocumentedWrite(t *testing.T) {
	controllertest.AssertOwnsItsWriteRows(t, "../docs/cosmos-data-flow.md", "hcpsched cordon and uncordon", "ManagementCluster", policyOwns)
}
