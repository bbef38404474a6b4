package placement_test

// Phase 2: the dominant weigher and per-HCP costs from ARO-HCP's HCPResourceRequirements
// document. ARO-HCP's contention ranking (placement_controller.go and
// resource_contention_test.go at 31a52ec9) is where the rows of TestDominantScore and
// TestDominantSelection come from, adapted where hcpsched differs on purpose:
//
//   - the denominator is the scale ceiling, not observedResources.capacity (what the MC's
//     nodes hold now): an MC is full when it cannot grow further, and the ceiling is what
//     every other rule of the engine measures against;
//   - every counted resource is in the share, swift NICs too, and so is what the cluster
//     being placed and every listed (not-ready, reserved) cluster costs;
//   - a report that is stale, dated ahead or incomplete is rejected by the filters
//     (FreshCapacityData, SchedulingData, CountableQuantities, CompleteUsage) instead of
//     ranking as "unknown" behind every known score; an MC whose use would exceed a
//     ceiling does not fit, so no share above 100 is ever ranked;
//   - every demand is ranked by its share, SWIFT or not; upstream ranks only zero-NIC
//     (non-SWIFT) placements by contention;
//   - reservations that tip a tie are the MC's non-empty entries, lowercased, each
//     counted (as each is charged), where upstream counts distinct IDs.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// phase2 counts swift NICs (3/1), cpu and memory at the given per-HCP costs, and ranks
// with the dominant weigher at tolerance 0.
func phase2(cpuCost, memoryCost string) placement.Config {
	cfg := exact()
	cfg.Weigher, cfg.DominantTolerance = placement.WeigherDominant, 0
	cfg.Resources = append(cfg.Resources,
		placement.ResourceCost{Name: "cpu", HA: resource.MustParse(cpuCost), SingleReplica: resource.MustParse(cpuCost)},
		placement.ResourceCost{Name: "memory", HA: resource.MustParse(memoryCost), SingleReplica: resource.MustParse(memoryCost)},
	)
	return cfg
}

// contentionBase is upstream's base document for TestResourceContention: 4 cores and 8Gi
// observed, requests 1 core and 2Gi, usage 500m and 1Gi, 30 NICs, reported now. Its scale
// ceiling is what its nodes hold now.
func contentionBase() placement.Candidate {
	c := reportCandidate("1", report{
		ceiling:  api.ResourceList{api.SwiftNIC: "30", "cpu": "4", "memory": "8Gi"},
		requests: api.ResourceList{"cpu": "1", "memory": "2Gi"},
		usage:    api.ResourceList{"cpu": "500m", "memory": "1Gi"},
	})
	c.Scheduling.Properties.Status.ObservedResources.Capacity = api.ResourceList{api.SwiftNIC: "30", "cpu": "4", "memory": "8Gi"}
	return c
}

