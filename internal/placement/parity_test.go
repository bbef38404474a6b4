package placement_test

// Upstream parity. ARO-HCP's phase-1 placement (backend/pkg/controllers/cluster/placement,
// placement_controller_test.go at e716ba8f) is tested by the tables below, reproduced row by
// row through hcpsched's public API: the same documents must leave the same capacity and,
// at tolerance 0, choose the same MC. Rows hcpsched adds are marked "hcpsched:".
//
// Upstream rows that do not apply to hcpsched, and why:
//
// | Upstream row | Upstream | hcpsched | Why |
// |---|---|---|---|
// | TestSwiftNICsForCluster: a nil cluster | 3 NICs | no such input: a listed cluster the cache lacks is a lookup miss, 3 NICs (TestSwiftNICsForResourceID) | the cluster being placed is always in the cache, as upstream's SyncOnce also requires |
// | TestSwiftNICsForResourceID: nil ID; lister error; lister returning nil | 3 NICs | an empty entry is skipped (0); a lookup knows a cluster or does not, and one it does not know costs 3 | hcpsched's IDs are strings and its lookup reads a cache, which has no error |
// | TestSchedulingObservations…: scheduling policy "" or unknown | Unknown, EvaluationIncomplete | Unschedulable: no_eligible, NoEligibleManagementCluster | only an MC whose policy says Schedulable is placed on; an unknown policy is not consent |
// | TestSchedulingObservations…: Ready condition missing or Unknown | Unknown, EvaluationIncomplete | NotReady: no_eligible, NoEligibleManagementCluster | only a Ready MC is placed on |
// | (no upstream row) MC without a provision shard | placed | NotReady ("no Cluster Service provision shard") | the cluster is created pinned to the MC's provision shard |
// | TestSelectByCapacity 11: ties by ID | resourceID.String(), case-sensitive: "B" before "a" | lowercased: "a" before "B" | resource IDs compare case-insensitively everywhere in hcpsched |
// | TestSelectByCapacity_Contention 12: SWIFT ties ignore pending | the lower ID | fewer reservations first (and each lowers the spread score by the pending multiplier) | an MC with placements in flight has the least certain numbers |
// | every selection row at the default settings | the exact maximum | the tolerance (12 NICs) and a rendezvous hash pick among near-best MCs; the rows hold at tolerance 0 | concurrent workers spread over MCs instead of racing for one |
// | report age (phase 1 has none) | lastReportedAt is not read | FreshCapacityData: older than 5m0s or more than 1m0s ahead is StaleCapacityData | a report is a snapshot; an old one may hide every placement since |
// | a counted resource missing from the scale ceiling | 0 − consumption: InsufficientCapacity | NoSchedulingData ("no scale ceiling for r"): stale_data | a ceiling the fleet has not computed is missing data, not a full MC |
// | usage and requests without cpu or memory while HCPs run | counted as 0 | StaleCapacityData (CompleteUsage) when cpu or memory is counted | an absent resource would make a busy MC look empty; never with the default configuration, which counts swift NICs only |
// | charges of not-ready and pending entries | swift NICs only | every counted resource | the same with the default configuration |
// | zero-demand (non-SWIFT) ranking at 31a52ec9 | cpu/memory contention | spread ranks by swift NICs left; the dominant weigher ranks every demand (phase2_test.go) | one ranking for every cluster |
// | the message of a full MC | "insufficient swift-NIC capacity (available N, need M)" | "aro.openshift.io/swift-nic N available, M needed" | one wording for every counted resource |

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// hcp is the resource ID of a cluster named name.
func hcp(name string) string {
	return "/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name
}

// hcps names n clusters prefix-1 … prefix-n.
func hcps(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = hcp(fmt.Sprintf("%s-%d", prefix, i+1))
	}
	return out
}

// nicList is a resource list of swift NICs only; "" is no list at all, as the fleet writes
// an empty map.
func nicList(v string) api.ResourceList {
	if v == "" {
		return nil
	}
	return api.ResourceList{api.SwiftNIC: v}
}

// report is what a scheduling document says of an MC's capacity.
type report struct {
	ceiling, usage, requests api.ResourceList
	notReady, pending        []string
}

