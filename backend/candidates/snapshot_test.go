package candidates_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/backend/candidates"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
)

func schedulingID(v *placement.MC) string {
	if v.Scheduling == nil {
		return ""
	}
	return v.Scheduling.ResourceID
}

// Every cached MC is in the view once, in key order, with its scheduling document or
// none, whether the documents were there when the caches started or came after; a
// scheduling document without an MC is no candidate.
func TestSnapshotPairsEveryMCWithItsSchedulingDocument(t *testing.T) {
	w := newWorld(t)
	withDoc, withoutDoc := api.ManagementClusterResourceID("1"), api.ManagementClusterResourceID("2")
	// ARO-HCP's casing: the scheduling document's ID is the MC's, lowercased.
	otherCasing := api.MustParseResourceID("/providers/Microsoft.RedHatOpenShift/stamps/Three/managementClusters/default")
	late, lateOtherCasing := api.ManagementClusterResourceID("4"), api.MustParseResourceID("/providers/Microsoft.RedHatOpenShift/stamps/Five/managementClusters/default")
	w.mc(withDoc)
	w.scheduling(withDoc, report{ceiling: 30})
	w.mc(withoutDoc)
	w.mc(otherCasing)
	w.scheduling(otherCasing, report{ceiling: 30})
	w.scheduling(api.ManagementClusterResourceID("orphan"), report{ceiling: 30})
	// Cached MCs whose scheduling documents come after them.
	w.mc(late)
	w.mc(lateOtherCasing)
	s, _ := w.start(placement.DefaultConfig())
	w.scheduling(late, report{ceiling: 30})
	w.scheduling(lateOtherCasing, report{ceiling: 30})

	wantScheduling := map[string]string{
		withDoc.String():         api.SchedulingResourceID(withDoc).String(),
		withoutDoc.String():      "",
		otherCasing.String():     api.SchedulingResourceID(otherCasing).String(),
		late.String():            api.SchedulingResourceID(late).String(),
		lateOtherCasing.String(): api.SchedulingResourceID(lateOtherCasing).String(),
	}
	require.Eventually(t, func() bool {
		got := map[string]string{}
		for _, mc := range s.Current().MCs {
			got[mc.ID()] = schedulingID(mc)
		}
		return assert.ObjectsAreEqual(wantScheduling, got)
	}, within, tick, "every MC once, with its scheduling document or none")

	v := s.Current()
	var keys []string
	for _, mc := range v.MCs {
		keys = append(keys, informers.KeyOf(mc.ID()))
	}
	assert.IsIncreasing(t, keys, "the view is in key order")
	assert.Len(t, keys, len(wantScheduling))
}

func TestSnapshotOfNoMCs(t *testing.T) {
	w := newWorld(t)
	w.scheduling(api.ManagementClusterResourceID("orphan"), report{ceiling: 30})
	s, _ := w.start(placement.DefaultConfig())
	v := s.Current()
	require.NotNil(t, v)
	require.NotNil(t, v.Model)
	assert.Empty(t, v.MCs)
	d := v.Model.Decide(placement.Cluster{ResourceID: clusterID("c").String(), Swift: true}, v.MCs, time.Now())
	assert.Equal(t, placement.OutcomeNoManagementClusters, d.Outcome)
}

