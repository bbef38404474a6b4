package mcsim

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

func TestBuildReport(t *testing.T) {
	now := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	tests := []struct {
		name                     string
		nodes                    int
		hcps                     []HCP
		wantRequested, wantUsage api.ResourceList
		wantReady, wantNotReady  []string
	}{
		{name: "an MC without HCP pods writes neither map", nodes: 3},
		{
			name: "a HostedControlPlane just created has no pods yet", nodes: 3,
			hcps: []HCP{{ResourceID: "/new"}}, wantNotReady: []string{"/new"},
		},
		{
			name: "a ready non-SWIFT HA HCP requests for three replicas and no NIC", nodes: 2,
			hcps:          []HCP{{ResourceID: "/a", Ready: true}},
			wantRequested: api.ResourceList{"cpu": "1500m", "memory": "6Gi"},
			wantUsage:     api.ResourceList{"cpu": "750m", "memory": "4608Mi"},
			wantReady:     []string{"/a"},
		},
		{
			name: "lists in byte order, exact duplicates removed, every HCP's pods counted", nodes: 3,
			hcps: []HCP{
				{ResourceID: "/b", Ready: true}, {ResourceID: "/B", Ready: true}, {ResourceID: "/a", Ready: true},
				{ResourceID: "/b", Ready: true}, {ResourceID: "/z"}, {ResourceID: "/Y"},
			},
			wantRequested: api.ResourceList{"cpu": "6", "memory": "24Gi"},
			wantUsage:     api.ResourceList{"cpu": "3", "memory": "18Gi"},
			wantReady:     []string{"/B", "/a", "/b"},
			wantNotReady:  []string{"/Y", "/z"},
		},
		{
			name: "a ready SWIFT HA HCP requests 3 NICs and uses what it requests", nodes: 3,
			hcps:          []HCP{{ResourceID: "/a", Swift: true, Ready: true}},
			wantRequested: api.ResourceList{"cpu": "1500m", "memory": "6Gi", api.SwiftNIC: "3"},
			wantUsage:     api.ResourceList{"cpu": "750m", "memory": "4608Mi", api.SwiftNIC: "3"},
			wantReady:     []string{"/a"},
		},
		{
			name: "a ready SWIFT single-replica HCP requests 1 NIC", nodes: 3,
			hcps:          []HCP{{ResourceID: "/a", Swift: true, SingleReplica: true, Ready: true}},
			wantRequested: api.ResourceList{"cpu": "500m", "memory": "2Gi", api.SwiftNIC: "1"},
			wantUsage:     api.ResourceList{"cpu": "250m", "memory": "1536Mi", api.SwiftNIC: "1"},
			wantReady:     []string{"/a"},
		},
		{
			name: "non-SWIFT HCPs beside a SWIFT one add no NIC", nodes: 3,
			hcps: []HCP{
				{ResourceID: "/a", Ready: true}, {ResourceID: "/b", SingleReplica: true, Ready: true},
				{ResourceID: "/c", Swift: true, SingleReplica: true, Ready: true},
			},
			wantRequested: api.ResourceList{"cpu": "2500m", "memory": "10Gi", api.SwiftNIC: "1"},
			wantUsage:     api.ResourceList{"cpu": "1250m", "memory": "7680Mi", api.SwiftNIC: "1"},
			wantReady:     []string{"/a", "/b", "/c"},
		},
		{
			name: "a starting HCP's first replica is Pending: requested, not used, but its NIC is", nodes: 3,
			hcps:          []HCP{{ResourceID: "/new", Swift: true, StartedReplicas: 1}},
			wantRequested: api.ResourceList{"cpu": "500m", "memory": "2Gi", api.SwiftNIC: "1"},
			wantUsage:     api.ResourceList{api.SwiftNIC: "1"},
			wantNotReady:  []string{"/new"},
		},
		{
			name: "a starting HCP with two replicas started runs one", nodes: 3,
			hcps:          []HCP{{ResourceID: "/new", Swift: true, StartedReplicas: 2}},
			wantRequested: api.ResourceList{"cpu": "1", "memory": "4Gi", api.SwiftNIC: "2"},
			wantUsage:     api.ResourceList{"cpu": "250m", "memory": "1536Mi", api.SwiftNIC: "2"},
			wantNotReady:  []string{"/new"},
		},
		{
			name: "StartedReplicas is capped at the HCP's replicas", nodes: 3,
			hcps:          []HCP{{ResourceID: "/new", Swift: true, SingleReplica: true, StartedReplicas: 3}},
			wantRequested: api.ResourceList{"cpu": "500m", "memory": "2Gi", api.SwiftNIC: "1"},
			wantUsage:     api.ResourceList{api.SwiftNIC: "1"},
			wantNotReady:  []string{"/new"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultProfile()
			p.Nodes = tt.nodes
			r, err := BuildReport(p, tt.hcps, now)
			require.NoError(t, err)
			assert.Equal(t, api.CapacityReportKind, r.Kind)
			assert.Equal(t, tt.wantRequested, nilIfEmpty(r.Status.Requested), "requested")
			assert.Equal(t, tt.wantUsage, nilIfEmpty(r.Status.Usage), "usage")
			assert.Equal(t, tt.wantReady, r.Status.HostedControlPlanes.ReadyResourceIDs)
			assert.Equal(t, tt.wantNotReady, r.Status.HostedControlPlanes.NotReadyResourceIDs)
			assert.Equal(t, tt.nodes, r.Status.Nodes[0].Ready)
			assert.Equal(t, now, r.Status.LastReportedAt)

			b, err := json.Marshal(r)
			require.NoError(t, err)
			var wire struct {
				Status map[string]json.RawMessage `json:"status"`
			}
			require.NoError(t, json.Unmarshal(b, &wire))
			for key, want := range map[string]api.ResourceList{"requested": tt.wantRequested, "usage": tt.wantUsage} {
				_, present := wire.Status[key]
				assert.Equal(t, len(want) > 0, present, "%s is on the wire only when a pod counts", key)
			}
		})
	}
}