func TestDominantScore(t *testing.T) {
	// The new cluster costs 1m of cpu and 1Mi of memory, so that each share is upstream's
	// to within 0.03 percentage points.
	cfg := phase2("1m", "1Mi")
	const delta = 0.05
	plain := placement.Cluster{ResourceID: clusterID}
	tests := []struct {
		name    string
		change  func(st *api.SchedulingStatus)
		cluster placement.Cluster
		// wantShare is the dominant share in percent; the score is its negative.
		wantShare float64
	}{
		{name: "requests exceed usage", wantShare: 25},
		{name: "cpu usage dominates", change: func(st *api.SchedulingStatus) { st.ObservedResources.Usage["cpu"] = "3" }, wantShare: 75},
		{name: "memory usage dominates", change: func(st *api.SchedulingStatus) { st.ObservedResources.Usage["memory"] = "6Gi" }, wantShare: 75},
		{name: "the larger side is taken per resource", change: func(st *api.SchedulingStatus) {
			st.ObservedResources.Usage["memory"] = "4Gi"
			st.ObservedResources.Requests["cpu"] = "1500m"
		}, wantShare: 50},
		{name: "zero use is valid", change: func(st *api.SchedulingStatus) {
			st.ObservedResources.Usage = api.ResourceList{"cpu": "0", "memory": "0"}
			st.ObservedResources.Requests = api.ResourceList{"cpu": "0", "memory": "0"}
		}, wantShare: 0},
		{name: "hcpsched: the scale ceiling is the denominator (upstream: still 25)", change: func(st *api.SchedulingStatus) {
			st.ScaleCeiling.Capacity["cpu"], st.ScaleCeiling.Capacity["memory"] = "400", "800Gi"
		}, wantShare: 0.25},
		{name: "hcpsched: the observed capacity is not read", change: func(st *api.SchedulingStatus) {
			st.ObservedResources.Capacity = api.ResourceList{"cpu": "1", "memory": "1Gi"}
		}, wantShare: 25},
		{name: "hcpsched: swift NICs are shared too", change: func(st *api.SchedulingStatus) { st.ObservedResources.Usage[api.SwiftNIC] = "27" }, wantShare: 90},
		{name: "hcpsched: the NICs of the SWIFT HA cluster being placed count", change: func(st *api.SchedulingStatus) { st.ObservedResources.Usage[api.SwiftNIC] = "12" },
			cluster: placement.Cluster{ResourceID: clusterID, Swift: true}, wantShare: 50},
		{name: "hcpsched: and a single-replica one's", change: func(st *api.SchedulingStatus) { st.ObservedResources.Usage[api.SwiftNIC] = "14" },
			cluster: placement.Cluster{ResourceID: clusterID, Swift: true, SingleReplica: true}, wantShare: 50},
		{name: "hcpsched: listed clusters count at their cost", change: func(st *api.SchedulingStatus) {
			st.ObservedResources.Usage[api.SwiftNIC] = "9"
			st.NotReadyResourceIDs = []string{hcp("starting")}
		}, wantShare: 40},
		{name: "hcpsched: a resource with a ceiling of 0 is left out", change: func(st *api.SchedulingStatus) { st.ScaleCeiling.Capacity[api.SwiftNIC] = "0" }, wantShare: 25},
		{name: "hcpsched: full once placed", change: func(st *api.SchedulingStatus) { st.ObservedResources.Requests["cpu"] = "3999m" }, wantShare: 100},
	}
	m := placement.NewModel(cfg, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := contentionBase()
			if tt.change != nil {
				tt.change(c.Scheduling.Properties.Status)
			}
			cluster := plain
			if tt.cluster.ResourceID != "" {
				cluster = tt.cluster
			}
			d := m.Decide(cluster, m.NewMCs([]placement.Candidate{c}, nil), now)
			require.Equal(t, placement.Reason(""), d.Verdict(0).Reason, d.Message())
			assert.InDelta(t, -tt.wantShare, d.Verdict(0).Score, delta)
			assert.LessOrEqual(t, d.Verdict(0).Score, 0.0)
		})
	}
}

// Upstream ranks a share above 100 % (score 2 for requests of 16Gi on 8Gi); hcpsched does
// not place there at all.
func TestDominantScoreAboveTheCeilingDoesNotFit(t *testing.T) {
	c := contentionBase()
	c.Scheduling.Properties.Status.ObservedResources.Requests["memory"] = "16Gi"
	m := placement.NewModel(phase2("1m", "1Mi"), nil)
	d := m.Decide(placement.Cluster{ResourceID: clusterID}, m.NewMCs([]placement.Candidate{c}, nil), now)
	assert.Equal(t, placement.ReasonInsufficientCapacity, d.Verdict(0).Reason)
	assert.True(t, strings.HasPrefix(d.Verdict(0).Detail(), "memory -"), d.Verdict(0).Detail())
	assert.Equal(t, placement.OutcomeCapacityExhausted, d.Outcome)
}