// An MC is parsed once per version of its documents: an event of one MC's scheduling
// document parses that MC again and leaves every other MC as it was parsed.
func TestSchedulingEventParsesOnlyItsMC(t *testing.T) {
	w := newWorld(t)
	var ids []*api.ResourceID
	for i := range 3 {
		rid := w.mc(api.ManagementClusterResourceID(fmt.Sprint(i + 1)))
		w.scheduling(rid, report{ceiling: 30, usage: 3, requests: 3})
		ids = append(ids, rid)
	}
	s, _ := w.start(placement.DefaultConfig())
	before := s.Current()
	require.Len(t, before.MCs, 3)

	changed := ids[1]
	w.editScheduling(changed, func(st *api.SchedulingStatus) {
		// The agent's report: requests above usage count (max(usage, requests)).
		st.ObservedResources.Requests[api.SwiftNIC] = "12"
	})
	after := leftIs(t, s, changed, 18, "a scheduling document's event")

	v := s.Current()
	assert.NotSame(t, mcIn(before, changed), after, "the changed MC was parsed again")
	for _, rid := range []*api.ResourceID{ids[0], ids[2]} {
		assert.Same(t, mcIn(before, rid), mcIn(v, rid), "%s did not change and was not parsed again", rid)
	}
	got, ok := nicsLeft(before, changed)
	require.True(t, ok)
	assert.Equal(t, int64(27), got, "a published view never changes")
}

// An event of the MC document parses the MC again: cordoned, it stops fitting; deleted,
// it leaves the view; its scheduling document deleted, it stays without one.
func TestMCEventsParseTheMCAgain(t *testing.T) {
	cluster := placement.Cluster{ResourceID: clusterID("new").String(), Swift: true}
	w := newWorld(t)
	rid := w.mc(api.ManagementClusterResourceID("1"))
	w.scheduling(rid, report{ceiling: 30})
	other := w.mc(api.ManagementClusterResourceID("2"))
	w.scheduling(other, report{ceiling: 30})
	s, _ := w.start(placement.DefaultConfig())
	verdict := func() placement.Reason {
		v := s.Current()
		mc := mcIn(v, rid)
		if mc == nil {
			return "gone"
		}
		d := v.Model.Decide(cluster, []*placement.MC{mc}, time.Now())
		return d.Verdict(0).Reason
	}
	require.Equal(t, placement.Reason(""), verdict())

	steps := []struct {
		name string
		do   func()
		want placement.Reason
	}{
		{"cordoned", func() {
			w.editMC(rid, func(p *api.ManagementClusterProperties) { p.Spec.SchedulingPolicy = api.Unschedulable })
		}, placement.ReasonUnschedulable},
		{"uncordoned", func() {
			w.editMC(rid, func(p *api.ManagementClusterProperties) { p.Spec.SchedulingPolicy = api.Schedulable })
		}, ""},
		{"not ready", func() {
			w.editMC(rid, func(p *api.ManagementClusterProperties) { p.Status.Conditions[0].Status = api.ConditionFalse })
		}, placement.ReasonNotReady},
		{"ready", func() {
			w.editMC(rid, func(p *api.ManagementClusterProperties) { p.Status.Conditions[0].Status = api.ConditionTrue })
		}, ""},
		{"scheduling document deleted", func() {
			w.softDelete(w.fleet, fleetPK(t, rid), api.SchedulingResourceID(rid).String())
		}, placement.ReasonNoSchedulingData},
		{"MC deleted", func() { w.softDelete(w.fleet, fleetPK(t, rid), rid.String()) }, "gone"},
	}
	for _, step := range steps {
		untouched := mcIn(s.Current(), other)
		step.do()
		require.Eventually(t, func() bool { return verdict() == step.want }, within, tick, "%s: want %q, have %q", step.name, step.want, verdict())
		assert.Same(t, untouched, mcIn(s.Current(), other), "%s: the other MC was not parsed again", step.name)
	}
	v := s.Current()
	require.Len(t, v.MCs, 1)
	assert.Equal(t, other.String(), v.MCs[0].ID())
}

// Current copies nothing while nothing changed: the same view, so a decision costs no
// copy of a thousand MC pointers; a change publishes a new view and leaves the old one
// as it was.
func TestCurrentIsSharedUntilSomethingChanges(t *testing.T) {
	w := newWorld(t)
	rid := w.mc(api.ManagementClusterResourceID("1"))
	w.scheduling(rid, report{ceiling: 30})
	s, _ := w.start(placement.DefaultConfig())
	first := s.Current()
	assert.Same(t, first, s.Current())
	assert.Same(t, first, s.Current())

	w.editScheduling(rid, func(st *api.SchedulingStatus) { st.ObservedResources.Usage[api.SwiftNIC] = "3" })
	leftIs(t, s, rid, 27, "after a report")
	second := s.Current()
	assert.NotSame(t, first, second)
	assert.Same(t, second, s.Current())
	got, _ := nicsLeft(first, rid)
	assert.Equal(t, int64(30), got, "the first view still holds the MC as it was")
}

