package candidates_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/backend/candidates"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// wakeups records what a waiting room delivers to a handler registered as a controller
// trigger registers it.
type wakeups struct {
	mu     sync.Mutex
	events [][]string
}

func (r *wakeups) handler() cache.ResourceEventHandler {
	record := func(obj any) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events = append(r.events, candidates.WakeupKeys(obj))
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: record, UpdateFunc: func(_, obj any) { record(obj) }, DeleteFunc: record}
}

// woken is every key woken so far, sorted.
func (r *wakeups) woken() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, keys := range r.events {
		out = append(out, keys...)
	}
	slices.Sort(out)
	return out
}

// room is a waiting room over a started snapshot, judging freshness at now.
type room struct {
	*candidates.WaitingRoom
	s       *candidates.Snapshot
	wakeups *wakeups
}

// roomNow is the waiting room's clock; reports are dated by it.
var roomNow = time.Now().UTC().Truncate(time.Second)

func newRoom(t *testing.T, w *world) *room {
	t.Helper()
	s, _ := w.start(placement.DefaultConfig())
	r := &room{WaitingRoom: candidates.NewWaitingRoom(s, func() time.Time { return roomNow }), s: s, wakeups: &wakeups{}}
	_, err := r.AddEventHandler(r.wakeups.handler())
	require.NoError(t, err)
	return r
}

// settled waits until the snapshot has parsed the MC of rid again since it held was
// (nil: since it held none), or dropped it when gone: the room has judged the change by
// then, since the snapshot tells it before publishing.
func (r *room) settled(t *testing.T, rid *api.ResourceID, was *placement.MC, gone bool) {
	t.Helper()
	require.Eventually(t, func() bool {
		now := mcIn(r.s.Current(), rid)
		if gone {
			return now == nil
		}
		return now != nil && now != was
	}, within, tick, "the snapshot parses %s again", rid)
}

func waitingCluster(name string, k clusterKind) (string, placement.Cluster) {
	rid := clusterID(name)
	return rid.Key(), placement.Cluster{ResourceID: rid.String(), Swift: k.swift, SingleReplica: k.singleReplica}
}

func full(r report) report {
	r.ceiling, r.usage, r.requests = 30, 30, 30
	return r
}

// A waiting cluster is woken by exactly the changes of an MC after which it fits there,
// and by no other; a single-replica cluster is woken by changes that leave room for one
// replica, an HA one only by room for three.
func TestWaitingRoomWakesTheClustersThatNowFit(t *testing.T) {
	stale := roomNow.Add(-placement.DefaultMaxCapacityAge - time.Minute)
	cordon := func(p *api.ManagementClusterProperties) { p.Spec.SchedulingPolicy = api.Unschedulable }
	notReady := func(p *api.ManagementClusterProperties) { p.Status.Conditions[0].Status = api.ConditionFalse }
	freeNICs := func(n int) func(w *world, rid *api.ResourceID) {
		return func(w *world, rid *api.ResourceID) {
			w.editScheduling(rid, func(st *api.SchedulingStatus) {
				used := 30 - n
				st.ObservedResources.Usage[api.SwiftNIC] = fmt.Sprint(used)
				st.ObservedResources.Requests[api.SwiftNIC] = fmt.Sprint(used)
			})
		}
	}
	listed := clusterID("listed")
	tests := []struct {
		name   string
		edits  []func(*api.ManagementClusterProperties)
		report report
		change func(w *world, rid *api.ResourceID)
		gone   bool
		wantHA bool
		wantSR bool
	}{
		{name: "a report frees capacity", report: full(report{at: roomNow}), change: freeNICs(3), wantHA: true, wantSR: true},
		{name: "a reservation is dropped", report: report{at: roomNow, ceiling: 30, usage: 27, requests: 27, pending: []string{clusterID("gone").Key()}},
			change: func(w *world, rid *api.ResourceID) {
				w.editScheduling(rid, func(st *api.SchedulingStatus) { st.PendingAssignedClusters = nil })
			}, wantHA: true, wantSR: true},
		{name: "the ceiling rises", report: full(report{at: roomNow}), change: func(w *world, rid *api.ResourceID) {
			w.editScheduling(rid, func(st *api.SchedulingStatus) { st.ScaleCeiling.Capacity[api.SwiftNIC] = "33" })
		}, wantHA: true, wantSR: true},
		{name: "the MC is uncordoned", edits: []func(*api.ManagementClusterProperties){cordon}, report: report{at: roomNow, ceiling: 30},
			change: func(w *world, rid *api.ResourceID) {
				w.editMC(rid, func(p *api.ManagementClusterProperties) { p.Spec.SchedulingPolicy = api.Schedulable })
			}, wantHA: true, wantSR: true},
		{name: "the MC becomes Ready", edits: []func(*api.ManagementClusterProperties){notReady}, report: report{at: roomNow, ceiling: 30},
			change: func(w *world, rid *api.ResourceID) {
				w.editMC(rid, func(p *api.ManagementClusterProperties) { p.Status.Conditions[0].Status = api.ConditionTrue })
			}, wantHA: true, wantSR: true},
		{name: "a listed cluster is found to cost nothing", report: report{at: roomNow, ceiling: 30, usage: 27, requests: 27, notReady: []string{listed.String()}},
			change: func(w *world, _ *api.ResourceID) { w.cluster(listed, nonSwiftHA) }, wantHA: true, wantSR: true},
		{name: "a stale report is replaced by a fresh one", report: report{at: stale, ceiling: 30},
			change: func(w *world, rid *api.ResourceID) {
				w.editScheduling(rid, func(st *api.SchedulingStatus) { st.ObservedResources.LastReportedAt = roomNow })
			}, wantHA: true, wantSR: true},
		{name: "room for one replica", report: full(report{at: roomNow}), change: freeNICs(1), wantSR: true},
		{name: "still full", report: full(report{at: roomNow}), change: freeNICs(0)},
		{name: "a stale report frees capacity", report: full(report{at: stale}), change: freeNICs(30)},
		{name: "a cordoned MC frees capacity", edits: []func(*api.ManagementClusterProperties){cordon}, report: full(report{at: roomNow}), change: freeNICs(30)},
		{name: "a full MC is cordoned", report: full(report{at: roomNow}), change: func(w *world, rid *api.ResourceID) {
			w.editMC(rid, func(p *api.ManagementClusterProperties) { p.Spec.SchedulingPolicy = api.Unschedulable })
		}},
		{name: "a full MC is deleted", report: full(report{at: roomNow}), gone: true, change: func(w *world, rid *api.ResourceID) {
			w.softDelete(w.fleet, fleetPK(w.t, rid), rid.String())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			rid := w.mc(api.ManagementClusterResourceID("1"), tt.edits...)
			w.scheduling(rid, tt.report)
			// Another MC, full: its events never wake anyone.
			other := w.mc(api.ManagementClusterResourceID("2"))
			w.scheduling(other, full(report{at: roomNow}))
			r := newRoom(t, w)
			haKey, ha := waitingCluster("ha", swiftHA)
			srKey, sr := waitingCluster("sr", swiftSingle)
			r.Wait(haKey, ha)
			r.Wait(srKey, sr)
			v := r.s.Current()
			for _, c := range []placement.Cluster{ha, sr} {
				require.NotEqual(t, placement.OutcomePlaced, v.Model.Decide(c, v.MCs, roomNow).Outcome, "%s fits nowhere yet", c.ResourceID)
			}

			was := mcIn(v, rid)
			tt.change(w, rid)
			r.settled(t, rid, was, tt.gone)

			var want []string
			if tt.wantHA {
				want = append(want, haKey)
			}
			if tt.wantSR {
				want = append(want, srKey)
			}
			slices.Sort(want)
			assert.Equal(t, want, r.wakeups.woken(), "the clusters that now fit are woken, and only they")
			assert.Equal(t, 2-len(want), r.Waiting(), "a woken cluster has left the room")
			v = r.s.Current()
			for _, c := range []placement.Cluster{ha, sr} {
				woken := slices.Contains(want, clusterIDKey(c))
				placed := v.Model.Decide(c, v.MCs, roomNow).Outcome == placement.OutcomePlaced
				assert.Equal(t, woken, placed, "%s is woken exactly when a decision would now place it", c.ResourceID)
			}
		})
	}
}