// Upstream's validation grid: for cpu and memory, each of the ceiling (upstream: the
// observed capacity), requests and usage missing, -1, 1e1000 or 0. Upstream makes the
// score unknown except for a zero in requests or usage; hcpsched's filters say why the MC
// cannot be judged, or that it does not fit.
func TestDominantScoreInputs(t *testing.T) {
	m := placement.NewModel(phase2("1m", "1Mi"), nil)
	for _, r := range []string{"cpu", "memory"} {
		for _, field := range []string{"ceiling", "requests", "usage"} {
			for _, value := range []string{"missing", "-1", "1e1000", "0"} {
				var wantReason placement.Reason
				var wantDetail string
				switch {
				case value == "-1" || value == "1e1000":
					wantReason, wantDetail = placement.ReasonNoSchedulingData, "unparsable quantity for "+r
				case field == "ceiling" && value == "missing":
					wantReason, wantDetail = placement.ReasonNoSchedulingData, "no scale ceiling for "+r
				case field == "ceiling":
					// Nothing of it can be had, and the cluster needs some.
					wantReason = placement.ReasonInsufficientCapacity
				}
				t.Run(fmt.Sprintf("%s %s %s", r, field, value), func(t *testing.T) {
					c := contentionBase()
					obs := c.Scheduling.Properties.Status.ObservedResources
					list := map[string]api.ResourceList{"ceiling": c.Scheduling.Properties.Status.ScaleCeiling.Capacity, "requests": obs.Requests, "usage": obs.Usage}[field]
					if value == "missing" {
						delete(list, r)
					} else {
						list[r] = value
					}
					v := m.Decide(placement.Cluster{ResourceID: clusterID}, m.NewMCs([]placement.Candidate{c}, nil), now).Verdict(0)
					assert.Equal(t, wantReason, v.Reason)
					if wantDetail != "" {
						assert.Equal(t, wantDetail, v.Detail())
					}
				})
			}
		}
	}

	t.Run("neither usage nor requests of cpu while an HCP runs", func(t *testing.T) {
		c := contentionBase()
		st := c.Scheduling.Properties.Status
		delete(st.ObservedResources.Usage, "cpu")
		delete(st.ObservedResources.Requests, "cpu")
		st.ReadyResourceIDs = []string{hcp("running")}
		v := m.Decide(placement.Cluster{ResourceID: clusterID}, m.NewMCs([]placement.Candidate{c}, nil), now).Verdict(0)
		assert.Equal(t, placement.ReasonStaleCapacityData, v.Reason)
		assert.Equal(t, "observedResources.usage has no cpu", v.Detail())
	})
}

// Upstream's timestamps: missing or zero, now, exactly the maximum age, a nanosecond
// past it, a nanosecond ahead. hcpsched allows a minute ahead for clock skew.
func TestDominantScoreReportAge(t *testing.T) {
	tests := []struct {
		name       string
		reportedAt time.Time
		wantDetail string // "" when the MC is scored
	}{
		{"missing", time.Time{}, "capacity never reported"},
		{"now", now, ""},
		{"exactly the maximum age", now.Add(-placement.DefaultMaxCapacityAge), ""},
		{"a nanosecond past it", now.Add(-placement.DefaultMaxCapacityAge - time.Nanosecond), "capacity report older than 5m0s"},
		{"hcpsched: a nanosecond ahead (upstream: unknown)", now.Add(time.Nanosecond), ""},
		{"hcpsched: the clock-skew allowance ahead", now.Add(placement.ClockSkewAllowance), ""},
		{"a nanosecond beyond the allowance", now.Add(placement.ClockSkewAllowance + time.Nanosecond), "is in the future"},
	}
	m := placement.NewModel(phase2("1m", "1Mi"), nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := contentionBase()
			c.Scheduling.Properties.Status.ObservedResources.LastReportedAt = tt.reportedAt
			v := m.Decide(placement.Cluster{ResourceID: clusterID}, m.NewMCs([]placement.Candidate{c}, nil), now).Verdict(0)
			if tt.wantDetail == "" {
				assert.Equal(t, placement.Reason(""), v.Reason)
				assert.InDelta(t, -25, v.Score, 0.05)
				return
			}
			assert.Equal(t, placement.ReasonStaleCapacityData, v.Reason)
			assert.Contains(t, v.Detail(), tt.wantDetail)
		})
	}
}

// load is an MC for TestDominantSelection: what its HCPs use of 300 NICs, 100 cores and
// 100Gi unless its ceilings say otherwise.
type load struct {
	nics, cpu, memoryGi             int
	nicCeiling, cpuCeiling, memCeil int
	pending                         []string
	reportedAgo                     time.Duration
	unschedulable                   bool
}

func loaded(stamp string, l load) placement.Candidate {
	or := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	c := reportCandidate(stamp, report{
		ceiling: api.ResourceList{
			api.SwiftNIC: fmt.Sprint(or(l.nicCeiling, 300)),
			"cpu":        fmt.Sprint(or(l.cpuCeiling, 100)),
			"memory":     fmt.Sprintf("%dGi", or(l.memCeil, 100)),
		},
		usage:   api.ResourceList{api.SwiftNIC: fmt.Sprint(l.nics), "cpu": fmt.Sprint(l.cpu), "memory": fmt.Sprintf("%dGi", l.memoryGi)},
		pending: l.pending,
	})
	c.Scheduling.Properties.Status.ObservedResources.LastReportedAt = now.Add(-l.reportedAgo)
	if l.unschedulable {
		c.ManagementCluster.Properties.Spec.SchedulingPolicy = api.Unschedulable
	}
	return c
}