// This process's own write is in the very next view, before the change feed delivers
// it: a placement reserving on an MC must not decide the next cluster from the MC
// before its own reservation.
func TestAssumedWriteIsInTheNextView(t *testing.T) {
	reservation := clusterID("reserved").Key()
	tests := []struct {
		name string
		// write makes the write, hidden from the change feed, and Assumes it; it returns
		// the informer of the document, its cache key and what was written.
		write func(w *world, c informers.Caches, rid *api.ResourceID) (cache.SharedIndexInformer, string, string)
		check func(t *testing.T, mc *placement.MC)
	}{{
		name: "scheduling document (a reservation)",
		write: func(w *world, c informers.Caches, rid *api.ResourceID) (cache.SharedIndexInformer, string, string) {
			id := api.SchedulingResourceID(rid)
			w.store.hide(api.CosmosID(id.String()))
			written := w.editScheduling(rid, func(st *api.SchedulingStatus) {
				st.PendingAssignedClusters = append(st.PendingAssignedClusters, reservation)
			})
			inf := c.ManagementClusterSchedulings()
			inf.Assume(written)
			return inf, id.Key(), written.ETag
		},
		check: func(t *testing.T, mc *placement.MC) {
			assert.Equal(t, 1, mc.Reservations())
			available, ok := mc.Available()
			require.True(t, ok)
			assert.Equal(t, []int64{27000}, available, "the reservation holds 3 swift NICs")
		},
	}, {
		name: "MC document (a cordon)",
		write: func(w *world, c informers.Caches, rid *api.ResourceID) (cache.SharedIndexInformer, string, string) {
			w.store.hide(api.CosmosID(rid.String()))
			written := w.editMC(rid, func(p *api.ManagementClusterProperties) { p.Spec.SchedulingPolicy = api.Unschedulable })
			inf := c.ManagementClusters()
			inf.Assume(written)
			return inf, rid.Key(), written.ETag
		},
		check: func(t *testing.T, mc *placement.MC) {
			assert.Equal(t, api.Unschedulable, mc.ManagementCluster.Properties.Spec.SchedulingPolicy)
			d := mc.Fits(placement.Cluster{ResourceID: clusterID("new").String(), Swift: true}, time.Now())
			assert.False(t, d, "a cordoned MC fits nothing")
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			rid := w.mc(api.ManagementClusterResourceID("1"))
			w.scheduling(rid, report{ceiling: 30})
			s, c := w.start(placement.DefaultConfig())
			before := s.Current()

			inf, key, etag := tt.write(w, c, rid)
			v := s.Current()
			require.NotSame(t, before, v, "the write is in the very next view")
			tt.check(t, mcIn(v, rid))

			obj, ok, err := inf.GetStore().GetByKey(key)
			require.NoError(t, err)
			require.True(t, ok)
			assert.NotEqual(t, etag, obj.(interface{ GetResourceVersion() string }).GetResourceVersion(),
				"the change feed has not delivered the write: the cache holds the version before it")
		})
	}
}