func clusterIDKey(c placement.Cluster) string { return api.MustParseResourceID(c.ResourceID).Key() }

// A woken cluster has left the room: the next change wakes it no more. One that left the
// room (it was placed, or went away) is never woken.
func TestWaitingRoomWakesOnce(t *testing.T) {
	w := newWorld(t)
	rid := w.mc(api.ManagementClusterResourceID("1"))
	w.scheduling(rid, full(report{at: roomNow}))
	r := newRoom(t, w)
	second := &wakeups{}
	_, err := r.AddEventHandler(second.handler())
	require.NoError(t, err)
	wokenKey, woken := waitingCluster("woken", swiftHA)
	leftKey, left := waitingCluster("left", swiftHA)
	r.Wait(wokenKey, woken)
	r.Wait(leftKey, left)
	require.Equal(t, 2, r.Waiting())
	r.Leave(leftKey)
	require.Equal(t, 1, r.Waiting())

	for i, ceiling := range []string{"33", "36"} {
		was := mcIn(r.s.Current(), rid)
		w.editScheduling(rid, func(st *api.SchedulingStatus) { st.ScaleCeiling.Capacity[api.SwiftNIC] = ceiling })
		r.settled(t, rid, was, false)
		assert.Equal(t, []string{wokenKey}, r.wakeups.woken(), "change %d: woken once, the cluster that left never", i+1)
		assert.Equal(t, []string{wokenKey}, second.woken(), "every registered handler hears the wake-up")
		assert.Zero(t, r.Waiting())
	}
}

// The room is a controller trigger: its store is empty, so a resync wakes nobody, and
// its key function reads Wakeups only.
func TestWaitingRoomAsATrigger(t *testing.T) {
	r := candidates.NewWaitingRoom(newRoomSnapshot(t), time.Now)
	assert.Empty(t, r.GetStore().List())
	assert.Equal(t, []string{"a", "b"}, candidates.WakeupKeys(candidates.Wakeup{Keys: []string{"a", "b"}}))
	assert.Nil(t, candidates.WakeupKeys("not a wake-up"))
}

func newRoomSnapshot(t *testing.T) *candidates.Snapshot {
	s, _ := newWorld(t).start(placement.DefaultConfig())
	return s
}
