package controllers

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/dev/logbuffer"
)

// Cluster IDs of the fixture capacity report, spelled as the agent reports them.
const (
	readyA   = "/subscriptions/0465bc32-c654-41b8-8d87-9815d7abe8f6/resourceGroups/some-resource-group/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/some-hcp-cluster"
	readyB   = "/subscriptions/e8c5a115-842d-4d7e-98ad-cfb2c50b209e/resourceGroups/rg-np-version-upgrade-pckjw8-79qhmc/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/np-version-upgrade-cluster-pckjw8"
	notReady = "/subscriptions/4fa75980-6637-4157-9726-84d878a62e83/resourceGroups/shrillEffectiveness/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/lavishUnhappiness"
	// unrelated is a reservation for a cluster the report does not show yet.
	unrelated = "/subscriptions/4fa75980-6637-4157-9726-84d878a62e83/resourcegroups/other/providers/microsoft.redhatopenshift/hcpopenshiftclusters/not-created-yet"
)

const testPollInterval = time.Minute

var schedulingOf1 = api.SchedulingResourceID(mc1)

func newTestCapacityReporting(e *env) *CapacityReporting {
	r := NewCapacityReporting(e.inf, e.store, testPollInterval)
	r.now = func() time.Time { return testNow }
	return r
}

// report edits the fixture ReadDesire's mirrored CapacityReport.
func report(path string, value any) edit {
	return edit{"properties.status.kubeContent.status." + path, value}
}