// reportCandidate is a healthy MC, reported now, whose scheduling document holds r as is.
func reportCandidate(stamp string, r report) placement.Candidate {
	c := candidate(mcSpec{stamp: stamp})
	st := c.Scheduling.Properties.Status
	st.ScaleCeiling.Capacity = r.ceiling
	st.ObservedResources.Usage, st.ObservedResources.Requests = r.usage, r.requests
	st.NotReadyResourceIDs, st.PendingAssignedClusters = r.notReady, r.pending
	return c
}

// available is what an MC has left of each counted resource, in milli-units, as the
// engine counts it whatever its filters say.
func available(t *testing.T, m *placement.Model, c placement.Candidate, lookup placement.ClusterLookup) []int64 {
	t.Helper()
	a, ok := m.NewMC(c.ManagementCluster, c.Scheduling, lookup).Available()
	require.True(t, ok, "the MC's capacity can be counted")
	return a
}

// known is a lookup that knows exactly these clusters, as the backend's cache would.
func known(clusters ...placement.Cluster) placement.ClusterLookup {
	byID := map[string]placement.Cluster{}
	for _, c := range clusters {
		byID[strings.ToLower(c.ResourceID)] = c
	}
	return func(id string) (placement.Cluster, bool) {
		c, ok := byID[strings.ToLower(id)]
		return c, ok
	}
}

func TestParityAvailableResources(t *testing.T) {
	tests := []struct {
		name              string
		ceiling, usage    string
		notReady, pending int
		wantAvailableNICs int64
	}{
		{name: "no ceiling, no usage", wantAvailableNICs: 0},
		{name: "ceiling only", ceiling: "9", wantAvailableNICs: 9},
		{name: "usage is subtracted", ceiling: "9", usage: "3", wantAvailableNICs: 6},
		{name: "each not-ready cluster costs 3", ceiling: "9", usage: "0", notReady: 2, wantAvailableNICs: 3},
		{name: "each reservation costs 3", ceiling: "9", usage: "0", pending: 2, wantAvailableNICs: 3},
		{name: "all together", ceiling: "30", usage: "6", notReady: 2, pending: 1, wantAvailableNICs: 15},
		{name: "overcommitted reads negative", ceiling: "3", usage: "0", notReady: 2, wantAvailableNICs: -3},
	}
	m := placement.NewModel(exact(), nil)
	// The cluster cache is empty: every listed cluster is unknown and costs as a SWIFT HA one.
	for lookupName, lookup := range map[string]placement.ClusterLookup{"nil lookup": nil, "empty cache": known()} {
		for _, tt := range tests {
			t.Run(lookupName+"/"+tt.name, func(t *testing.T) {
				c := reportCandidate("1", report{ceiling: nicList(tt.ceiling), usage: nicList(tt.usage),
					notReady: hcps("not-ready", tt.notReady), pending: hcps("pending", tt.pending)})
				assert.Equal(t, []int64{tt.wantAvailableNICs * 1000}, available(t, m, c, lookup))
			})
		}
	}
}

func TestParityAvailableResourcesMixedControlPlaneAvailability(t *testing.T) {
	// Every cluster is SWIFT and in the cache; a name with "-sr-" is single-replica.
	lookup := swift(func(id string) bool { return strings.Contains(id, "-sr-") })
	lists := func(ha, sr int, list string) []string {
		return append(hcps(list+"-ha", ha), hcps(list+"-sr", sr)...)
	}
	tests := []struct {
		name              string
		ceiling, usage    string
		pending, notReady []string
		wantAvailableNICs int64
	}{
		{name: "3 single-replica reservations", ceiling: "9", pending: lists(0, 3, "pending"), wantAvailableNICs: 6},
		{name: "2 HA reservations", ceiling: "9", pending: lists(2, 0, "pending"), wantAvailableNICs: 3},
		{name: "2 HA and 3 single-replica reservations", ceiling: "20", pending: lists(2, 3, "pending"), wantAvailableNICs: 11},
		{name: "2 HA and 4 single-replica not ready", ceiling: "20", notReady: lists(2, 4, "not-ready"), wantAvailableNICs: 10},
		{name: "both lists and usage", ceiling: "30", usage: "3", pending: lists(1, 2, "pending"), notReady: lists(1, 2, "not-ready"), wantAvailableNICs: 17},
		{name: "single-replica only", ceiling: "10", pending: lists(0, 4, "pending"), notReady: lists(0, 2, "not-ready"), wantAvailableNICs: 4},
	}
	m := placement.NewModel(exact(), nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := reportCandidate("1", report{ceiling: nicList(tt.ceiling), usage: nicList(tt.usage), notReady: tt.notReady, pending: tt.pending})
			assert.Equal(t, []int64{tt.wantAvailableNICs * 1000}, available(t, m, c, lookup))
		})
	}
}

