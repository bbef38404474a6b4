package placement

import (
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/internal/api"
)

// Cluster is what the engine needs to know of the cluster being placed.
type Cluster struct {
	ResourceID    string
	SingleReplica bool
}

// Candidate is one MC as the caches hold it. Scheduling is nil when the MC has no
// scheduling document yet.
type Candidate struct {
	ManagementCluster *api.ManagementCluster
	Scheduling        *api.ManagementClusterScheduling
}

// SingleReplicaLookup says whether a cluster that an MC counts as not ready or reserved
// is single-replica. Clusters it does not know cost as much as an HA one: better to
// under-commit an MC than to overcommit it.
type SingleReplicaLookup func(clusterResourceID string) (singleReplica, known bool)

// Decide places one cluster. It never fails: whatever it cannot judge becomes a reason.
func Decide(cluster Cluster, candidates []Candidate, cfg Config, lookup SingleReplicaLookup, now time.Time) Decision {
	d := Decision{Chosen: -1, Verdicts: make([]Verdict, len(candidates))}
	if len(candidates) == 0 {
		d.Outcome = OutcomeNoManagementClusters
		return d
	}
	e := evaluation{cluster: cluster, cfg: cfg, lookup: lookup, now: now}
	reserved := -1
	for i, c := range candidates {
		v, holdsReservation := e.judge(c)
		d.Verdicts[i] = v
		if v.Reason == "" && holdsReservation && (reserved < 0 || lowerID(c) < lowerID(candidates[reserved])) {
			reserved = i
		}
	}
	if reserved >= 0 {
		// A crash between reserving and recording left this reservation: reuse it rather
		// than take a second one elsewhere.
		d.Outcome, d.Chosen, d.Reused = OutcomePlaced, reserved, true
		return d
	}
	d.Chosen = choose(cluster, candidates, d.Verdicts, cfg.Tolerance)
	if d.Chosen >= 0 {
		d.Outcome = OutcomePlaced
		return d
	}
	d.Outcome = classify(d.Verdicts)
	return d
}

type evaluation struct {
	cluster Cluster
	cfg     Config
	lookup  SingleReplicaLookup
	now     time.Time
}

// filter is one feasibility check, in the style of a kube-scheduler filter plugin.
type filter func(e *evaluation, c Candidate) (Reason, string)

// filters run in order; the first rejection is the MC's reason.
var filters = []filter{filterSchedulable, filterReady, filterHasSchedulingData, filterFreshData, filterCompleteUsage}

func filterSchedulable(_ *evaluation, c Candidate) (Reason, string) {
	if spec := c.ManagementCluster.Properties.Spec; spec == nil || spec.SchedulingPolicy != api.Schedulable {
		return ReasonUnschedulable, "cordoned"
	}
	return "", ""
}

func filterReady(_ *evaluation, c Candidate) (Reason, string) {
	st := c.ManagementCluster.Properties.Status
	if st == nil || !api.IsConditionTrue(st.Conditions, api.ManagementClusterConditionReady) {
		return ReasonNotReady, "Ready is not True"
	}
	// A cluster is created pinned to its MC's provision shard: without one it could never
	// be created there (and one that lost its shard sends its clusters back to placement).
	if st.ClusterServiceProvisionShardID == "" {
		return ReasonNotReady, "no Cluster Service provision shard"
	}
	return "", ""
}

func filterHasSchedulingData(e *evaluation, c Candidate) (Reason, string) {
	st := schedulingStatus(c)
	if st == nil || st.ObservedResources == nil || st.ScaleCeiling == nil {
		return ReasonNoSchedulingData, "no scheduling document"
	}
	for _, r := range e.cfg.Resources {
		if _, ok := st.ScaleCeiling.Capacity[r.Name]; !ok {
			return ReasonNoSchedulingData, "no scale ceiling for " + r.Name
		}
	}
	return "", ""
}

