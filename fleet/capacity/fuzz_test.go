package capacity_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/fleet/agentpools"
	"github.com/hcpsched/hcpsched/fleet/capacity"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// capacityReadDesire is ARO-HCP's constructed capacity ReadDesire, the only real report
// in the fixtures.
const capacityReadDesire = "constructed/readdesire-capacity-stamp-1.json"

// FuzzCapacityReport feeds what a management cluster's agent writes through the fleet's
// read path: the input is either a whole capacity ReadDesire document or the kubeContent
// inside one (mutating the envelope mostly exercises the document codec, which FuzzDecode
// in internal/api covers), decoded as readCapacityReport does and then observed and
// turned into a scale ceiling. Nothing may panic, and whatever the fleet accepts must be
// something placement can count: known resources only, parseable, never negative.
func FuzzCapacityReport(f *testing.F) {
	doc := arohcp.Get(capacityReadDesire)
	rd, err := api.Decode[api.ReadDesireProperties](doc)
	require.NoError(f, err)
	f.Add(doc)
	f.Add([]byte(rd.Properties.Status.KubeContent))
	for _, s := range []string{
		`null`,
		``,
		`{"kind":"CapacityReport"}`,
		`{"kind":"CapacityReport","status":{"nodes":[{"sku":"a","ready":2,"allocatable":{"cpu":"3500m","memory":"1Gi","aro.openshift.io/swift-nic":"32","pods":"500"}},{"sku":"A","ready":1,"allocatable":{"cpu":"2","memory":"512Mi"}},{"sku":"b","ready":0,"notReady":2,"allocatable":{"cpu":"64"}}],"usage":{"cpu":"1","pods":"12"},"requested":{"memory":"1e3"}}}`,
		`{"kind":"CapacityReport","status":{"nodes":[{"sku":"Standard_D16ds_v5","ready":3,"allocatable":{"cpu":"-1","memory":"1.5Gi"}}]}}`,
		`{"kind":"CapacityReport","status":{"nodes":[{"sku":"Standard_D16ds_v5","ready":1,"allocatable":{"cpu":"9e15","memory":"8Ei"}}]}}`,
		`{"kind":"CapacityReport","status":{"usage":{"cpu":"lots","aro.openshift.io/swift-nic":"-3"},"requested":{"memory":"0.0001"}}}`,
		// Spellings apimachinery takes minutes to parse or to add up.
		`{"kind":"CapacityReport","status":{"nodes":[{"sku":"a","ready":1,"allocatable":{"cpu":"1e-300000000"}}]}}`,
		`{"kind":"CapacityReport","status":{"nodes":[{"sku":"a","ready":1,"allocatable":{"cpu":"1e300000000"}},{"sku":"b","ready":1,"allocatable":{"cpu":"1m"}}]}}`,
		// Allocatable in range whose product with the pools' 50 nodes is not.
		`{"kind":"CapacityReport","status":{"nodes":[{"sku":"Standard_D16ds_v5","ready":1,"allocatable":{"cpu":"9e14","memory":"8Pi","aro.openshift.io/swift-nic":"9e15"}}]}}`,
		`{"kind":"CapacityReport","status":{"nodes":[{"sku":"x","ready":-1,"allocatable":{"cpu":"1"}}],"lastReportedAt":"2026-08-21T09:30:05+02:00"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		content := json.RawMessage(data)
		if d, err := api.Decode[api.ReadDesireProperties](data); err == nil {
			content = nil
			if d.Properties.Status != nil {
				content = d.Properties.Status.KubeContent
			}
		}
		report, err := api.DecodeCapacityReport(content)
		if err != nil {
			return
		}
		require.NotNil(t, report)
		require.Equal(t, api.CapacityReportKind, report.Kind, "the decoder checks the kind")

		observed, err := capacity.Observe(report)
		if err == nil {
			checkObserved(t, report, observed)
			checkRoundTrip(t, report, observed)
		}

		pools := fuzzPools(report)
		ceiling, err := capacity.ComputeCeiling(report, pools, capacity.DefaultVMSizes)
		if err == nil {
			checkCeiling(t, ceiling, pools)
		}
	})
}

// checkObserved: the capacity is the ready nodes' allocatable summed, so it holds exactly
// the scheduling resources some ready node reports, each at least any single node's
// share; usage and requests are the report's own spelling of those resources.
func checkObserved(t *testing.T, report *api.CapacityReport, o capacity.Observed) {
	t.Helper()
	reported := map[string]bool{}
	for _, n := range report.Status.Nodes {
		if n.Ready <= 0 {
			continue
		}
		for _, r := range capacity.Resources {
			v, ok := n.Allocatable[r]
			if !ok {
				continue
			}
			reported[r] = true
			total := countable(t, "capacity", o.Capacity, r)
			part, err := placement.ParseQuantity(v)
			require.NoError(t, err, "an accepted report's allocatable parses")
			assert.GreaterOrEqual(t, total.Cmp(part), 0, "capacity %s %s is less than one SKU's %s", r, total.String(), v)
		}
	}
	for r := range o.Capacity {
		assert.True(t, reported[r], "capacity %s without a ready node reporting it", r)
	}
	for _, l := range []struct {
		name     string
		got, raw api.ResourceList
	}{{"usage", o.Usage, report.Status.Usage}, {"requests", o.Requests, report.Status.Requested}} {
		for r, v := range l.got {
			countable(t, l.name, l.got, r)
			assert.Equal(t, l.raw[r], v, "%s %s is spelled as reported", l.name, r)
		}
		for _, r := range capacity.Resources {
			if _, ok := l.raw[r]; ok {
				assert.Contains(t, l.got, r, "%s %s is reported", l.name, r)
			}
		}
	}
}

// checkRoundTrip: the report re-encoded is what the controller would read back from its
// own write, so the codec must be a fixed point after one pass and observe the same.
func checkRoundTrip(t *testing.T, report *api.CapacityReport, o capacity.Observed) {
	t.Helper()
	once, err := json.Marshal(report)
	require.NoError(t, err)
	again, err := api.DecodeCapacityReport(once)
	require.NoError(t, err, "an encoded report decodes: %s", once)
	twice, err := json.Marshal(again)
	require.NoError(t, err)
	assert.JSONEq(t, string(once), string(twice))
	o2, err := capacity.Observe(again)
	require.NoError(t, err)
	assert.Equal(t, o, o2)
}

// fuzzPools are worker pools of every SKU the report names, so the report's per-node
// amounts are divided and multiplied, plus a pool the VM size table resolves, one with
// a NIC tag, one nothing resolves and a system pool that must not count.
func fuzzPools(report *api.CapacityReport) []agentpools.Pool {
	worker := map[string]string{agentpools.RoleLabel: agentpools.WorkerRole}
	maxCount := int32(50)
	pools := []agentpools.Pool{
		{VMSize: "Standard_E16ds_v5", Count: 3, NodeLabels: worker},
		{VMSize: "Standard_D8ds_v5", Count: 2, EnableAutoScaling: true, MaxCount: &maxCount, NodeLabels: worker,
			Tags: map[string]string{agentpools.NICSecondaryCountTag: "16"}},
		{VMSize: "Standard_Unknown", Count: 7, NodeLabels: worker},
		{VMSize: "Standard_D4ds_v5", Count: 3, NodeLabels: map[string]string{agentpools.RoleLabel: "system"}},
	}
	for _, n := range report.Status.Nodes {
		pools = append(pools, agentpools.Pool{VMSize: n.SKU, Count: 10, EnableAutoScaling: true, MaxCount: &maxCount, NodeLabels: worker})
	}
	return pools
}

func checkCeiling(t *testing.T, c capacity.Ceiling, pools []agentpools.Pool) {
	t.Helper()
	workers := 0
	for _, p := range pools {
		if p.IsWorker() {
			workers++
		}
	}
	assert.Equal(t, workers, c.WorkerPools)
	for r := range c.Capacity {
		countable(t, "ceiling", c.Capacity, r)
	}
	assert.True(t, slices.IsSorted(c.Unresolved), "unresolved is sorted: %v", c.Unresolved)
	assert.Len(t, slices.Compact(slices.Clone(c.Unresolved)), len(c.Unresolved), "unresolved has no duplicates")
	for _, u := range c.Unresolved {
		_, r, ok := strings.Cut(u, ": ")
		require.True(t, ok, u)
		assert.Contains(t, capacity.Resources, r)
	}
}

// countable asserts that l[r] is a scheduling resource holding a quantity placement can
// count, never a negative one, and returns it.
func countable(t *testing.T, field string, l api.ResourceList, r string) resource.Quantity {
	t.Helper()
	require.Contains(t, capacity.Resources, r, "%s has only scheduling resources", field)
	v, ok := l[r]
	require.True(t, ok, "%s has %s", field, r)
	_, err := placement.ParseQuantity(v)
	require.NoError(t, err, "placement can count %s %s=%q", field, r, v)
	q, err := resource.ParseQuantity(v)
	require.NoError(t, err, "%s %s=%q parses", field, r, v)
	assert.GreaterOrEqual(t, q.Sign(), 0, "%s %s=%q is not negative", field, r, v)
	return q
}