// mixedNetworking knows a cluster of each networking mode and control-plane availability.
var mixedNetworking = known(
	placement.Cluster{ResourceID: hcp("plain-ha")},
	placement.Cluster{ResourceID: hcp("plain-sr"), SingleReplica: true},
	placement.Cluster{ResourceID: hcp("swift-ha"), Swift: true},
	placement.Cluster{ResourceID: hcp("swift-sr"), Swift: true, SingleReplica: true},
)

func TestParityAvailableResourcesMixedNetworkingModes(t *testing.T) {
	// 0 + 0 + 3 + 1 for the known clusters, nothing for the empty entry, 3 for the cache
	// miss: 7 per list. The same entries in both lists are charged in each, as upstream
	// charges them (no de-duplication).
	list := []string{hcp("plain-ha"), hcp("plain-sr"), hcp("swift-ha"), hcp("swift-sr"), "", hcp("not-in-cache")}
	c := reportCandidate("1", report{ceiling: nicList("30"), usage: nicList("3"), notReady: list, pending: list})
	assert.Equal(t, []int64{13_000}, available(t, placement.NewModel(exact(), nil), c, mixedNetworking))
}

func TestParityAvailableResourcesIgnoresNilEntries(t *testing.T) {
	// An empty string is what hcpsched decodes for upstream's nil entry.
	c := reportCandidate("1", report{ceiling: nicList("9"), pending: []string{"", hcp("x")}, notReady: []string{"", hcp("y")}})
	m := placement.NewModel(exact(), nil)
	assert.Equal(t, []int64{3_000}, available(t, m, c, known()))
	assert.Equal(t, 1, m.NewMC(c.ManagementCluster, c.Scheduling, nil).Reservations(), "an empty entry is no reservation")
}

// hcpsched: entries that differ only in case, or repeat, are each charged, as upstream
// charges them; the fleet removes a reservation in the write that reports its cluster.
func TestAvailableResourcesRepeatedEntriesAreEachCharged(t *testing.T) {
	c := reportCandidate("1", report{ceiling: nicList("30"), pending: []string{"", hcp("p"), strings.ToUpper(hcp("p")), hcp("p")}})
	m := placement.NewModel(exact(), nil)
	assert.Equal(t, []int64{21_000}, available(t, m, c, known()))
	assert.Equal(t, 3, m.NewMC(c.ManagementCluster, c.Scheduling, nil).Reservations())
}

// clusterDocument is the stored minimal cluster fixture with the networking and
// control-plane availability fields set as given: a nil value removes the field, and
// "null" writes JSON null.
func clusterDocument(t *testing.T, subnet, singleReplica any) *api.Cluster {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(arohcp.Get("hcpcluster-succeeded-minimal.json"), &doc))
	props := doc["properties"].(map[string]any)
	object := func(parent map[string]any, key string) map[string]any {
		if child, ok := parent[key].(map[string]any); ok {
			return child
		}
		child := map[string]any{}
		parent[key] = child
		return child
	}
	set := func(parent map[string]any, key string, v any) {
		switch v {
		case nil:
			delete(parent, key)
		case "null":
			parent[key] = nil
		default:
			parent[key] = v
		}
	}
	set(object(object(props, "customerProperties"), "platform"), "vnetIntegrationSubnetId", subnet)
	set(object(object(props, "serviceProviderProperties"), "experimentalFeatures"), "singleReplica", singleReplica)
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	c, err := api.Decode[api.ClusterProperties](b)
	require.NoError(t, err)
	return c
}

const vnetSubnet = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet/subnets/integration"