// Upstream's TestSelectByCapacity_Contention and TestEvaluateManagementClusters_
// ContentionSelection, on two MCs "1" and "2", each case in both orders. An HCP costs 1
// core and 1Gi; an unknown reserved cluster costs that and 3 NICs.
func TestDominantSelection(t *testing.T) {
	cfg := phase2("1", "1Gi")
	var (
		plain   = placement.Cluster{ResourceID: clusterID}
		swiftHA = placement.Cluster{ResourceID: clusterID, Swift: true}
		swiftSR = placement.Cluster{ResourceID: clusterID, Swift: true, SingleReplica: true}
	)
	tests := []struct {
		name        string
		one, two    load
		cluster     placement.Cluster
		wantStamp   string
		wantOutcome placement.Outcome
		// wantSpread, when set, is what spread would choose instead.
		wantSpread string
	}{
		{name: "a lower share beats NIC headroom",
			one: load{cpu: 74}, two: load{nics: 60, cpu: 24}, // 75 % against 25 % (NICs 20 %)
			wantStamp: "2", wantSpread: "1"},
		{name: "hcpsched: a stale report is not ranked, it is rejected (upstream: known beats unknown)",
			one: load{reportedAgo: 6 * time.Minute}, two: load{cpu: 24}, wantStamp: "2"},
		{name: "hcpsched: so is a report from the future",
			one: load{reportedAgo: -2 * time.Minute}, two: load{cpu: 24}, wantStamp: "2"},
		{name: "equal shares: fewer reservations win",
			one: load{cpu: 22, pending: []string{hcp("p1"), hcp("p2")}}, two: load{cpu: 23, pending: []string{hcp("p3")}}, // 25 % each
			wantStamp: "2"},
		{name: "reservations do not override a lower share",
			one: load{pending: hcps("in-flight", 10)}, two: load{cpu: 24}, // 11 % against 25 %
			wantStamp: "1"},
		{name: "equal shares and reservations fall to the lower ID, not to NICs",
			one: load{nics: 60, cpu: 24}, two: load{cpu: 24}, wantStamp: "1", wantSpread: "2"},
		{name: "hcpsched: SWIFT HA demand is ranked by share too (upstream: most NICs)",
			one: load{nicCeiling: 30, cpu: 74}, two: load{nicCeiling: 30, nics: 9, cpu: 24}, // 75 % against NICs 40 %
			cluster: swiftHA, wantStamp: "2", wantSpread: "1"},
		{name: "hcpsched: and single-replica SWIFT demand",
			one: load{nicCeiling: 30, cpu: 74}, two: load{nicCeiling: 30, nics: 11, cpu: 24}, // 75 % against NICs 40 %
			cluster: swiftSR, wantStamp: "2", wantSpread: "1"},
		{name: "zero demand still rejects negative NICs",
			one: load{nicCeiling: 2, pending: []string{hcp("reserved")}}, two: load{cpu: 24}, wantStamp: "2"},
		{name: "a better share does not override eligibility",
			one: load{unschedulable: true}, two: load{cpu: 24}, wantStamp: "2"},
		{name: "the dominant memory beats a lower cpu",
			one: load{memoryGi: 74}, two: load{cpu: 49}, // 75 % memory against 50 % cpu
			wantStamp: "2"},
		{name: "heterogeneous ceilings are normalised",
			one: load{cpu: 24}, two: load{cpuCeiling: 400, memCeil: 400, cpu: 49}, // 25 % against 12.5 %
			wantStamp: "2"},
		{name: "hcpsched: when every report is stale nothing is placed (upstream: NIC order)",
			one: load{reportedAgo: time.Hour}, two: load{reportedAgo: time.Hour, nics: 270},
			wantOutcome: placement.OutcomeStaleData},
		{name: "the cluster's own reservation is reused whatever the shares",
			one: load{cpu: 74, pending: []string{strings.ToUpper(clusterID)}}, two: load{}, wantStamp: "1"},
	}
	for _, tt := range tests {
		for _, order := range []string{"1 first", "2 first"} {
			t.Run(tt.name+"/"+order, func(t *testing.T) {
				mcs := []placement.Candidate{loaded("1", tt.one), loaded("2", tt.two)}
				if order == "2 first" {
					slices.Reverse(mcs)
				}
				cluster := plain
				if tt.cluster.ResourceID != "" {
					cluster = tt.cluster
				}
				d := placement.Decide(cluster, mcs, cfg, nil, now)
				assert.Equal(t, tt.wantStamp, chosenStamp(t, d), d.Message())
				wantOutcome := tt.wantOutcome
				if wantOutcome == "" {
					wantOutcome = placement.OutcomePlaced
				}
				assert.Equal(t, wantOutcome, d.Outcome)
				if tt.wantSpread != "" {
					spread := cfg
					spread.Weigher = placement.WeigherSpread
					assert.Equal(t, tt.wantSpread, chosenStamp(t, placement.Decide(cluster, mcs, spread, nil, now)), "spread ranks by NICs left")
				}
			})
		}
	}
}

