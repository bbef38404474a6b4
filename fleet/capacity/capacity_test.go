package capacity

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/fleet/agentpools"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
)

// fixtureReport is the CapacityReport of ARO-HCP's constructed capacity ReadDesire:
// Standard_D16ds_v5 with 6 ready nodes, Standard_E16ds_v5 with 2 ready and 1 not ready.
func fixtureReport(t *testing.T) *api.CapacityReport {
	t.Helper()
	rd, err := api.Decode[api.ReadDesireProperties](arohcp.Get("constructed/readdesire-capacity-stamp-1.json"))
	require.NoError(t, err)
	r, err := api.DecodeCapacityReport(rd.Properties.Status.KubeContent)
	require.NoError(t, err)
	return r
}

// ARO-HCP computed the observed resources of its fixture scheduling document from the
// fixture report; Observe must agree to the byte.
func TestObserveMatchesARO(t *testing.T) {
	sched, err := api.Decode[api.ManagementClusterSchedulingProperties](arohcp.Get("constructed/fleet-scheduling-stamp-1-observed.json"))
	require.NoError(t, err)
	want := sched.Properties.Status.ObservedResources

	got, err := Observe(fixtureReport(t))
	require.NoError(t, err)
	assert.Equal(t, want.Capacity, got.Capacity)
	assert.Equal(t, want.Usage, got.Usage)
	assert.Equal(t, want.Requests, got.Requests)
}

func TestObserve(t *testing.T) {
	r := &api.CapacityReport{Status: api.CapacityReportStatus{
		Nodes: []api.CapacityReportNode{
			{SKU: "a", Ready: 2, Allocatable: api.ResourceList{"cpu": "3500m", "memory": "1Gi", api.SwiftNIC: "32", "pods": "500"}},
			{SKU: "b", Ready: 1, Allocatable: api.ResourceList{"cpu": "2", "memory": "512Mi"}},
			{SKU: "c", Ready: 0, NotReady: 2, Allocatable: api.ResourceList{"cpu": "64"}},
		},
		Usage:     api.ResourceList{"cpu": "1", "pods": "12"},
		Requested: api.ResourceList{"pods": "3"},
	}}
	got, err := Observe(r)
	require.NoError(t, err)
	assert.Equal(t, Observed{
		Capacity: api.ResourceList{"cpu": "5500m", "memory": "1536Mi", api.SwiftNIC: "32"},
		Usage:    api.ResourceList{"cpu": "1"},
	}, got, "only ready nodes and scheduling resources count; nothing left is nil")

	r.Status.Nodes[0].Allocatable["cpu"] = "lots"
	_, err = Observe(r)
	assert.ErrorContains(t, err, "allocatable of a nodes: cpu")
}

func worker(vmSize string, count int32, maxCount int32, nics string) agentpools.Pool {
	p := agentpools.Pool{VMSize: vmSize, Count: count, NodeLabels: map[string]string{agentpools.RoleLabel: agentpools.WorkerRole}}
	if maxCount > 0 {
		p.EnableAutoScaling, p.MaxCount = true, &maxCount
	}
	if nics != "" {
		p.Tags = map[string]string{agentpools.NICSecondaryCountTag: nics}
	}
	return p
}

