package placement_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// Bits of FuzzNewMC's mode: how the engine is configured and which cluster it places.
const (
	fuzzDominant     = 1 << iota // the dominant weigher, else spread
	fuzzThree                    // count cpu and memory beside swift NICs
	fuzzRequirements             // cpu and memory costs from the stored HCPResourceRequirements
	fuzzSwift                    // the cluster has VNet integration
	fuzzSingle                   // the cluster is single-replica
	fuzzTolerance                // the default tolerances, else 0
	fuzzClock                    // decide at the fixed test clock, else just after the report
)

// FuzzNewMC decodes arbitrary bytes as a scheduling document, parses it (Model.NewMC) beside
// a healthy MC and decides on it. It never panics, leaves the document as it was, and
// decides the same twice; an MC with no reason has its capacity counted (Available ok),
// no more of any resource than its ceiling and at least what the cluster costs, and a
// finite score; Fits agrees with the verdict; a cluster is placed exactly when an MC is
// chosen, and on one the filters passed.
func FuzzNewMC(f *testing.F) {
	for _, name := range []string{"constructed/fleet-scheduling-stamp-1-observed.json", "constructed/fleet-scheduling-stamp-3-initial-empty.json"} {
		for _, mode := range []uint8{0, fuzzDominant | fuzzThree | fuzzRequirements | fuzzSwift, fuzzThree | fuzzSingle | fuzzTolerance} {
			f.Add(arohcp.Get(name), mode)
		}
	}
	const envelope = `{"id":"x","resourceID":"/providers/microsoft.redhatopenshift/stamps/1/managementclusters/default/scheduling/default","properties":{"status":`
	for _, status := range []string{
		// the most usage the engine counts, with a cluster charged on top
		`{"conditions":[{"type":"CapacityDataCurrent","status":"True"},{"type":"ScalingDataCurrent","status":"True"}],"observedResources":{"lastReportedAt":"2026-11-30T12:00:00Z","usage":{"aro.openshift.io/swift-nic":"9223372036854775807m"}},"scaleCeiling":{"capacity":{"aro.openshift.io/swift-nic":"0","cpu":"0","memory":"0"}},"notReadyResourceIDs":["a"]}`,
		// a report 2^64 ns ahead of the clock
		`{"conditions":[{"type":"CapacityDataCurrent","status":"True"},{"type":"ScalingDataCurrent","status":"True"}],"observedResources":{"lastReportedAt":"2611-06-21T11:34:33.709551616Z","usage":{}},"scaleCeiling":{"capacity":{"aro.openshift.io/swift-nic":"30"}}}`,
		// every list, repeats, case, empty entries and the cluster being placed
		`{"conditions":[{"type":"CapacityDataCurrent","status":"True"},{"type":"ScalingDataCurrent","status":"True"}],"observedResources":{"lastReportedAt":"2026-11-30T12:00:00Z","usage":{"cpu":"1","memory":"1Gi"},"requests":{"aro.openshift.io/swift-nic":"3","cpu":"2"}},"scaleCeiling":{"capacity":{"aro.openshift.io/swift-nic":"30","cpu":"64","memory":"256Gi"}},"readyResourceIDs":["r",""],"notReadyResourceIDs":["n","N",""],"pendingAssignedClusters":["` + clusterID + `","P","p",""]}`,
		// quantities that are no quantity, or absurd
		`{"conditions":[],"observedResources":{"lastReportedAt":"0001-01-01T00:00:00Z","usage":{"cpu":"-1","memory":"1e1000"}},"scaleCeiling":{"capacity":{"aro.openshift.io/swift-nic":""}}}`,
		`null`,
		`{}`,
	} {
		for _, mode := range []uint8{0, fuzzClock, fuzzThree | fuzzDominant | fuzzSwift} {
			f.Add([]byte(envelope+status+`}}`), mode)
		}
	}

	mcDoc, err := api.Decode[api.ManagementClusterProperties](arohcp.Get("constructed/fleet-managementcluster-1-ready-schedulable.json"))
	require.NoError(f, err)
	requirements := requirementsDoc(f)
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		sched, err := api.Decode[api.ManagementClusterSchedulingProperties](data)
		if err != nil {
			return // a document the informer cannot decode never reaches placement
		}
		before, err := api.Encode(sched)
		require.NoError(t, err)

		cfg := exact()
		cfg.DominantTolerance = 0
		if mode&fuzzDominant != 0 {
			cfg.Weigher = placement.WeigherDominant
		}
		if mode&fuzzThree != 0 {
			cfg = requirementsConfig(placement.CostSourceFlags)
			cfg.Weigher, cfg.DominantTolerance = placement.WeigherDominant, 0
			if mode&fuzzDominant == 0 {
				cfg.Weigher = placement.WeigherSpread
			}
		}
		if mode&fuzzRequirements != 0 {
			cfg.CostSource = placement.CostSourceRequirements
		}
		if mode&fuzzTolerance != 0 {
			cfg.Tolerance, cfg.DominantTolerance = placement.DefaultTolerance, placement.DefaultDominantTolerance
		}
		require.NoError(t, cfg.Validate())
		m := placement.NewModel(cfg, requirements)
		cluster := placement.Cluster{ResourceID: clusterID, Swift: mode&fuzzSwift != 0, SingleReplica: mode&fuzzSingle != 0}

		// Decide just after the report unless told otherwise, so that the capacity rules are
		// reached and not only the freshness check.
		at := now
		st := sched.Properties.Status
		if mode&fuzzClock == 0 && st != nil && st.ObservedResources != nil && !st.ObservedResources.LastReportedAt.IsZero() {
			at = st.ObservedResources.LastReportedAt.Add(time.Second)
		}

		// A second, healthy MC, so that a choice is made between two.
		other := reportCandidate("2", report{ceiling: api.ResourceList{api.SwiftNIC: "30", "cpu": "64", "memory": "256Gi"}})
		other.Scheduling.Properties.Status.ObservedResources.LastReportedAt = at
		mcs := []*placement.MC{m.NewMC(mcDoc, sched, mixedNetworking), m.NewMC(other.ManagementCluster, other.Scheduling, nil)}
		d := m.Decide(cluster, mcs, at)
		again := m.Decide(cluster, mcs, at)
		assert.True(t, d.Chosen == again.Chosen, "the same snapshot, the same choice")
		_ = d.Message()

		cost := m.Cost(cluster)
		holds := false
		if st != nil {
			for _, id := range st.PendingAssignedClusters {
				holds = holds || strings.EqualFold(id, clusterID)
			}
		}
		for i, v := range d.Verdicts() {
			assert.Equal(t, v.Reason == "", v.MC.Fits(cluster, at), "Fits agrees with the decision")
			available, ok := v.MC.Available()
			if v.Reason != "" {
				continue
			}
			require.True(t, ok, "a verdict with no reason has its capacity counted: %s", d.Message())
			reportedAt := v.MC.Scheduling.Properties.Status.ObservedResources.LastReportedAt
			assert.LessOrEqual(t, at.Sub(reportedAt), cfg.MaxCapacityAge, "a fresh report is no older than the maximum age")
			assert.False(t, placement.ReportedInFuture(reportedAt, at), "nor dated beyond the clock-skew allowance")
			assert.False(t, math.IsNaN(v.Score) || math.IsInf(v.Score, 0), "score %v", v.Score)
			var ceilings api.ResourceList
			if sc := v.MC.Scheduling.Properties.Status.ScaleCeiling; sc != nil {
				ceilings = sc.Capacity
			}
			for r, name := range m.Resources() {
				a, ok := v.Available(name)
				require.True(t, ok)
				assert.Equal(t, available[r], a)
				ceiling, err := placement.ParseQuantity(ceilings[name])
				require.NoError(t, err, "a counted ceiling parses")
				assert.LessOrEqual(t, a, ceiling.MilliValue(), "%s: no more left than the ceiling", name)
				if i > 0 || !holds {
					assert.GreaterOrEqual(t, a, cost[r], "%s: what fits has room for the cluster", name)
				}
			}
		}
		assert.Equal(t, d.Chosen != nil, d.Outcome == placement.OutcomePlaced)
		if d.Chosen != nil {
			idx := slices.Index(mcs, d.Chosen)
			require.GreaterOrEqual(t, idx, 0, "the chosen MC is one of those given")
			assert.Empty(t, d.Verdict(idx).Reason)
		}

		after, err := api.Encode(sched)
		require.NoError(t, err)
		assert.Equal(t, string(before), string(after), "the cached document is left as it was")
	})
}