// The dominant weigher has a tolerance of its own, in percentage points.
func TestDominantTolerance(t *testing.T) {
	mcs := []placement.Candidate{loaded("1", load{cpu: 24}), loaded("2", load{cpu: 27}), loaded("3", load{cpu: 31})} // 25, 28, 32 %
	tests := []struct {
		name                         string
		tolerance, dominantTolerance float64
		want                         []string // the MCs chosen over many clusters
	}{
		{"within the dominant tolerance MCs share placements", 0, 5, []string{"1", "2"}},
		{"the other weighers' tolerance is not the dominant one's", 100, 0, []string{"1"}},
		{"a wide tolerance takes every MC in", 0, 10, []string{"1", "2", "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := phase2("1", "1Gi")
			cfg.Tolerance, cfg.DominantTolerance = tt.tolerance, tt.dominantTolerance
			m := placement.NewModel(cfg, nil)
			parsed := m.NewMCs(mcs, nil)
			chosen := map[string]bool{}
			for i := range 200 {
				d := m.Decide(placement.Cluster{ResourceID: otherCluster(i)}, parsed, now)
				chosen[chosenStamp(t, d)] = true
			}
			var got []string
			for s := range chosen {
				got = append(got, s)
			}
			slices.Sort(got)
			assert.Equal(t, tt.want, got)
		})
	}
}

// requirementsConfig counts swift NICs, cpu and memory with flag costs of 2/1 cores and
// 4Gi/2Gi, the costs taken from source.
func requirementsConfig(source string) placement.Config {
	cfg := exact()
	cfg.CostSource = source
	cfg.Resources = append(cfg.Resources,
		placement.ResourceCost{Name: "cpu", HA: resource.MustParse("2"), SingleReplica: resource.MustParse("1")},
		placement.ResourceCost{Name: "memory", HA: resource.MustParse("4Gi"), SingleReplica: resource.MustParse("2Gi")},
	)
	return cfg
}

const (
	gi = int64(1024 * 1024 * 1024)
	mi = int64(1024 * 1024)
)

// The four kinds of HCP, and what each costs of swift NICs, cpu and memory, in milli-units.
var (
	kinds = []placement.Cluster{
		{ResourceID: hcp("plain-ha")},
		{ResourceID: hcp("plain-sr"), SingleReplica: true},
		{ResourceID: hcp("swift-ha"), Swift: true},
		{ResourceID: hcp("swift-sr"), Swift: true, SingleReplica: true},
	}
	// The fixture's averages (the larger of usage and requests) for every kind; NICs by the rule.
	requirementsCosts = [][]int64{
		{0, 3630, 14208 * mi * 1000},
		{0, 3630, 14208 * mi * 1000},
		{3000, 3630, 14208 * mi * 1000},
		{1000, 3630, 14208 * mi * 1000},
	}
	flagCosts = [][]int64{
		{0, 2000, 4 * gi * 1000},
		{0, 1000, 2 * gi * 1000},
		{3000, 2000, 4 * gi * 1000},
		{1000, 1000, 2 * gi * 1000},
	}
)