// The change feed's copy of a write this process assumed is the version the snapshot
// parsed at once: its event parses nothing again, while a write of another version does.
func TestFeedCopyOfAnAssumedWriteParsesNothing(t *testing.T) {
	w := newWorld(t)
	assumedMC := w.mc(api.ManagementClusterResourceID("1"))
	otherMC := w.mc(api.ManagementClusterResourceID("2"))
	w.scheduling(assumedMC, report{ceiling: 30})
	w.scheduling(otherMC, report{ceiling: 30})
	s, c := w.start(placement.DefaultConfig())

	id := api.CosmosID(api.SchedulingResourceID(assumedMC).String())
	w.store.hide(id)
	written := w.editScheduling(assumedMC, func(st *api.SchedulingStatus) {
		st.PendingAssignedClusters = append(st.PendingAssignedClusters, clusterID("reserved").Key())
	})
	c.ManagementClusterSchedulings().Assume(written)
	parsed := mcIn(s.Current(), assumedMC)
	require.Equal(t, 1, parsed.Reservations(), "the assumed write is parsed at once")

	// The feed brings the assumed version, then a write of the other MC: handlers run in
	// order, so once the second shows, the first event has been handled too.
	w.store.release(id)
	w.editScheduling(otherMC, func(st *api.SchedulingStatus) {
		st.ObservedResources.Requests[api.SwiftNIC] = "12"
	})
	leftIs(t, s, otherMC, 18, "the later write")
	stored, ok, err := c.ManagementClusterSchedulings().GetStore().GetByKey(api.SchedulingResourceID(assumedMC).Key())
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, written.ETag, stored.(interface{ GetResourceVersion() string }).GetResourceVersion(), "the feed delivered the assumed version")
	assert.Same(t, parsed, mcIn(s.Current(), assumedMC), "the feed's copy of the assumed version was not parsed again")

	w.editScheduling(assumedMC, func(st *api.SchedulingStatus) {
		st.ObservedResources.Requests[api.SwiftNIC] = "9"
	})
	after := leftIs(t, s, assumedMC, 18, "a newer version of the assumed MC") // 30, less 9 requested and 3 reserved
	assert.NotSame(t, parsed, after, "a new version is parsed")
}

// A cluster an MC lists as not ready or reserved is charged 3 swift NICs while the cache
// does not know it; once it arrives it costs what its kind costs (1 for a SWIFT
// single-replica HCP, 0 for one without VNet integration), an update that leaves its
// kind alone parses nothing, and its delete charges 3 again.
func TestListedClusterCostFollowsTheClusterCache(t *testing.T) {
	tests := []struct {
		name   string
		kind   clusterKind
		listed func(id string) report
		want   int64
	}{
		{"SWIFT single replica, not ready", swiftSingle, func(id string) report { return report{ceiling: 30, notReady: []string{id}} }, 29},
		{"SWIFT single replica, reserved", swiftSingle, func(id string) report { return report{ceiling: 30, pending: []string{id}} }, 29},
		{"without VNet integration, not ready", nonSwiftHA, func(id string) report { return report{ceiling: 30, notReady: []string{id}} }, 30},
		{"without VNet integration, reserved", nonSwiftHA, func(id string) report { return report{ceiling: 30, pending: []string{id}} }, 30},
		{"without VNet integration, in both lists", nonSwiftHA, func(id string) report {
			return report{ceiling: 30, notReady: []string{id}, pending: []string{id}}
		}, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			listed, marker := clusterID("listed"), clusterID("marker")
			rid := w.mc(api.ManagementClusterResourceID("1"))
			// The report's casing is the annotation's; the cache compares it folded.
			r := tt.listed(listed.String())
			r.pending = append(r.pending, marker.Key())
			w.scheduling(rid, r)
			other := w.mc(api.ManagementClusterResourceID("2"))
			w.scheduling(other, report{ceiling: 30})
			s, _ := w.start(placement.DefaultConfig())
			var parses atomic.Int64
			s.Listen(func(_, updated *placement.MC) {
				if updated != nil && updated.ID() == rid.String() {
					parses.Add(1)
				}
			})
			unknown := 30 - 3*int64(len(r.notReady)+len(r.pending))
			leftIs(t, s, rid, unknown, "listed clusters the cache does not know")
			untouched := mcIn(s.Current(), other)

			w.cluster(listed, tt.kind)
			known := leftIs(t, s, rid, tt.want-3, "the listed cluster arrived")
			assert.Same(t, untouched, mcIn(s.Current(), other), "an MC that does not list the cluster is not parsed again")

			// An update that changes nothing of its kind, then the marker's arrival, which
			// the same handler hears of after it: only the marker parses the MC again.
			parses.Store(0)
			w.editCluster(listed, func(p *api.ClusterProperties) { p.ServiceProviderProperties.ProvisioningState = "Provisioning" })
			w.cluster(marker, nonSwiftHA)
			afterMarker := leftIs(t, s, rid, tt.want, "the marker arrived")
			assert.NotSame(t, known, afterMarker)
			assert.Equal(t, int64(1), parses.Load(), "the update of the listed cluster changed nothing it is charged for, so it parsed nothing")

			w.deleteCluster(listed)
			// The marker, known now, costs nothing; the listed cluster 3 per entry again.
			leftIs(t, s, rid, unknown+3, "the listed cluster left the cache: charged 3 again")
		})
	}
}