func TestParitySwiftNICsForCluster(t *testing.T) {
	tests := []struct {
		name          string
		subnet        any
		singleReplica any
		wantNICs      int64
		wantSwift     bool
		wantSingle    bool
	}{
		{name: "SWIFT, control-plane availability not set", subnet: vnetSubnet, wantNICs: 3, wantSwift: true},
		{name: "SWIFT, SingleReplica", subnet: vnetSubnet, singleReplica: api.SingleReplica, wantNICs: 1, wantSwift: true, wantSingle: true},
		{name: "SWIFT, another availability", subnet: vnetSubnet, singleReplica: "unknown", wantNICs: 3, wantSwift: true},
		{name: "hcpsched: SWIFT, the value is compared exactly", subnet: vnetSubnet, singleReplica: "singlereplica", wantNICs: 3, wantSwift: true},
		{name: "the same cluster without the subnet is non-SWIFT", wantNICs: 0},
		{name: "non-SWIFT, SingleReplica", singleReplica: api.SingleReplica, wantNICs: 0, wantSingle: true},
		{name: "hcpsched: an empty subnet is no subnet", subnet: "", wantNICs: 0},
		{name: "hcpsched: a null subnet is no subnet", subnet: "null", wantNICs: 0},
	}
	m := placement.NewModel(exact(), nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := clusterDocument(t, tt.subnet, tt.singleReplica)
			c := placement.ClusterOf(doc.ResourceID, doc)
			assert.Equal(t, placement.Cluster{ResourceID: doc.ResourceID, Swift: tt.wantSwift, SingleReplica: tt.wantSingle}, c)
			assert.Equal(t, []int64{tt.wantNICs * 1000}, m.Cost(c))
		})
	}

	// Every stored cluster fixture (one captured from a real database) costs what its JSON
	// says by upstream's rule, read here from the raw document.
	for _, f := range arohcp.All() {
		_, _, resourceType := api.Identify(f.Data)
		if !strings.EqualFold(resourceType, "Microsoft.RedHatOpenShift/hcpOpenShiftClusters") {
			continue
		}
		t.Run("fixture "+f.Name, func(t *testing.T) {
			var raw struct {
				Properties struct {
					CustomerProperties struct {
						Platform struct {
							VnetIntegrationSubnetID string `json:"vnetIntegrationSubnetId"`
						} `json:"platform"`
					} `json:"customerProperties"`
					ServiceProviderProperties struct {
						ExperimentalFeatures struct {
							SingleReplica string `json:"singleReplica"`
						} `json:"experimentalFeatures"`
					} `json:"serviceProviderProperties"`
				} `json:"properties"`
			}
			require.NoError(t, json.Unmarshal(f.Data, &raw))
			want := int64(0)
			if raw.Properties.CustomerProperties.Platform.VnetIntegrationSubnetID != "" {
				want = 3
				if raw.Properties.ServiceProviderProperties.ExperimentalFeatures.SingleReplica == api.SingleReplica {
					want = 1
				}
			}
			doc, err := api.Decode[api.ClusterProperties](f.Data)
			require.NoError(t, err)
			assert.Equal(t, []int64{want * 1000}, m.Cost(placement.ClusterOf(doc.ResourceID, doc)))
		})
	}
}

func TestParitySwiftNICsForResourceID(t *testing.T) {
	lookup := known(
		placement.Cluster{ResourceID: hcp("ha"), Swift: true},
		placement.Cluster{ResourceID: hcp("sr"), Swift: true, SingleReplica: true},
		placement.Cluster{ResourceID: hcp("plain")},
	)
	notFoundButAnswered := func(id string) (placement.Cluster, bool) { return placement.Cluster{ResourceID: id}, false }
	tests := []struct {
		name     string
		id       string
		lookup   placement.ClusterLookup
		wantNICs int64
	}{
		{"known HA", hcp("ha"), lookup, 3},
		{"known single replica", hcp("sr"), lookup, 1},
		{"known non-SWIFT", hcp("plain"), lookup, 0},
		{"hcpsched: the ID's case does not matter to the cache", strings.ToUpper(hcp("sr")), lookup, 1},
		{"missing from the cache", hcp("gone"), lookup, 3},
		{"no lookup", hcp("sr"), nil, 3},
		{"hcpsched: a miss costs 3 whatever else the lookup answers", hcp("plain"), notFoundButAnswered, 3},
	}
	m := placement.NewModel(exact(), nil)
	for _, tt := range tests {
		for _, list := range []string{"pending", "not ready"} {
			t.Run(tt.name+"/"+list, func(t *testing.T) {
				r := report{ceiling: nicList("30")}
				if list == "pending" {
					r.pending = []string{tt.id}
				} else {
					r.notReady = []string{tt.id}
				}
				assert.Equal(t, []int64{(30 - tt.wantNICs) * 1000}, available(t, m, reportCandidate("1", r), tt.lookup))
			})
		}
	}
}