func filterFreshData(e *evaluation, c Candidate) (Reason, string) {
	st := schedulingStatus(c)
	for _, cond := range []string{api.SchedulingConditionCapacityDataCurrent, api.SchedulingConditionScalingDataCurrent} {
		if !api.IsConditionTrue(st.Conditions, cond) {
			return ReasonStaleCapacityData, cond + " is not True"
		}
	}
	reported := st.ObservedResources.LastReportedAt
	if reported.IsZero() {
		return ReasonStaleCapacityData, "capacity never reported"
	}
	if ReportedInFuture(reported, e.now) {
		// Its age would read negative, so it would be fresh for ever. The time is in the
		// message although the condition is rewritten when the message changes: the fleet
		// does not mirror such reports, so it changes only when a foreign writer's does.
		return ReasonStaleCapacityData, fmt.Sprintf("observedResources.lastReportedAt %s is in the future", reported.UTC().Format(time.RFC3339))
	}
	if e.now.Sub(reported) > e.cfg.MaxCapacityAge {
		// No exact age: the message goes into the SPC condition, which is only rewritten
		// when it changes.
		return ReasonStaleCapacityData, fmt.Sprintf("capacity report older than %s", e.cfg.MaxCapacityAge)
	}
	return "", ""
}

// filterCompleteUsage rejects a report whose usage lacks a counted resource, which
// would count as nothing used and make a busy MC look empty.
func filterCompleteUsage(e *evaluation, c Candidate) (Reason, string) {
	if r, missing := missingUsage(schedulingStatus(c), e.cfg.Resources); missing {
		return ReasonStaleCapacityData, "observedResources.usage has no " + r
	}
	return "", ""
}

// missingUsage names the first counted resource that observedResources.usage lacks where
// the absence cannot mean zero. The MC's agent sums its HCPs' pods, so on an MC running
// no HCP it reports usage {}: absent is zero there, else a new MC could never be placed
// on. An MC that reports HCPs, ready or not, and no usage of a counted resource has a
// broken report.
func missingUsage(st *api.SchedulingStatus, resources []ResourceCost) (string, bool) {
	if !reportsHCPs(st) {
		return "", false
	}
	var usage api.ResourceList
	if st.ObservedResources != nil {
		usage = st.ObservedResources.Usage
	}
	for _, r := range resources {
		if _, ok := usage[r.Name]; !ok {
			return r.Name, true
		}
	}
	return "", false
}

// reportsHCPs says whether the MC's last mirrored report shows any hosted control plane.
func reportsHCPs(st *api.SchedulingStatus) bool {
	for _, ids := range [][]string{st.ReadyResourceIDs, st.NotReadyResourceIDs} {
		for _, id := range ids {
			if id != "" {
				return true
			}
		}
	}
	return false
}

func schedulingStatus(c Candidate) *api.SchedulingStatus {
	if c.Scheduling == nil {
		return nil
	}
	return c.Scheduling.Properties.Status
}

// judge runs the filters, computes capacity and scores a feasible MC. It also reports
// whether the MC holds a reservation for this cluster.
func (e *evaluation) judge(c Candidate) (Verdict, bool) {
	v := Verdict{ManagementCluster: c.ManagementCluster.ResourceID}
	for _, f := range filters {
		if reason, detail := f(e, c); reason != "" {
			v.Reason, v.Detail = reason, detail
			return v, false
		}
	}
	st := schedulingStatus(c)
	available, holds, err := e.available(st)
	if err != nil {
		v.Reason, v.Detail = ReasonNoSchedulingData, err.Error()
		return v, false
	}
	v.Available = available
	if holds {
		v.Score = e.score(v, st, 0)
		return v, true
	}
	for _, r := range e.cfg.Resources {
		need := e.cost(r, e.cluster.SingleReplica)
		if v.Available[r.Name] < need {
			v.Reason = ReasonInsufficientCapacity
			v.Detail = fmt.Sprintf("%s %s available, %s needed", r.Name, formatMilli(v.Available[r.Name]), formatMilli(need))
			return v, false
		}
	}
	v.Score = e.score(v, st, e.cost(e.cfg.Resources[0], e.cluster.SingleReplica))
	return v, false
}

