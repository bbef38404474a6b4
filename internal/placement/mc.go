package placement

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
)

// Candidate is one MC as the caches hold it. Scheduling is nil when the MC has no
// scheduling document yet.
type Candidate struct {
	ManagementCluster *api.ManagementCluster
	Scheduling        *api.ManagementClusterScheduling
}

// MC is one management cluster parsed for decisions: its documents, what its documents
// alone say of it (the static filters' verdict), and what it has left of each counted
// resource before any new cluster. It is built once per version of its documents
// (NewMC) and then read by every decision, the metrics and the headroom gauge, so that a
// decision is a loop over ready-made numbers. An MC is immutable once built.
type MC struct {
	// ManagementCluster and Scheduling are the documents it was built from, the caches'
	// own: read them, or DeepCopy before a change. Scheduling is nil when the MC has no
	// scheduling document.
	ManagementCluster *api.ManagementCluster
	Scheduling        *api.ManagementClusterScheduling

	model *Model
	// key is the lowercased resource ID: ties, hashes and reservations compare by it;
	// hash is its keyHash, for the rendezvous choice.
	key    string
	hash   uint64
	status *api.SchedulingStatus

	// rejectAt is the index in filters of the first static filter that rejects the MC,
	// len(filters) when none does; reasonCode and detail are what it said.
	rejectAt   int
	reasonCode uint8
	detail     string

	// conditions names the first scheduling condition that is not True, "" when both are.
	conditions string
	reportedAt time.Time
	// reportedNanos is reportedAt in Unix nanoseconds.
	reportedNanos int64
	// futureDetail is the detail of a report dated beyond the clock-skew allowance.
	futureDetail string

	// counted is false when a quantity of a counted resource could not be counted; then
	// countErr says which, and ceiling and available are unset.
	counted   bool
	countErr  string
	ceiling   []int64
	available []int64
	// missingUsage names a counted resource the report lacks where absence cannot mean
	// zero (CompleteUsage), "" when none.
	missingUsage string
	// pending are the MC's reservations, lowercased, empty entries left out, and
	// pendingHashes their keyHash.
	pending       []string
	pendingHashes []uint64
}

// NewMC parses an MC's documents for m's decisions. lookup finds the clusters the MC
// lists as not ready or reserved, whose cost is held on the MC; it is called now, not at
// decision time, so an MC must be rebuilt when a cluster it lists changes.
func (m *Model) NewMC(mc *api.ManagementCluster, sched *api.ManagementClusterScheduling, lookup ClusterLookup) *MC {
	out := &MC{ManagementCluster: mc, Scheduling: sched, model: m, key: strings.ToLower(mc.ResourceID)}
	out.hash = keyHash(out.key)
	if sched != nil {
		out.status = sched.Properties.Status
	}
	if st := out.status; st != nil {
		for _, id := range st.PendingAssignedClusters {
			if id != "" {
				key := strings.ToLower(id)
				out.pending = append(out.pending, key)
				out.pendingHashes = append(out.pendingHashes, keyHash(key))
			}
		}
		for _, cond := range []string{api.SchedulingConditionCapacityDataCurrent, api.SchedulingConditionScalingDataCurrent} {
			if !api.IsConditionTrue(st.Conditions, cond) {
				out.conditions = cond
				break
			}
		}
		if st.ObservedResources != nil {
			out.reportedAt = st.ObservedResources.LastReportedAt
			out.reportedNanos = unixNanos(out.reportedAt)
			out.futureDetail = fmt.Sprintf("observedResources.lastReportedAt %s is in the future", out.reportedAt.UTC().Format(time.RFC3339))
		}
		out.count(lookup)
		out.missingUsage = missingUsage(st, m)
	}
	out.rejectAt = len(filters)
	for i, f := range filters {
		if !f.static() {
			continue
		}
		if reason, detail := f.check(&judgement{mc: out}); reason != "" {
			out.rejectAt, out.reasonCode, out.detail = i, reasonCode(reason), detail
			break
		}
	}
	return out
}