// hcpsched: the consumption rule, max(usage, requests) per counted resource over both
// maps' keys, on the cases upstream's tables lack (they set usage only).
func TestAvailableResourcesUsageAndRequests(t *testing.T) {
	ceiling := api.ResourceList{api.SwiftNIC: "30", "cpu": "64"}
	tests := []struct {
		name            string
		usage, requests api.ResourceList
		want            []int64 // swift NICs, cpu; milli-units
	}{
		{name: "NICs requested beyond their usage", usage: api.ResourceList{api.SwiftNIC: "3"}, requests: api.ResourceList{api.SwiftNIC: "9"},
			want: []int64{21_000, 64_000}},
		{name: "NICs used beyond their requests", usage: api.ResourceList{api.SwiftNIC: "9"}, requests: api.ResourceList{api.SwiftNIC: "3"},
			want: []int64{21_000, 64_000}},
		{name: "cpu requested beyond its usage, as the agent reports it", usage: api.ResourceList{"cpu": "3617m"}, requests: api.ResourceList{"cpu": "7260m"},
			want: []int64{30_000, 56_740}},
		{name: "cpu used beyond its requests", usage: api.ResourceList{"cpu": "8"}, requests: api.ResourceList{"cpu": "2"},
			want: []int64{30_000, 56_000}},
		{name: "a resource in requests only", requests: api.ResourceList{api.SwiftNIC: "6", "cpu": "1500m"},
			want: []int64{24_000, 62_500}},
		{name: "a resource in usage only", usage: api.ResourceList{api.SwiftNIC: "6", "cpu": "1500m"},
			want: []int64{24_000, 62_500}},
		{name: "each resource takes its own larger side", usage: api.ResourceList{api.SwiftNIC: "6", "cpu": "1"}, requests: api.ResourceList{api.SwiftNIC: "3", "cpu": "4"},
			want: []int64{24_000, 60_000}},
		{name: "neither: an empty MC", want: []int64{30_000, 64_000}},
	}
	m := placement.NewModel(*withCPU(), nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := reportCandidate("1", report{ceiling: ceiling, usage: tt.usage, requests: tt.requests})
			assert.Equal(t, tt.want, available(t, m, c, nil))
		})
	}
}

// hcpsched: ARO-HCP's stored report of stamp 1 (requests equal usage for NICs, exceed it
// for cpu and memory) leaves the ceiling less the larger side of each.
func TestAvailableResourcesOfTheStoredReport(t *testing.T) {
	mc, err := api.Decode[api.ManagementClusterProperties](arohcp.Get("constructed/fleet-managementcluster-1-ready-schedulable.json"))
	require.NoError(t, err)
	sched, err := api.Decode[api.ManagementClusterSchedulingProperties](arohcp.Get("constructed/fleet-scheduling-stamp-1-observed.json"))
	require.NoError(t, err)
	cfg := *withCPU()
	cfg.Resources = append(cfg.Resources, placement.ResourceCost{Name: "memory", HA: cfg.Resources[1].HA, SingleReplica: cfg.Resources[1].SingleReplica})
	got, ok := placement.NewModel(cfg, nil).NewMC(mc, sched, nil).Available()
	require.True(t, ok)
	const Ki = 1024
	assert.Equal(t, []int64{
		(320 - 9) * 1000,
		316_400 - 7_260,
		(1_691_633_152 - 28_416*1024) * Ki * 1000, // requests 28416Mi exceed usage 21783532Ki
	}, got)
}

// hcpsched: a counted resource the ceiling lacks counts as upstream counts it (0 less
// what is consumed), but the MC is not judged full: it has no scheduling data for it.
func TestAvailableResourcesWithoutACeiling(t *testing.T) {
	c := reportCandidate("1", report{ceiling: api.ResourceList{"cpu": "8"}, usage: nicList("3")})
	m := placement.NewModel(exact(), nil)
	assert.Equal(t, []int64{-3_000}, available(t, m, c, nil))
	d := m.Decide(placement.Cluster{ResourceID: clusterID}, m.NewMCs([]placement.Candidate{c}, nil), now)
	assert.Equal(t, placement.ReasonNoSchedulingData, d.Verdict(0).Reason)
	assert.Equal(t, "no scale ceiling for "+api.SwiftNIC, d.Verdict(0).Detail())
	assert.Equal(t, placement.OutcomeStaleData, d.Outcome)
}