// available is ceiling − usage − what not-ready HCPs and reservations hold, per counted
// resource, in milli-units; holds says whether this cluster is among the reservations.
func (e *evaluation) available(st *api.SchedulingStatus) (map[string]int64, bool, error) {
	committed, holds := e.committed(st)
	out := map[string]int64{}
	for _, r := range e.cfg.Resources {
		var ceiling, usage int64
		var err1, err2 error
		if st.ScaleCeiling != nil {
			ceiling, err1 = quantityOf(st.ScaleCeiling.Capacity, r.Name)
		}
		if st.ObservedResources != nil {
			usage, err2 = quantityOf(st.ObservedResources.Usage, r.Name)
		}
		if err1 != nil || err2 != nil {
			return nil, false, fmt.Errorf("unparsable quantity for %s", r.Name)
		}
		out[r.Name] = ceiling - usage - committed[r.Name]
	}
	return out, holds, nil
}

// Capacity reports what an MC has left of each counted resource, in milli-units, and
// how many reservations it holds, whatever the filters say of it; metrics use it. ok is
// false when the MC has no scheduling data, an unparsable quantity, or usage that lacks
// a counted resource while HCPs run (it would overstate what is left).
func Capacity(c Candidate, cfg Config, lookup SingleReplicaLookup) (available map[string]int64, reservations int, ok bool) {
	st := schedulingStatus(c)
	if st == nil {
		return nil, 0, false
	}
	if _, missing := missingUsage(st, cfg.Resources); missing {
		return nil, 0, false
	}
	e := evaluation{cfg: cfg, lookup: lookup}
	available, _, err := e.available(st)
	if err != nil {
		return nil, 0, false
	}
	for _, id := range st.PendingAssignedClusters {
		if id != "" {
			reservations++
		}
	}
	return available, reservations, true
}

// committed sums what the MC's not-ready HCPs and reservations hold, each cluster once
// (a cluster can briefly be both), and says whether this cluster is among the
// reservations.
func (e *evaluation) committed(st *api.SchedulingStatus) (map[string]int64, bool) {
	seen := map[string]bool{}
	holds := false
	total := map[string]int64{}
	add := func(id string, reservation bool) {
		key := strings.ToLower(id)
		if key == "" || seen[key] {
			return
		}
		seen[key] = true
		if reservation && api.ResourceIDsEqual(id, e.cluster.ResourceID) {
			holds = true
		}
		single, known := false, false
		if e.lookup != nil {
			single, known = e.lookup(id)
		}
		for _, r := range e.cfg.Resources {
			total[r.Name] += e.cost(r, known && single)
		}
	}
	for _, id := range st.NotReadyResourceIDs {
		add(id, false)
	}
	for _, id := range st.PendingAssignedClusters {
		add(id, true)
	}
	return total, holds
}

func (e *evaluation) cost(r ResourceCost, singleReplica bool) int64 {
	if singleReplica {
		return r.SingleReplica.MilliValue()
	}
	return r.HA.MilliValue()
}

// score ranks a feasible MC by what is left of the first resource once this cluster is
// placed (spread: more is better; bin-pack: less is better), less a penalty per pending
// reservation: MCs with many placements in flight have the most uncertain numbers.
func (e *evaluation) score(v Verdict, st *api.SchedulingStatus, need int64) float64 {
	left := float64(v.Available[e.cfg.Resources[0].Name]-need) / 1000
	if e.cfg.Weigher == WeigherBinPack {
		left = -left
	}
	pending := 0
	for _, id := range st.PendingAssignedClusters {
		if id != "" && !api.ResourceIDsEqual(id, e.cluster.ResourceID) {
			pending++
		}
	}
	return left - e.cfg.PendingMultiplier*float64(pending)
}