// count works out what the MC has left of each counted resource, as ARO-HCP's placement
// does: the scale ceiling, less the larger of what the MC's hosted control planes use
// and request, less the cost of every cluster listed as not ready or reserved
// (docs/placement.md, "Counting capacity").
func (mc *MC) count(lookup ClusterLookup) {
	st, m := mc.status, mc.model
	n := len(m.names)
	ceiling, available := make([]int64, n), make([]int64, n)
	var usage, requests, ceilings api.ResourceList
	if st.ObservedResources != nil {
		usage, requests = st.ObservedResources.Usage, st.ObservedResources.Requests
	}
	if st.ScaleCeiling != nil {
		ceilings = st.ScaleCeiling.Capacity
	}
	for i, name := range m.names {
		c, err1 := quantityOf(ceilings, name)
		u, err2 := quantityOf(usage, name)
		r, err3 := quantityOf(requests, name)
		if err1 != nil || err2 != nil || err3 != nil {
			mc.countErr = "unparsable quantity for " + name
			return
		}
		ceiling[i], available[i] = c, c-max(u, r)
	}
	// Each entry is charged, as upstream charges it: a cluster both not ready and reserved
	// is charged twice, but the fleet drops a reservation in the very write that reports
	// its cluster, so the two lists do not overlap for long.
	for _, ids := range [][]string{st.NotReadyResourceIDs, st.PendingAssignedClusters} {
		for _, id := range ids {
			if id == "" {
				continue
			}
			for i, cost := range m.costOf(id, lookup) {
				available[i] = minusSaturated(available[i], cost)
			}
		}
	}
	mc.counted, mc.ceiling, mc.available = true, ceiling, available
}

// unixNanos is t in Unix nanoseconds, clamped to [0, math.MaxInt64]. UnixNano wraps
// round outside 1678–2262, so a report dated 2^64 ns (584 years) from now would read as
// taken now; clamped, one before 1970 reads as old and one after 2262 as ahead, and the
// freshness check's differences with a present-day clock cannot overflow.
func unixNanos(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, 0)):
		return 0
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// minusSaturated is a − b for b ≥ 0, math.MinInt64 where that would wrap round: a
// document may report up to math.MaxInt64 milli-units used, and the costs charged on top
// must leave the MC overcommitted, not turn it into one with room for anything.
func minusSaturated(a, b int64) int64 {
	if a < math.MinInt64+b {
		return math.MinInt64
	}
	return a - b
}

// ID is the MC's resource ID as stored.
func (mc *MC) ID() string { return mc.ManagementCluster.ResourceID }

// Available is what the MC has left of each counted resource before any new cluster, in
// milli-units, in the order of Model.Resources (the slice is the MC's, read it only),
// whatever the filters say of it; the metrics export it. ok is false when the MC has no
// scheduling data or a quantity that cannot be counted, or its usage lacks a resource
// that would then count as unused.
func (mc *MC) Available() (available []int64, ok bool) {
	if mc.status == nil || !mc.counted || mc.missingUsage != "" {
		return nil, false
	}
	return mc.available, true
}

// Reservations is how many reservations (pendingAssignedClusters entries) the MC holds.
func (mc *MC) Reservations() int { return len(mc.pending) }

// Holds says whether the MC holds a reservation (a pendingAssignedClusters entry) for
// the cluster, its resource ID compared case-insensitively.
func (mc *MC) Holds(clusterID string) bool {
	key := strings.ToLower(clusterID)
	return mc.holds(key, keyHash(key))
}

// holds says whether the MC holds a reservation for the cluster of lowercased ID key,
// whose keyHash is hash: comparing hashes first spares comparing a hundred bytes per
// reservation per MC at every decision.
func (mc *MC) holds(key string, hash uint64) bool {
	for i, h := range mc.pendingHashes {
		if h == hash && mc.pending[i] == key {
			return true
		}
	}
	return false
}

// keyHash hashes a lowercased resource ID.
func keyHash(key string) uint64 { return fnvString(fnvOffset, key) }