// A listed cluster whose kind changes in the cache is charged its new cost.
func TestListedClusterKindChange(t *testing.T) {
	w := newWorld(t)
	listed := clusterID("listed")
	rid := w.mc(api.ManagementClusterResourceID("1"))
	w.scheduling(rid, report{ceiling: 30, pending: []string{listed.Key()}})
	w.cluster(listed, swiftHA)
	s, _ := w.start(placement.DefaultConfig())
	leftIs(t, s, rid, 27, "SWIFT HA")
	for _, step := range []struct {
		kind clusterKind
		want int64
	}{{swiftSingle, 29}, {nonSwiftHA, 30}, {swiftHA, 27}} {
		w.editCluster(listed, func(p *api.ClusterProperties) { setKind(p, step.kind) })
		leftIs(t, s, rid, step.want, fmt.Sprintf("kind %+v", step.kind))
	}
}

// costed counts swift NICs, cpu and memory, so that HCPResourceRequirements can give
// per-HCP costs of the last two.
func costed(source string) placement.Config {
	cfg := placement.DefaultConfig()
	cfg.Resources = append(cfg.Resources,
		placement.ResourceCost{Name: "cpu", HA: resource.MustParse("2"), SingleReplica: resource.MustParse("1")},
		placement.ResourceCost{Name: "memory", HA: resource.MustParse("8Gi"), SingleReplica: resource.MustParse("4Gi")},
	)
	cfg.CostSource = source
	return cfg
}

// requirementsFixture is ARO-HCP's HCPResourceRequirements document as the fleet
// stores it, edited.
func requirementsFixture(t *testing.T, edit func(doc map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(arohcp.Get("constructed/fleet-hcpresourcerequirements-default.json"), &doc))
	arohcp.WithoutSystemProperties(doc)
	if edit != nil {
		edit(doc)
	}
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	return b
}

func requirementsStatus(doc map[string]any) map[string]any {
	return doc["properties"].(map[string]any)["status"].(map[string]any)
}