func TestCapacityReportingMirrorsTheReport(t *testing.T) {
	t.Parallel()
	dataCollected := condition(api.SchedulingConditionCapacityDataCurrent, "True", "DataCollected", "", testNow)
	tests := []struct {
		name       string
		scheduling []edit
		report     []edit
		// written are the edits of the scheduling document's one replace; nil means none.
		written []edit
	}{
		{
			name: "the first mirror of the ARO-HCP fixture adds the ready and not-ready clusters; the numbers match ARO-HCP's",
			written: []edit{
				{"properties.status.readyResourceIDs", []string{readyA, readyB}},
				{"properties.status.notReadyResourceIDs", []string{notReady}},
			},
		},
		{
			name:       "an empty document as ARO-HCP creates it gets everything",
			scheduling: []edit{{"properties.status", map[string]any{"observedResources": map[string]any{}, "scaleCeiling": map[string]any{}}}},
			written: []edit{
				{"properties.status.conditions", []any{dataCollected}},
				{"properties.status.observedResources", map[string]any{
					"lastReportedAt": "2026-08-21T09:30:05Z",
					"capacity":       map[string]string{api.SwiftNIC: "128", "cpu": "126560m", "memory": "602245408Ki"},
					"usage":          map[string]string{api.SwiftNIC: "9", "cpu": "3617m", "memory": "21783532Ki"},
					"requests":       map[string]string{api.SwiftNIC: "9", "cpu": "7260m", "memory": "28416Mi"},
				}},
				{"properties.status.readyResourceIDs", []string{readyA, readyB}},
				{"properties.status.notReadyResourceIDs", []string{notReady}},
			},
		},
		{
			name: "reservations of reported clusters are released, compared case-insensitively; the others stay",
			scheduling: []edit{{"properties.status.pendingAssignedClusters", []string{
				"/subscriptions/4fa75980-6637-4157-9726-84d878a62e83/resourcegroups/shrilleffectiveness/providers/microsoft.redhatopenshift/hcpopenshiftclusters/lavishunhappiness",
				unrelated,
				readyA,
			}}},
			written: []edit{
				{"properties.status.readyResourceIDs", []string{readyA, readyB}},
				{"properties.status.notReadyResourceIDs", []string{notReady}},
				{"properties.status.pendingAssignedClusters", []string{unrelated}},
			},
		},
		{
			name:   "a report that is not current turns CapacityDataCurrent False",
			report: []edit{report("conditions", []any{map[string]any{"type": "ReportCurrent", "status": "False", "reason": "Stale", "message": "", "lastTransitionTime": "2026-08-21T09:31:00Z"}})},
			written: []edit{
				{"properties.status.conditions", []any{
					condition(api.SchedulingConditionCapacityDataCurrent, "False", "ReportNotCurrent", "CapacityReport CR's ReportCurrent condition is not True", testNow),
					condition(api.SchedulingConditionScalingDataCurrent, "True", "DataCollected", "", time.Date(2026, 8, 19, 14, 11, 2, 0, time.UTC)),
				}},
				{"properties.status.readyResourceIDs", []string{readyA, readyB}},
				{"properties.status.notReadyResourceIDs", []string{notReady}},
			},
		},
		{
			name: "empty and unparsable entries are skipped",
			report: []edit{
				report("hostedControlPlanes.readyResourceIDs", []string{"", readyA, "not-a-resource-id"}),
				report("hostedControlPlanes.notReadyResourceIDs", []string{"/subscriptions//x"}),
			},
			written: []edit{{"properties.status.readyResourceIDs", []string{readyA}}},
		},
		{
			name: "a new report replaces the numbers, keeping only scheduling resources",
			report: []edit{
				report("lastReportedAt", "2026-08-21T09:30:35Z"),
				report("nodes", []any{map[string]any{"sku": "Standard_D16ds_v5", "ready": 7, "notReady": 0,
					"allocatable": map[string]string{api.SwiftNIC: "112", "cpu": "110740m", "memory": "410295312Ki", "pods": "1750"}}}),
				report("usage", map[string]string{api.SwiftNIC: "12", "cpu": "4", "memory": "30Gi", "ephemeral-storage": "1Ti"}),
			},
			written: []edit{
				{"properties.status.observedResources.lastReportedAt", "2026-08-21T09:30:35Z"},
				{"properties.status.observedResources.capacity", map[string]string{api.SwiftNIC: "112", "cpu": "110740m", "memory": "410295312Ki"}},
				{"properties.status.observedResources.usage", map[string]string{api.SwiftNIC: "12", "cpu": "4", "memory": "30Gi"}},
				{"properties.status.readyResourceIDs", []string{readyA, readyB}},
				{"properties.status.notReadyResourceIDs", []string{notReady}},
			},
		},
		{
			// It would be fresh for ever: it goes stale instead, and nothing of it is
			// believed, not even the clusters it shows.
			name:       "a report dated beyond the clock-skew allowance in the future is not mirrored at all",
			scheduling: []edit{{"properties.status.pendingAssignedClusters", []string{readyA}}},
			report: []edit{
				report("lastReportedAt", "2026-09-01T12:05:00Z"),
				report("usage", map[string]string{api.SwiftNIC: "0", "cpu": "0", "memory": "0"}),
			},
		},
		{
			name:   "a report ahead by no more than the clock-skew allowance is mirrored",
			report: []edit{report("lastReportedAt", "2026-09-01T12:01:00Z")},
			written: []edit{
				{"properties.status.observedResources.lastReportedAt", "2026-09-01T12:01:00Z"},
				{"properties.status.readyResourceIDs", []string{readyA, readyB}},
				{"properties.status.notReadyResourceIDs", []string{notReady}},
			},
		},
		{
			// The fleet does not know which resources placement counts; the engine makes
			// the MC StaleCapacityData for a counted one that is missing.
			name:   "a report whose usage lacks a counted resource is mirrored as it is",
			report: []edit{report("usage", map[string]string{"cpu": "4", "memory": "30Gi"})},
			written: []edit{
				{"properties.status.observedResources.usage", map[string]string{"cpu": "4", "memory": "30Gi"}},
				{"properties.status.readyResourceIDs", []string{readyA, readyB}},
				{"properties.status.notReadyResourceIDs", []string{notReady}},
			},
		},
		{
			name: "already mirrored: nothing is written",
			scheduling: []edit{
				{"properties.status.readyResourceIDs", []string{readyA, readyB}},
				{"properties.status.notReadyResourceIDs", []string{notReady}},
				{"properties.status.pendingAssignedClusters", []string{unrelated}},
			},
		},
		{
			name: "fields the fleet does not own survive, at every level",
			scheduling: []edit{
				{"properties.futureProperty", "kept"},
				{"properties.status.futureStatus", map[string]any{"a": []any{1, 2}}},
				{"properties.status.observedResources.futureObserved", true},
				{"properties.status.scaleCeiling.futureCeiling", 1.5},
			},
			written: []edit{
				{"properties.status.readyResourceIDs", []string{readyA, readyB}},
				{"properties.status.notReadyResourceIDs", []string{notReady}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1),
				fleetDoc(fixtureScheduling1, tc.scheduling...), kubeApplierDoc(fixtureReadDesire1, tc.report...))
			before := e.item(api.FleetContainer, schedulingOf1)
			result, err := newTestCapacityReporting(e).Reconcile(e.as(CapacityReportingControllerName), mc1.Key())
			require.NoError(t, err)
			assert.Equal(t, controller.Result{RequeueAfter: testPollInterval}, result, "the next poll is scheduled")

			replaces, creates := e.store.writes()
			assert.Empty(t, creates)
			if tc.written == nil {
				assert.Empty(t, replaces, "nothing is written")
				return
			}
			require.Len(t, replaces, 1, "one replace")
			assert.Equal(t, expectReplaced(t, before, tc.written...), storedTree(t, e.item(api.FleetContainer, schedulingOf1)))
		})
	}
}