func TestCostSource(t *testing.T) {
	// unusable makes the fixture unusable for each reason.
	unusable := map[placement.FallbackReason]func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements{
		placement.FallbackNoDocument: func(*api.HCPResourceRequirements) *api.HCPResourceRequirements { return nil },
		placement.FallbackNotCurrent: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
			d.Properties.Status.Conditions[0].Status = api.ConditionFalse
			return d
		},
		placement.FallbackNoSamples: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
			d.Properties.Status.SampleSize = 0
			return d
		},
		placement.FallbackMissingResource: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
			delete(d.Properties.Status.AverageUsage, "memory")
			delete(d.Properties.Status.AverageRequests, "memory")
			return d
		},
		placement.FallbackInvalidQuantity: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
			d.Properties.Status.AverageUsage["cpu"] = "lots"
			return d
		},
		placement.FallbackZeroCost: func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements {
			d.Properties.Status.AverageUsage["cpu"], d.Properties.Status.AverageRequests["cpu"] = "0", "0"
			return d
		},
	}
	reasons := make([]placement.FallbackReason, 0, len(unusable))
	for r := range unusable {
		reasons = append(reasons, r)
	}
	assert.ElementsMatch(t, placement.FallbackReasons, reasons, "a row for every fallback reason")

	type row struct {
		name       string
		source     string
		doc        func(d *api.HCPResourceRequirements) *api.HCPResourceRequirements
		wantSource string
		wantReason placement.FallbackReason
		wantCosts  [][]int64
	}
	tests := []row{
		{name: "the document's averages for cpu and memory, whatever the kind; NICs by the rule",
			source: placement.CostSourceRequirements, wantSource: placement.CostSourceRequirements, wantCosts: requirementsCosts},
		{name: "the flags ignore the document", source: placement.CostSourceFlags, wantSource: placement.CostSourceFlags, wantCosts: flagCosts},
		{name: "the flags with no document have nothing to fall back from",
			source: placement.CostSourceFlags, doc: unusable[placement.FallbackNoDocument], wantSource: placement.CostSourceFlags, wantCosts: flagCosts},
	}
	for _, reason := range placement.FallbackReasons {
		tests = append(tests, row{name: "falls back to the flags: " + string(reason), source: placement.CostSourceRequirements,
			doc: unusable[reason], wantSource: placement.CostSourceFlags, wantReason: reason, wantCosts: flagCosts})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := requirementsDoc(t)
			if tt.doc != nil {
				doc = tt.doc(doc)
			}
			m := placement.NewModel(requirementsConfig(tt.source), doc)
			source, reason := m.Costs()
			assert.Equal(t, tt.wantSource, source)
			assert.Equal(t, tt.wantReason, reason)
			for i, k := range kinds {
				assert.Equal(t, tt.wantCosts[i], m.Cost(k), "%+v", k)
			}
		})
	}

	t.Run("swift NICs alone take nothing from the document, and fall back from nothing", func(t *testing.T) {
		cfg := exact()
		cfg.CostSource = placement.CostSourceRequirements
		m := placement.NewModel(cfg, nil)
		source, reason := m.Costs()
		assert.Equal(t, placement.CostSourceFlags, source)
		assert.Empty(t, reason)
		assert.Equal(t, []int64{3000}, m.Cost(kinds[2]))
		assert.Equal(t, []int64{0}, m.Cost(kinds[0]))
	})
}