// Under CostSourceRequirements, the HCPResourceRequirements document decides the per-HCP
// cpu and memory costs: its arrival switches the model and parses every MC again with
// it; a document that cannot be used, or none, falls back to the flags with the reason.
func TestRequirementsDocumentSwitchesTheModel(t *testing.T) {
	tests := []struct {
		name       string
		edit       func(doc map[string]any)
		wantSource string
		wantReason placement.FallbackReason
		// wantCPU is the cpu left on the MC that reserves one unknown cluster.
		wantCPU int64
	}{
		{"as the fleet computes it", nil, placement.CostSourceRequirements, "", 316400 - 7260 - 3630},
		{"no data (DataCurrent False, NoData)", func(doc map[string]any) {
			st := requirementsStatus(doc)
			st["conditions"] = []any{map[string]any{"type": "DataCurrent", "status": "False", "reason": "NoData", "lastTransitionTime": "2026-08-21T09:30:09Z"}}
			st["sampleSize"] = 0
			delete(st, "averageUsage")
			delete(st, "averageRequests")
		}, placement.CostSourceFlags, placement.FallbackNotCurrent, 316400 - 7260 - 2000},
		{"an average that is no quantity", func(doc map[string]any) {
			requirementsStatus(doc)["averageRequests"].(map[string]any)["cpu"] = "three and a half cores"
		}, placement.CostSourceFlags, placement.FallbackInvalidQuantity, 316400 - 7260 - 2000},
		{"no samples", func(doc map[string]any) { requirementsStatus(doc)["sampleSize"] = 0 }, placement.CostSourceFlags, placement.FallbackNoSamples, 316400 - 7260 - 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			reserving := w.mc(api.ManagementClusterResourceID("1"))
			w.scheduling(reserving, report{ceiling: 30, pending: []string{clusterID("unknown").Key()}})
			idle := w.mc(api.ManagementClusterResourceID("2"))
			w.scheduling(idle, report{ceiling: 30})
			s, _ := w.start(costed(placement.CostSourceRequirements))
			before := s.Current()
			source, reason := before.Model.Costs()
			assert.Equal(t, placement.CostSourceFlags, source)
			assert.Equal(t, placement.FallbackNoDocument, reason, "no document yet")
			assert.Equal(t, int64(316400-7260-2000), cpuLeft(t, before, reserving), "the flags' 2 cpu per HCP")

			_, err := w.fleet.Create(t.Context(), api.HCPResourceRequirementsDefaultName, requirementsFixture(t, tt.edit))
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				source, reason := s.Current().Model.Costs()
				return source == tt.wantSource && reason == tt.wantReason
			}, within, tick, "the document's arrival resolves the costs again")

			v := s.Current()
			for _, rid := range []*api.ResourceID{reserving, idle} {
				assert.NotSame(t, mcIn(before, rid), mcIn(v, rid), "%s was parsed again with the new model", rid)
			}
			assert.Equal(t, tt.wantCPU, cpuLeft(t, v, reserving))
			assert.Equal(t, []int64{0, 3000, 1000}, []int64{v.Model.Cost(placement.Cluster{})[0], v.Model.Cost(placement.Cluster{Swift: true})[0],
				v.Model.Cost(placement.Cluster{Swift: true, SingleReplica: true})[0]}, "swift NICs keep the 0/1/3 rule whatever the document says")
		})
	}
}

// The document's life after it arrived: a NoData recomputation falls back, a good one
// switches back, its delete falls back for want of a document.
func TestRequirementsDocumentLifecycle(t *testing.T) {
	w := newWorld(t)
	rid := w.mc(api.ManagementClusterResourceID("1"))
	w.scheduling(rid, report{ceiling: 30})
	_, err := w.fleet.Create(t.Context(), api.HCPResourceRequirementsDefaultName, requirementsFixture(t, nil))
	require.NoError(t, err)
	s, _ := w.start(costed(placement.CostSourceRequirements))
	costsAre := func(source string, reason placement.FallbackReason, msg string) {
		t.Helper()
		require.Eventually(t, func() bool {
			got, why := s.Current().Model.Costs()
			return got == source && why == reason
		}, within, tick, msg)
	}
	costsAre(placement.CostSourceRequirements, "", "the document was there when the caches started")

	edit := func(f func(st *api.HCPResourceRequirementsStatus)) {
		doc, err := database.Get[api.HCPResourceRequirementsProperties](t.Context(), w.fleet, api.HCPResourceRequirementsDefaultName, api.HCPResourceRequirementsDefaultID)
		require.NoError(t, err)
		f(doc.Properties.Status)
		_, err = database.Replace(t.Context(), w.fleet, doc)
		require.NoError(t, err)
	}
	edit(func(st *api.HCPResourceRequirementsStatus) {
		api.SetCondition(&st.Conditions, api.Condition{Type: api.HCPResourceRequirementsConditionDataCurrent, Status: api.ConditionFalse, Reason: api.HCPResourceRequirementsReasonNoData}, time.Now())
	})
	costsAre(placement.CostSourceFlags, placement.FallbackNotCurrent, "NoData")
	edit(func(st *api.HCPResourceRequirementsStatus) {
		api.SetCondition(&st.Conditions, api.Condition{Type: api.HCPResourceRequirementsConditionDataCurrent, Status: api.ConditionTrue, Reason: api.HCPResourceRequirementsReasonComputed}, time.Now())
	})
	costsAre(placement.CostSourceRequirements, "", "computed again")
	w.softDelete(w.fleet, api.HCPResourceRequirementsDefaultName, api.HCPResourceRequirementsDefaultID)
	costsAre(placement.CostSourceFlags, placement.FallbackNoDocument, "deleted")
}