// The acceptance test of the reservation hand-over: the Replace that first shows a
// cluster as not ready is the one that drops its reservation, so there is no moment at
// which placement counts the cluster twice or not at all.
func TestCapacityReportingReleasesAReservationInTheReplaceThatFirstMirrorsItsCluster(t *testing.T) {
	t.Parallel()
	const reservation = "/subscriptions/4fa75980-6637-4157-9726-84d878a62e83/resourcegroups/shrilleffectiveness/providers/microsoft.redhatopenshift/hcpopenshiftclusters/lavishunhappiness"
	e := newEnv(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1),
		fleetDoc(fixtureScheduling1, edit{"properties.status.pendingAssignedClusters", []string{reservation, unrelated}}),
		kubeApplierDoc(fixtureReadDesire1))
	before := e.item(api.FleetContainer, schedulingOf1)
	require.NotContains(t, string(before.Body), "notReadyResourceIDs", "the cluster is not mirrored yet")

	_, err := newTestCapacityReporting(e).Reconcile(e.as(CapacityReportingControllerName), mc1.Key())
	require.NoError(t, err)

	replaces, _ := e.store.writes()
	require.Len(t, replaces, 1)
	require.NoError(t, replaces[0].err)
	written := tree(t, replaces[0].body)["properties"].(map[string]any)["status"].(map[string]any)
	assert.Equal(t, normalize(t, []string{notReady}), written["notReadyResourceIDs"], "the cluster is mirrored as not ready")
	assert.Equal(t, normalize(t, []string{unrelated}), written["pendingAssignedClusters"], "and its reservation is gone in the same write")
	stored := storedTree(t, e.item(api.FleetContainer, schedulingOf1))
	assert.Equal(t, withoutSystem(tree(t, replaces[0].body)), stored, "that write is what is stored")
}

func TestCapacityReportingWaitsForAReport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		seeds []seed
	}{
		{"the ReadDesire has no kubeContent yet", []seed{fleetDoc(fixtureMC1), kubeApplierDoc(fixtureReadDesire1, edit{"properties.status", remove})}},
		{"the ReadDesire does not exist yet", []seed{fleetDoc(fixtureMC1)}},
		{"the management cluster names no kube-applier container", []seed{
			fleetDoc(fixtureMC1, edit{"properties.status.kubeApplierCosmosContainerName", remove}),
			kubeApplierDoc(fixtureReadDesire1),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, append(tc.seeds, fleetDoc(fixtureStamp1), fleetDoc(fixtureScheduling1))...)
			result, err := newTestCapacityReporting(e).Reconcile(e.as(CapacityReportingControllerName), mc1.Key())
			require.NoError(t, err, "not observed yet is an expected wait")
			assert.Equal(t, controller.Result{RequeueAfter: testPollInterval}, result)
			replaces, creates := e.store.writes()
			assert.Empty(t, replaces)
			assert.Empty(t, creates)
		})
	}
}

func TestCapacityReportingCreatesAMissingSchedulingDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1), kubeApplierDoc(fixtureReadDesire1))
	_, err := newTestCapacityReporting(e).Reconcile(e.as(CapacityReportingControllerName), mc1.Key())
	require.NoError(t, err)
	got := storedTree(t, e.item(api.FleetContainer, schedulingOf1))
	want := withoutSystem(tree(t, applyEdits(t, []byte(`{}`),
		edit{"id", api.CosmosID(schedulingOf1.String())},
		edit{"partitionKey", "1"},
		edit{"resourceID", schedulingOf1.String()},
		edit{"resourceType", api.ManagementClusterSchedulingResourceType},
		edit{"properties.cosmosMetadata", map[string]any{"resourceID": schedulingOf1.String(), "partitionKey": "1", "instanceVersion": 1}},
		edit{"properties.status", map[string]any{"observedResources": map[string]any{}, "scaleCeiling": map[string]any{}}},
	)))
	assert.Equal(t, want, got, "created as ARO-HCP creates it")

	// The next pass, once the cache has it, fills it.
	e.synced()
	_, err = newTestCapacityReporting(e).Reconcile(e.as(CapacityReportingControllerName), mc1.Key())
	require.NoError(t, err)
	got = storedTree(t, e.item(api.FleetContainer, schedulingOf1))
	assert.Equal(t, normalize(t, []string{notReady}), got["properties"].(map[string]any)["status"].(map[string]any)["notReadyResourceIDs"])
}