func TestComputeCeiling(t *testing.T) {
	report := fixtureReport(t)
	system := agentpools.Pool{VMSize: "Standard_D4ds_v5", Count: 3, NodeLabels: map[string]string{agentpools.RoleLabel: "system"}}
	autoscaleWithoutMax := worker("Standard_D16ds_v5", 3, 0, "")
	autoscaleWithoutMax.EnableAutoScaling = true
	tests := []struct {
		name   string
		report *api.CapacityReport
		pools  []agentpools.Pool
		sizes  VMSizes
		want   Ceiling
	}{
		{
			name:   "per-node amounts from the report: total ÷ ready nodes, times the maximum",
			report: report,
			pools:  []agentpools.Pool{system, worker("Standard_D16ds_v5", 3, 10, ""), worker("standard_e16ds_v5", 4, 0, "")},
			want: Ceiling{WorkerPools: 2, Capacity: api.ResourceList{
				// D16: 15820m, 58613616Ki, 16 per node × 10; E16: 15820m, 125281856Ki, 16 × 4.
				"cpu": "221480m", "memory": "1087263584Ki", api.SwiftNIC: "224",
			}},
		},
		{
			name:   "the report's NICs win over the tag",
			report: report,
			pools:  []agentpools.Pool{worker("Standard_D16ds_v5", 3, 10, "8")},
			want:   Ceiling{WorkerPools: 1, Capacity: api.ResourceList{"cpu": "158200m", "memory": "586136160Ki", api.SwiftNIC: "160"}},
		},
		{
			name:  "no report: the VM size table and the tag",
			pools: []agentpools.Pool{worker("Standard_E16ds_v5", 2, 6, "12")},
			sizes: DefaultVMSizes,
			want:  Ceiling{WorkerPools: 1, Capacity: api.ResourceList{"cpu": "96", "memory": "768Gi", api.SwiftNIC: "72"}},
		},
		{
			name: "a report without NICs for a size takes them from the tag",
			report: &api.CapacityReport{Status: api.CapacityReportStatus{Nodes: []api.CapacityReportNode{
				{SKU: "Standard_D16ds_v5", Ready: 2, Allocatable: api.ResourceList{"cpu": "31", "memory": "120Gi"}},
			}}},
			pools: []agentpools.Pool{worker("Standard_D16ds_v5", 2, 4, "16")},
			want:  Ceiling{WorkerPools: 1, Capacity: api.ResourceList{"cpu": "62", "memory": "240Gi", api.SwiftNIC: "64"}},
		},
		{
			name: "division rounds down: memory to Ki, CPU to millicores, NICs to whole NICs",
			report: &api.CapacityReport{Status: api.CapacityReportStatus{Nodes: []api.CapacityReportNode{
				{SKU: "x", Ready: 3, Allocatable: api.ResourceList{"cpu": "1", "memory": "1000Ki", api.SwiftNIC: "10"}},
			}}},
			pools: []agentpools.Pool{worker("x", 1, 0, "")},
			want:  Ceiling{WorkerPools: 1, Capacity: api.ResourceList{"cpu": "333m", "memory": "333Ki", api.SwiftNIC: "3"}},
		},
		{
			name: "a size without ready nodes falls back to the table",
			report: &api.CapacityReport{Status: api.CapacityReportStatus{Nodes: []api.CapacityReportNode{
				{SKU: "Standard_D4ds_v5", Ready: 0, NotReady: 3, Allocatable: api.ResourceList{"cpu": "1"}},
			}}},
			pools: []agentpools.Pool{worker("Standard_D4ds_v5", 2, 0, "4")},
			sizes: DefaultVMSizes,
			want:  Ceiling{WorkerPools: 1, Capacity: api.ResourceList{"cpu": "8", "memory": "32Gi", api.SwiftNIC: "8"}},
		},
		{
			name:  "autoscaling without a maximum counts the current size",
			pools: []agentpools.Pool{autoscaleWithoutMax},
			sizes: VMSizes{"Standard_D16ds_v5": {"cpu": "16", "memory": "64Gi", api.SwiftNIC: "8"}},
			want:  Ceiling{WorkerPools: 1, Capacity: api.ResourceList{"cpu": "48", "memory": "192Gi", api.SwiftNIC: "24"}},
		},
		{
			name:  "an unknown size is reported per resource and adds only what is known",
			pools: []agentpools.Pool{worker("Standard_F8s", 2, 0, "8"), worker("Standard_D4ds_v5", 1, 0, "")},
			sizes: DefaultVMSizes,
			want: Ceiling{WorkerPools: 2, Capacity: api.ResourceList{"cpu": "4", "memory": "16Gi", api.SwiftNIC: "16"},
				Unresolved: []string{"Standard_D4ds_v5: aro.openshift.io/swift-nic", "Standard_F8s: cpu", "Standard_F8s: memory"}},
		},
		{
			name:  "no worker pools: no ceiling",
			pools: []agentpools.Pool{system},
			sizes: DefaultVMSizes,
			want:  Ceiling{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ComputeCeiling(tc.report, tc.pools, tc.sizes)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestComputeCeilingRejectsBadQuantities(t *testing.T) {
	_, err := ComputeCeiling(nil, []agentpools.Pool{worker("x", 1, 0, "")}, VMSizes{"x": {"cpu": "many"}})
	assert.ErrorContains(t, err, "VM size table")
	_, err = ComputeCeiling(&api.CapacityReport{Status: api.CapacityReportStatus{Nodes: []api.CapacityReportNode{
		{SKU: "x", Ready: 1, Allocatable: api.ResourceList{"memory": "?"}},
	}}}, []agentpools.Pool{worker("x", 1, 0, "")}, nil)
	assert.ErrorContains(t, err, "allocatable of x nodes: memory")
}

func TestLoadVMSizes(t *testing.T) {
	got, err := LoadVMSizes("")
	require.NoError(t, err)
	assert.Equal(t, DefaultVMSizes, got)

	file := filepath.Join(t.TempDir(), "sizes.json")
	content, _ := json.Marshal(map[string]any{
		"standard_d16ds_v5": map[string]string{"cpu": "15800m", "memory": "58Gi", api.SwiftNIC: "16"},
		"Standard_L8s_v3":   map[string]string{"cpu": "8", "memory": "64Gi"},
	})
	require.NoError(t, os.WriteFile(file, content, 0o600))
	got, err = LoadVMSizes(file)
	require.NoError(t, err)
	d16, ok := got.Lookup("Standard_D16ds_v5")
	require.True(t, ok)
	assert.Equal(t, api.ResourceList{"cpu": "15800m", "memory": "58Gi", api.SwiftNIC: "16"}, d16, "the file replaces a built-in entry, whatever its casing")
	_, ok = got.Lookup("STANDARD_L8S_V3")
	assert.True(t, ok, "and adds its own")
	assert.Len(t, got, len(DefaultVMSizes)+1)
	assert.Equal(t, "64Gi", DefaultVMSizes["Standard_D16ds_v5"]["memory"], "the defaults are not changed")

	require.NoError(t, os.WriteFile(file, []byte(`{"x": {"cpu": "lots"}}`), 0o600))
	_, err = LoadVMSizes(file)
	assert.ErrorContains(t, err, "cpu of x")
	_, err = LoadVMSizes(filepath.Join(t.TempDir(), "missing.json"))
	assert.Error(t, err)
}