// choose picks among feasible MCs: every MC within tolerance of the best score is a
// contender, and the cluster's rendezvous hash over them picks one. The choice is
// deterministic for a cluster and a cache snapshot, yet different clusters deciding from
// the same snapshot spread over the contenders instead of all taking the best MC and
// losing the etag race to each other. With no tolerance, the best score wins and ties go
// to the lowest lowercased resource ID.
func choose(cluster Cluster, candidates []Candidate, verdicts []Verdict, tolerance float64) int {
	best := math.Inf(-1)
	for _, v := range verdicts {
		if v.Reason == "" && v.Score > best {
			best = v.Score
		}
	}
	var contenders []int
	for i, v := range verdicts {
		if v.Reason == "" && v.Score >= best-tolerance {
			contenders = append(contenders, i)
		}
	}
	if len(contenders) == 0 {
		return -1
	}
	sort.Slice(contenders, func(a, b int) bool { return lowerID(candidates[contenders[a]]) < lowerID(candidates[contenders[b]]) })
	if tolerance == 0 {
		return contenders[0]
	}
	chosen, top := -1, uint64(0)
	for _, i := range contenders {
		if h := rendezvous(cluster.ResourceID, lowerID(candidates[i])); chosen < 0 || h > top {
			chosen, top = i, h
		}
	}
	return chosen
}

func rendezvous(clusterID, mcID string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(strings.ToLower(clusterID)))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(mcID))
	return h.Sum64()
}

func lowerID(c Candidate) string { return strings.ToLower(c.ManagementCluster.ResourceID) }

// classify names why nothing fits. Missing or stale data wins over exhaustion: capacity
// may exist where the engine could not look.
func classify(verdicts []Verdict) Outcome {
	var capacity, data bool
	for _, v := range verdicts {
		switch v.Reason {
		case ReasonInsufficientCapacity:
			capacity = true
		case ReasonNoSchedulingData, ReasonStaleCapacityData:
			data = true
		}
	}
	switch {
	case data:
		return OutcomeStaleData
	case capacity:
		return OutcomeCapacityExhausted
	default:
		return OutcomeNoEligible
	}
}

// quantityOf is a resource of a list in milli-units. An absent resource is 0: the filters
// have already rejected the MCs where absence cannot mean that. A present but empty value
// is no quantity.
func quantityOf(l api.ResourceList, name string) (int64, error) {
	q, ok := l[name]
	if !ok {
		return 0, nil
	}
	return parseMilli(q)
}

func parseMilli(q string) (int64, error) {
	v, err := ParseQuantity(q)
	if err != nil {
		return 0, err
	}
	return v.MilliValue(), nil
}

// Bounds of ParseQuantity. No amount placement counts comes near them; they exist because
// the documents are written by other programs.
const (
	maxQuantityLength = 64
	// maxExponentDigits bounds a decimal exponent ("1e15"): apimachinery's parser and
	// Quantity arithmetic build a big number with as many digits as the exponent says, so
	// "1e-300000000" takes minutes to parse, and adding "1m" to "1e300000000" as long.
	maxExponentDigits = 2
)

var maxCountable = *resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)

// ParseQuantity parses a quantity the engine can count: an amount, so not negative, whose
// milli-units fit an int64, spelled so that parsing it takes bounded time.
// Quantity.MilliValue silently wraps beyond that range, which would turn a huge ceiling
// into a negative one, and it also miscounts some negative quantities of many digits.
// Whoever writes quantities for placement to read (the fleet's capacity and ceiling)
// checks them with this, so that what is written is what placement can count.
func ParseQuantity(s string) (resource.Quantity, error) {
	if len(s) > maxQuantityLength {
		return resource.Quantity{}, fmt.Errorf("quantity %.*q... is longer than %d characters", maxQuantityLength, s, maxQuantityLength)
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 && len(strings.TrimLeft(s[i+1:], "+-")) > maxExponentDigits {
		return resource.Quantity{}, fmt.Errorf("quantity %q: exponent has more than %d digits", s, maxExponentDigits)
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("quantity %q: %w", s, err)
	}
	if q.Sign() < 0 {
		return resource.Quantity{}, fmt.Errorf("quantity %q is negative", s)
	}
	if q.Cmp(maxCountable) > 0 {
		return resource.Quantity{}, fmt.Errorf("quantity %q is beyond what int64 milli-units hold", s)
	}
	return q, nil
}

func formatMilli(m int64) string {
	return resource.NewMilliQuantity(m, resource.DecimalSI).String()
}