func cpuLeft(t *testing.T, v *candidates.View, rid *api.ResourceID) int64 {
	t.Helper()
	mc := mcIn(v, rid)
	require.NotNil(t, mc)
	available, ok := mc.Available()
	require.True(t, ok)
	for i, name := range v.Model.Resources() {
		if name == "cpu" {
			return available[i]
		}
	}
	t.Fatal("cpu is not counted")
	return 0
}

// The snapshot says it has synced only once its handlers have parsed what the caches
// first listed: the caches' own sync comes first, and a process that decided then would
// see MCs missing.
func TestSnapshotSyncsAfterItsHandlers(t *testing.T) {
	w := newWorld(t)
	for i := range 3 {
		rid := w.mc(api.ManagementClusterResourceID(fmt.Sprint(i)))
		w.scheduling(rid, report{ceiling: 30})
	}
	f, err := informers.NewFactory(w.store, informers.Options{PollInterval: 5 * time.Millisecond, RelistPeriod: time.Hour, Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	s, err := candidates.New(informers.NewCaches(f), placement.DefaultConfig())
	require.NoError(t, err)
	release, blocked := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.Listen(func(_, _ *placement.MC) {
		// The first parse waits, as a slow handler behind a large initial list would.
		once.Do(func() {
			close(blocked)
			<-release
		})
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f.Start(ctx)
	require.True(t, f.WaitForCacheSync(ctx))
	<-blocked
	assert.False(t, s.HasSynced(), "the caches have synced, the snapshot has not")
	close(release)
	require.True(t, cache.WaitForCacheSync(ctx.Done(), s.HasSynced))
	v := s.Current()
	require.Len(t, v.MCs, 3)
	for _, mc := range v.MCs {
		assert.NotNil(t, mc.Scheduling, "%s is paired with its scheduling document", mc.ID())
	}
}

// Readers take views while events arrive: run with -race. Every view is in key order,
// holds MCs parsed with its own model, and never changes once taken.
func TestCurrentWhileEventsArrive(t *testing.T) {
	w := newWorld(t)
	const mcs = 8
	var ids []*api.ResourceID
	for i := range mcs {
		rid := w.mc(api.ManagementClusterResourceID(fmt.Sprint(i)))
		w.scheduling(rid, report{ceiling: 300, notReady: []string{clusterID(fmt.Sprint("listed-", i)).Key()}})
		ids = append(ids, rid)
	}
	s, c := w.start(placement.DefaultConfig())
	room := candidates.NewWaitingRoom(s, time.Now)
	_, err := room.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) {}})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	var readers sync.WaitGroup
	type taken struct {
		view *candidates.View
		mcs  []*placement.MC
	}
	var views [4][]taken
	for r := range views {
		readers.Go(func() {
			cluster := placement.Cluster{ResourceID: clusterID(fmt.Sprint("reader-", r)).String(), Swift: true}
			for ctx.Err() == nil {
				v := s.Current()
				var keys []string
				for _, mc := range v.MCs {
					keys = append(keys, informers.KeyOf(mc.ID()))
					mc.Available()
				}
				assert.IsIncreasing(t, keys)
				v.Model.Decide(cluster, v.MCs, time.Now())
				if n := len(views[r]); n == 0 || views[r][n-1].view != v {
					views[r] = append(views[r], taken{view: v, mcs: append([]*placement.MC(nil), v.MCs...)})
				}
				room.Wait(cluster.ResourceID, cluster)
			}
		})
	}
	for i := range 40 {
		rid := ids[i%mcs]
		written := w.editScheduling(rid, func(st *api.SchedulingStatus) {
			st.ObservedResources.Usage[api.SwiftNIC] = fmt.Sprint(i)
			st.ObservedResources.Requests[api.SwiftNIC] = fmt.Sprint(i)
		})
		if i%3 == 0 {
			c.ManagementClusterSchedulings().Assume(written)
		}
		if i%10 == 0 {
			w.mc(api.ManagementClusterResourceID(fmt.Sprint("new-", i)))
		}
		if i%5 == 0 {
			// A listed cluster arrives: its MC is parsed again from the cluster handler.
			w.cluster(clusterID(fmt.Sprint("listed-", i/5)), nonSwiftHA)
		}
	}
	// MC 7's listed cluster (listed-7) arrived at i = 35, costing nothing.
	leftIs(t, s, ids[39%mcs], 300-39, "the last write")
	cancel()
	readers.Wait()
	for r := range views {
		require.NotEmpty(t, views[r])
		for _, tk := range views[r] {
			assert.Equal(t, tk.mcs, tk.view.MCs, "a view taken never changes")
		}
	}
}

// The fleet rewrites the requirements document every five minutes, if only its
// lastReportedAt: a rewrite that leaves every per-HCP cost as it was parses no MC again
// (at 1,000 MCs that is some 17 ms under the snapshot's lock, every decision waiting).
func TestRequirementsRewrittenAlikeParsesNothing(t *testing.T) {
	w := newWorld(t)
	for i := range 2 {
		rid := w.mc(api.ManagementClusterResourceID(fmt.Sprint(i + 1)))
		w.scheduling(rid, report{ceiling: 30})
	}
	_, err := w.fleet.Create(t.Context(), api.HCPResourceRequirementsDefaultName, requirementsFixture(t, nil))
	require.NoError(t, err)
	s, c := w.start(costed(placement.CostSourceRequirements))
	source, _ := s.Current().Model.Costs()
	require.Equal(t, placement.CostSourceRequirements, source)
	var parses atomic.Int64
	s.Listen(func(_, _ *placement.MC) { parses.Add(1) })
	before := s.Current()

	requirements := c.HCPResourceRequirements().Lister()
	edit := func(f func(st *api.HCPResourceRequirementsStatus)) string {
		doc, err := database.Get[api.HCPResourceRequirementsProperties](t.Context(), w.fleet, api.HCPResourceRequirementsDefaultName, api.HCPResourceRequirementsDefaultID)
		require.NoError(t, err)
		f(doc.Properties.Status)
		written, err := database.Replace(t.Context(), w.fleet, doc)
		require.NoError(t, err)
		return written.ETag
	}
	etag := edit(func(st *api.HCPResourceRequirementsStatus) {
		st.LastReportedAt = st.LastReportedAt.Add(5 * time.Minute)
	})
	// Cached before the next write, so that the handler hears of both, in order.
	require.Eventually(t, func() bool {
		d, err := requirements.Get(api.HCPResourceRequirementsDefaultID)
		return err == nil && d.ETag == etag
	}, within, tick)
	edit(func(st *api.HCPResourceRequirementsStatus) { st.AverageRequests["cpu"] = "4" })
	require.Eventually(t, func() bool {
		cpu := s.Current().Model.Cost(placement.Cluster{Swift: true})[1]
		return cpu == 4000
	}, within, tick, "the second rewrite changes the cpu cost")

	assert.Equal(t, int64(2), parses.Load(), "only the rewrite that changed a cost parsed the two MCs again")
	for _, mc := range before.MCs {
		assert.NotSame(t, mc, mcIn(s.Current(), api.MustParseResourceID(mc.ID())))
	}
}