// On a 412 the pass ends without an error; once the cache has the newer document the
// next pass mirrors onto it, keeping what the other writer added.
func TestCapacityReportingConflictRetriesFromTheCache(t *testing.T) {
	t.Parallel()
	const reservation = "/subscriptions/4fa75980-6637-4157-9726-84d878a62e83/resourcegroups/shrilleffectiveness/providers/microsoft.redhatopenshift/hcpopenshiftclusters/lavishunhappiness"
	e := newEnv(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1),
		fleetDoc(fixtureScheduling1, edit{"properties.status.pendingAssignedClusters", []string{reservation}}),
		kubeApplierDoc(fixtureReadDesire1))
	r := newTestCapacityReporting(e)
	// The backend places another cluster on this MC between our read and our write.
	e.loseNextReplace(api.FleetContainer, schedulingOf1, edit{"properties.status.pendingAssignedClusters", []string{reservation, unrelated}})
	_, err := r.Reconcile(e.as(CapacityReportingControllerName), mc1.Key())
	require.NoError(t, err)
	e.requireLostRace()

	e.requireRetryWrites(CapacityReportingControllerName, r.Reconcile, mc1.Key(), api.FleetContainer, schedulingOf1,
		edit{"properties.status.readyResourceIDs", []string{readyA, readyB}},
		edit{"properties.status.notReadyResourceIDs", []string{notReady}},
		edit{"properties.status.pendingAssignedClusters", []string{unrelated}},
	)
}

func TestCapacityReportingKeepsOnePollPending(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1), fleetDoc(fixtureScheduling1), kubeApplierDoc(fixtureReadDesire1))
	r := newTestCapacityReporting(e)
	first, err := r.Reconcile(e.as(CapacityReportingControllerName), mc1.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{RequeueAfter: testPollInterval}, first)
	// A pass started by an event asks for the same interval; the controller framework
	// keeps one pending requeue per key (internal/controller), so no second chain starts.
	second, err := r.Reconcile(e.as(CapacityReportingControllerName), mc1.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{RequeueAfter: testPollInterval}, second)
	// A management cluster that is gone is not polled.
	third, err := r.Reconcile(e.as(CapacityReportingControllerName), mc3.Key())
	require.NoError(t, err)
	assert.Equal(t, controller.Result{}, third)
}

// A refused report is counted and logged with its date; the scheduling document is left
// as it was, and the next believable report is mirrored as usual.
func TestCapacityReportingCountsAndLogsARefusedReport(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fleetDoc(fixtureStamp1), fleetDoc(fixtureMC1), fleetDoc(fixtureScheduling1),
		kubeApplierDoc(fixtureReadDesire1, report("lastReportedAt", "2026-09-01T12:05:00Z")))
	var logs logbuffer.Buffer
	ctx := controller.WithLogger(e.as(CapacityReportingControllerName), slog.New(slog.NewJSONHandler(&logs, nil)))
	reg := prometheus.NewPedanticRegistry()
	r := newTestCapacityReporting(e)
	require.NoError(t, r.Register(reg))
	refused := func() string {
		return fmt.Sprintf("# HELP %[1]s %[2]s\n# TYPE %[1]s counter\n", CapacityReportsRefusedName, family(t, reg, CapacityReportsRefusedName).GetHelp())
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(refused()+CapacityReportsRefusedName+`{reason="future_timestamp"} 0`+"\n")),
		"exported at zero before any refusal")
	before := e.item(api.FleetContainer, schedulingOf1)

	result, err := r.Reconcile(ctx, mc1.Key())
	require.NoError(t, err, "a refused report is not an error: retrying sooner would not change it")
	assert.Equal(t, controller.Result{RequeueAfter: testPollInterval}, result, "polled again at the usual interval")
	replaces, creates := e.store.writes()
	assert.Empty(t, replaces)
	assert.Empty(t, creates)
	assert.Equal(t, before.ETag, e.item(api.FleetContainer, schedulingOf1).ETag, "the scheduling document is untouched")
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(refused()+CapacityReportsRefusedName+`{reason="future_timestamp"} 1`+"\n")))
	assert.Contains(t, logs.String(), `"level":"WARN"`)
	assert.Contains(t, logs.String(), `"lastReportedAt":"2026-09-01T12:05:00Z"`)
	assert.Contains(t, logs.String(), "in the future")

	e.replaceStored(kubeApplierOfStamp1, capacityReadDesireOf1, report("lastReportedAt", "2026-09-01T11:59:30Z"))
	_, err = r.Reconcile(ctx, mc1.Key())
	require.NoError(t, err)
	replaces, _ = e.store.writes()
	require.Len(t, replaces, 1, "the next believable report is mirrored")
	assert.Equal(t, "2026-09-01T11:59:30Z",
		storedTree(t, e.item(api.FleetContainer, schedulingOf1))["properties"].(map[string]any)["status"].(map[string]any)["observedResources"].(map[string]any)["lastReportedAt"])
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(refused()+CapacityReportsRefusedName+`{reason="future_timestamp"} 1`+"\n")))
}

// family gathers one metric family of reg; nil when it exports none.
func family(t *testing.T, reg *prometheus.Registry, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	return nil
}