func nilIfEmpty(l api.ResourceList) api.ResourceList {
	if len(l) == 0 {
		return nil
	}
	return l
}

// The stamp-1 fixture, built from ARO-HCP's agent, has two ready HCPs and one not ready,
// 9 NICs; the same MC simulated keeps the fixture's relations: cpu and memory requested
// above used, NICs used equal to NICs requested, and the same NIC count.
func TestBuildReportKeepsTheRelationsOfTheAgentsReport(t *testing.T) {
	rd, err := api.Decode[api.ReadDesireProperties](arohcp.Get("constructed/readdesire-capacity-stamp-1.json"))
	require.NoError(t, err)
	fixture, err := api.DecodeCapacityReport(rd.Properties.Status.KubeContent)
	require.NoError(t, err)
	sim, err := BuildReport(DefaultProfile(), []HCP{
		{ResourceID: fixture.Status.HostedControlPlanes.ReadyResourceIDs[0], Swift: true, Ready: true},
		{ResourceID: fixture.Status.HostedControlPlanes.ReadyResourceIDs[1], Swift: true, Ready: true},
		{ResourceID: fixture.Status.HostedControlPlanes.NotReadyResourceIDs[0], Swift: true, StartedReplicas: 3},
	}, time.Now())
	require.NoError(t, err)

	for name, r := range map[string]*api.CapacityReport{"fixture": fixture, "simulated": sim} {
		t.Run(name, func(t *testing.T) {
			for _, res := range []string{"cpu", "memory"} {
				requested := resource.MustParse(r.Status.Requested[res])
				used := resource.MustParse(r.Status.Usage[res])
				assert.Equal(t, 1, requested.Cmp(used), "%s requested %s above used %s", res, requested.String(), used.String())
			}
			assert.Equal(t, "9", r.Status.Requested[api.SwiftNIC])
			assert.Equal(t, r.Status.Requested[api.SwiftNIC], r.Status.Usage[api.SwiftNIC])
			assert.Equal(t, fixture.Status.HostedControlPlanes, r.Status.HostedControlPlanes)
		})
	}
}

func TestStartedReplicas(t *testing.T) {
	const delay = 10 * time.Second
	tests := []struct {
		name     string
		replicas int
		age      time.Duration
		delay    time.Duration
		want     int
	}{
		{"the HostedControlPlane comes before its pods", 3, 0, delay, 0},
		{"a clock step back counts as just created", 3, -time.Second, delay, 0},
		{"the first replica at once after", 3, time.Nanosecond, delay, 1},
		{"the first replica up to a third of the delay", 3, delay / 3, delay, 1},
		{"the second replica past a third", 3, delay/3 + time.Nanosecond, delay, 2},
		{"the third replica past two thirds", 3, 7 * time.Second, delay, 3},
		{"all replicas once ready", 3, delay, delay, 3},
		{"long ready", 3, time.Hour, delay, 3},
		{"single replica while starting", 1, time.Second, delay, 1},
		{"no delay: ready at once", 3, 0, 0, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, StartedReplicas(tt.replicas, tt.age, tt.delay))
		})
	}
}

// The package's figures stay what its documentation says they are.
func TestDefaultsAgree(t *testing.T) {
	assert.Equal(t, 3, DefaultHASwiftNICs, "upstream placement charges a SWIFT HA HCP 3 NICs")
	assert.Equal(t, 1, DefaultSingleSwiftNICs, "and a SWIFT single-replica one 1")
	assert.Equal(t, int64(DefaultHASwiftNICs), HCP{Swift: true}.SwiftNICs())
	assert.Equal(t, int64(DefaultSingleSwiftNICs), HCP{Swift: true, SingleReplica: true}.SwiftNICs())
	assert.Zero(t, HCP{}.SwiftNICs(), "a non-SWIFT HCP takes none")
	for name, pct := range map[string]int{"cpu": UsageCPUPercent, "memory": UsageMemoryPercent} {
		assert.Positive(t, pct, name)
		assert.Less(t, pct, 100, "%s usage stays below requests", name)
	}
}