// Every counted resource must fit, at the cost its source gives, and listed clusters are
// charged that cost of each.
func TestRequirementsCostsDecide(t *testing.T) {
	mc := func(r report) []placement.Candidate { return []placement.Candidate{reportCandidate("1", r)} }
	ceiling := func(cpu, memory string) api.ResourceList {
		return api.ResourceList{api.SwiftNIC: "300", "cpu": cpu, "memory": memory}
	}
	swiftHA := placement.Cluster{ResourceID: clusterID, Swift: true}
	tests := []struct {
		name       string
		source     string
		mcs        []placement.Candidate
		wantReason placement.Reason
		wantDetail string
	}{
		{name: "cpu short while NICs are plenty", source: placement.CostSourceRequirements,
			mcs:        mc(report{ceiling: ceiling("8", "64Gi"), usage: api.ResourceList{"cpu": "5"}}),
			wantReason: placement.ReasonInsufficientCapacity, wantDetail: "cpu 3 available, 3630m needed"},
		{name: "the same MC fits at the flag costs", source: placement.CostSourceFlags,
			mcs: mc(report{ceiling: ceiling("8", "64Gi"), usage: api.ResourceList{"cpu": "5"}})},
		{name: "memory short", source: placement.CostSourceRequirements,
			mcs:        mc(report{ceiling: ceiling("64", "20Gi"), requests: api.ResourceList{"memory": "7Gi"}}),
			wantReason: placement.ReasonInsufficientCapacity, wantDetail: "memory "},
		{name: "exactly the document's cost left", source: placement.CostSourceRequirements,
			mcs: mc(report{ceiling: ceiling("8", "64Gi"), requests: api.ResourceList{"cpu": "4370m"}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := placement.NewModel(requirementsConfig(tt.source), requirementsDoc(t))
			d := m.Decide(swiftHA, m.NewMCs(tt.mcs, nil), now)
			assert.Equal(t, tt.wantReason, d.Verdict(0).Reason)
			assert.True(t, strings.HasPrefix(d.Verdict(0).Detail(), tt.wantDetail), d.Verdict(0).Detail())
			if tt.wantReason == placement.ReasonInsufficientCapacity {
				assert.Equal(t, placement.OutcomeCapacityExhausted, d.Outcome)
			}
		})
	}

	t.Run("listed clusters are charged the document's cpu and memory", func(t *testing.T) {
		m := placement.NewModel(requirementsConfig(placement.CostSourceRequirements), requirementsDoc(t))
		// The not-ready cluster's pods are not running yet: its report shows none of its use.
		c := reportCandidate("1", report{ceiling: ceiling("64", "64Gi"), usage: api.ResourceList{"cpu": "0", "memory": "0"},
			notReady: []string{hcp("not-in-cache")}, pending: []string{hcp("plain-sr")}})
		assert.Equal(t, []int64{
			(300 - 3 - 0) * 1000,
			64_000 - 2*3630,
			64*gi*1000 - 2*14208*mi*1000,
		}, available(t, m, c, known(kinds...)))
	})

	t.Run("the package's Decide has no document: flag costs", func(t *testing.T) {
		d := placement.Decide(swiftHA, mc(report{ceiling: ceiling("8", "64Gi"), usage: api.ResourceList{"cpu": "5"}}),
			requirementsConfig(placement.CostSourceRequirements), nil, now)
		assert.Equal(t, placement.OutcomePlaced, d.Outcome)
	})
}

// ARO-HCP's stored documents (MC 1, its scheduling document, the fleet-wide requirements)
// placed with every phase-2 rule at the default dominant tolerance.
func TestPhase2OnTheStoredDocuments(t *testing.T) {
	mcDoc, err := api.Decode[api.ManagementClusterProperties](arohcp.Get("constructed/fleet-managementcluster-1-ready-schedulable.json"))
	require.NoError(t, err)
	sched, err := api.Decode[api.ManagementClusterSchedulingProperties](arohcp.Get("constructed/fleet-scheduling-stamp-1-observed.json"))
	require.NoError(t, err)
	cfg := requirementsConfig(placement.CostSourceRequirements)
	cfg.Weigher, cfg.DominantTolerance = placement.WeigherDominant, placement.DefaultDominantTolerance
	m := placement.NewModel(cfg, requirementsDoc(t))
	at := sched.Properties.Status.ObservedResources.LastReportedAt.Add(30 * time.Second)
	mcs := []*placement.MC{m.NewMC(mcDoc, sched, nil)}

	const ki = 1024
	memory := 100 * float64((28416+14208)*mi) / float64(1_691_633_152*ki) // requests 28416Mi + the average's 14208Mi
	cpu := 100 * float64(7260+3630) / 316_400
	for _, tt := range []struct {
		name      string
		cluster   placement.Cluster
		wantShare float64
	}{
		{"SWIFT HA: NICs dominate", placement.Cluster{ResourceID: clusterID, Swift: true}, 100 * float64(9+3) / 320},
		{"non-SWIFT: cpu dominates", placement.Cluster{ResourceID: clusterID}, max(cpu, memory, 100*9.0/320)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := m.Decide(tt.cluster, mcs, at)
			require.Equal(t, placement.OutcomePlaced, d.Outcome, d.Message())
			assert.InDelta(t, -tt.wantShare, d.Verdict(0).Score, 1e-9)
		})
	}
	assert.Greater(t, cpu, memory, "the non-SWIFT row is cpu's")
}