func TestParitySelectByCapacity(t *testing.T) {
	var (
		swiftHA = placement.Cluster{ResourceID: clusterID, Swift: true}
		swiftSR = placement.Cluster{ResourceID: clusterID, Swift: true, SingleReplica: true}
		plain   = placement.Cluster{ResourceID: clusterID}
	)
	// withNICs is an eligible MC with n swift NICs available.
	withNICs := func(stamp string, n int) placement.Candidate {
		if n < 0 {
			// Quantities are never negative: a ceiling of 0 and one unknown reservation per 3.
			return reportCandidate(stamp, report{ceiling: nicList(fmt.Sprint(n + 3)), pending: []string{hcp("reserved-on-" + stamp)}})
		}
		return reportCandidate(stamp, report{ceiling: nicList(fmt.Sprint(n))})
	}
	cordoned := candidate(mcSpec{stamp: "9", unschedulable: true})
	notReady := candidate(mcSpec{stamp: "8", notReady: true})
	noData := candidate(mcSpec{stamp: "7", noScheduling: true})
	tests := []struct {
		name          string
		mcs           []placement.Candidate
		cluster       placement.Cluster
		wantStamp     string
		wantOutcome   placement.Outcome
		wantCondition string
		wantMessage   string
	}{
		{name: "1 no candidates", cluster: swiftHA,
			wantOutcome: placement.OutcomeNoManagementClusters, wantCondition: placement.ConditionReasonNoEligible, wantMessage: "no management clusters are registered"},
		{name: "2 cordoned", mcs: []placement.Candidate{cordoned}, cluster: swiftHA,
			wantOutcome: placement.OutcomeNoEligible, wantCondition: placement.ConditionReasonNoEligible, wantMessage: "stamp 9: Unschedulable (cordoned)"},
		{name: "3 not Ready", mcs: []placement.Candidate{notReady}, cluster: swiftHA,
			wantOutcome: placement.OutcomeNoEligible, wantCondition: placement.ConditionReasonNoEligible, wantMessage: "stamp 8: NotReady (Ready is not True)"},
		{name: "4 no scheduling data", mcs: []placement.Candidate{noData}, cluster: swiftHA,
			wantOutcome: placement.OutcomeStaleData, wantCondition: placement.ConditionReasonEvaluationIncomplete, wantMessage: "stamp 7: NoSchedulingData (no scheduling document)"},
		{name: "5 eligible with 0 NICs beside one without data", mcs: []placement.Candidate{withNICs("1", 0), noData}, cluster: swiftHA,
			wantOutcome: placement.OutcomeStaleData, wantCondition: placement.ConditionReasonEvaluationIncomplete, wantMessage: "stamp 1: InsufficientCapacity"},
		{name: "6 a known fit beats one without data", mcs: []placement.Candidate{noData, withNICs("2", 3)}, cluster: swiftHA,
			wantStamp: "2", wantOutcome: placement.OutcomePlaced, wantCondition: placement.ConditionReasonAvailable, wantMessage: "placed on stamp 2"},
		{name: "7 too few NICs", mcs: []placement.Candidate{withNICs("1", 2)}, cluster: swiftHA,
			wantOutcome: placement.OutcomeCapacityExhausted, wantCondition: placement.ConditionReasonInsufficientCapacity,
			wantMessage: "stamp 1: InsufficientCapacity (aro.openshift.io/swift-nic 2 available, 3 needed)"},
		{name: "8 exactly at the threshold", mcs: []placement.Candidate{withNICs("1", 3)}, cluster: swiftHA,
			wantStamp: "1", wantOutcome: placement.OutcomePlaced, wantCondition: placement.ConditionReasonAvailable},
		{name: "9 the most available wins", mcs: []placement.Candidate{withNICs("1", 9), withNICs("2", 3), withNICs("3", 6)}, cluster: swiftHA,
			wantStamp: "1", wantOutcome: placement.OutcomePlaced, wantCondition: placement.ConditionReasonAvailable},
		{name: "10 the most available wins among those that fit", mcs: []placement.Candidate{withNICs("1", 2), withNICs("2", 5), withNICs("3", 4)}, cluster: swiftHA,
			wantStamp: "2", wantOutcome: placement.OutcomePlaced, wantCondition: placement.ConditionReasonAvailable},
		{name: "11 ties go to the lower ID", mcs: []placement.Candidate{withNICs("3", 3), withNICs("1", 3), withNICs("2", 3)}, cluster: swiftHA,
			wantStamp: "1", wantOutcome: placement.OutcomePlaced, wantCondition: placement.ConditionReasonAvailable},
		{name: "12 the eligible one", mcs: []placement.Candidate{cordoned, withNICs("2", 3)}, cluster: swiftHA,
			wantStamp: "2", wantOutcome: placement.OutcomePlaced, wantCondition: placement.ConditionReasonAvailable},
		{name: "13 single replica fits in 1", mcs: []placement.Candidate{withNICs("1", 1)}, cluster: swiftSR,
			wantStamp: "1", wantOutcome: placement.OutcomePlaced, wantCondition: placement.ConditionReasonAvailable},
		{name: "14 single replica does not fit in 0", mcs: []placement.Candidate{withNICs("1", 0)}, cluster: swiftSR,
			wantOutcome: placement.OutcomeCapacityExhausted, wantCondition: placement.ConditionReasonInsufficientCapacity,
			wantMessage: "aro.openshift.io/swift-nic 0 available, 1 needed"},
		{name: "15 HA does not fit in 1", mcs: []placement.Candidate{withNICs("1", 1)}, cluster: swiftHA,
			wantOutcome: placement.OutcomeCapacityExhausted, wantCondition: placement.ConditionReasonInsufficientCapacity,
			wantMessage: "aro.openshift.io/swift-nic 1 available, 3 needed"},
		{name: "16 zero demand fits zero capacity", mcs: []placement.Candidate{withNICs("1", 0)}, cluster: plain,
			wantStamp: "1", wantOutcome: placement.OutcomePlaced, wantCondition: placement.ConditionReasonAvailable},
		{name: "17 zero demand is rejected by negative NICs", mcs: []placement.Candidate{withNICs("1", -1)}, cluster: plain,
			wantOutcome: placement.OutcomeCapacityExhausted, wantCondition: placement.ConditionReasonInsufficientCapacity,
			wantMessage: "aro.openshift.io/swift-nic -1 available, 0 needed"},
		{name: "18 zero demand, no data", mcs: []placement.Candidate{noData}, cluster: plain,
			wantOutcome: placement.OutcomeStaleData, wantCondition: placement.ConditionReasonEvaluationIncomplete},
		{name: "hcpsched: ties compare lowercased IDs", mcs: []placement.Candidate{withNICs("B", 3), withNICs("a", 3), withNICs("C", 3)}, cluster: swiftHA,
			wantStamp: "a", wantOutcome: placement.OutcomePlaced, wantCondition: placement.ConditionReasonAvailable},
		{name: "hcpsched: ties go to fewer reservations before the lower ID",
			mcs:       []placement.Candidate{reportCandidate("1", report{ceiling: nicList("33"), pending: []string{hcp("in-flight")}}), withNICs("2", 30)},
			cluster:   swiftHA,
			wantStamp: "2", wantOutcome: placement.OutcomePlaced, wantCondition: placement.ConditionReasonAvailable},
	}
	for _, tt := range tests {
		// Whatever the order of the candidates, the same answer.
		for _, order := range []string{"listed", "reversed"} {
			t.Run(tt.name+"/"+order, func(t *testing.T) {
				mcs := slices.Clone(tt.mcs)
				if order == "reversed" {
					slices.Reverse(mcs)
				}
				d := placement.Decide(tt.cluster, mcs, exact(), nil, now)
				assert.Equal(t, tt.wantStamp, chosenStamp(t, d))
				assert.Equal(t, tt.wantOutcome, d.Outcome)
				assert.Equal(t, tt.wantCondition, d.Outcome.ConditionReason())
				assert.Contains(t, d.Message(), tt.wantMessage)
			})
		}
	}
}

// Upstream's last selection rule holds whatever the pending multiplier: pending
// reservations are what tips a tie, never the cost they already hold.
func TestParityTieOnPendingWithoutTheMultiplier(t *testing.T) {
	cfg := exact()
	cfg.PendingMultiplier = 0
	mcs := []placement.Candidate{
		reportCandidate("1", report{ceiling: nicList("33"), pending: []string{hcp("in-flight")}}),
		reportCandidate("2", report{ceiling: nicList("30")}),
	}
	d := placement.Decide(placement.Cluster{ResourceID: clusterID, Swift: true}, mcs, cfg, nil, now)
	assert.Equal(t, "2", chosenStamp(t, d))
	assert.Equal(t, d.Verdict(0).Score, d.Verdict(1).Score, "both have 30 NICs left")
}
