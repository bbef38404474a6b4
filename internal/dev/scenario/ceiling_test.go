package scenario

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

const (
	testMC1 = "/providers/Microsoft.RedHatOpenShift/stamps/1/managementClusters/default"
	testMC2 = "/providers/Microsoft.RedHatOpenShift/stamps/2/managementClusters/default"
)

func testCluster(name string) string {
	return "/subscriptions/00000000-0000-4000-8000-000000000001/resourcegroups/rg/providers/microsoft.redhatopenshift/hcpopenshiftclusters/" + name
}

func nics(n string) api.ResourceList { return api.ResourceList{api.SwiftNIC: n} }

func TestCommitmentsCountIntentAndLiveReservationsAsPlacementDoes(t *testing.T) {
	a, b, c, d, e, f, g := testCluster("a"), testCluster("b"), testCluster("c"), testCluster("d"), testCluster("e"), testCluster("f"), testCluster("g")
	s := snapshot{
		mcs: []mcState{
			{id: testMC1, ceiling: nics("32"), reservations: []string{a, c, d, e, "/subscriptions/x/resourcegroups/y/providers/microsoft.redhatopenshift/hcpopenshiftclusters/foreign"}},
			{id: testMC2, ceiling: nics("16")},
			{id: "/providers/Microsoft.RedHatOpenShift/stamps/3/managementClusters/default"}, // no ceiling yet: not judged
		},
		clusters: map[string]clusterState{
			a: {intended: testMC1, known: true},                      // placed and still reserved: counted once
			b: {intended: testMC1, singleReplica: true, known: true}, // single replica: 1
			c: {known: true},                                         // in flight: its reservation counts
			d: {intended: testMC2, known: true},                      // went elsewhere: a stale reservation here
			e: {known: true, ended: true},                            // ended: its reservation is on its way out
			f: {intended: testMC1, observed: testMC2, known: true},   // Cluster Service put it on MC 2
			g: {intended: testMC1, ended: true, known: true},         // placed, then failed
		},
	}
	got := commitments(s, placement.DefaultConfig())
	require.Len(t, got, 2)
	assert.Equal(t, testMC1, got[0].mc)
	// a 3 + b 1 + c 3 + the unknown foreign reservation 3.
	assert.Equal(t, int64(10_000), got[0].committed)
	assert.Equal(t, int64(32_000), got[0].ceiling)
	assert.Equal(t, []string{"a (spec+reservation)", "b (spec)", "c (reservation)", "foreign (reservation)"}, got[0].clusters)
	assert.False(t, got[0].over())
	// d 3 + f 3.
	assert.Equal(t, int64(6_000), got[1].committed)
	assert.Equal(t, []string{"d (spec)", "f (status)"}, got[1].clusters)
}

// The ceiling watch fails a run on the one sample that overbooks an MC, with what it
// counted, even though the samples before and after it hold.
func TestCeilingWatchFailsOnOneOverbookedSample(t *testing.T) {
	a, b := testCluster("a"), testCluster("b")
	samples := []snapshot{
		{at: time.Second, mcs: []mcState{{id: testMC1, ceiling: nics("3"), reservations: []string{a}}},
			clusters: map[string]clusterState{a: {known: true}, b: {known: true}}},
		// A's reservation dropped while A is placed here, and B placed on top of it.
		{at: 2 * time.Second, mcs: []mcState{{id: testMC1, ceiling: nics("3"), reservations: []string{b}}},
			clusters: map[string]clusterState{a: {intended: testMC1, known: true}, b: {known: true}}},
		{at: 3 * time.Second, mcs: []mcState{{id: testMC1, ceiling: nics("6")}},
			clusters: map[string]clusterState{a: {intended: testMC1, known: true}, b: {intended: testMC1, known: true}}},
	}
	w := newCeilingWatch(placement.DefaultConfig())
	for _, s := range samples {
		w.observe(s)
	}
	inv := w.invariant()
	require.False(t, inv.Passed())
	assert.Contains(t, inv.Name, "3 samples")
	require.Len(t, inv.Violations, 2)
	assert.Equal(t, "1 of 3 samples had an MC over its ceiling; the first for each MC:", inv.Violations[0])
	assert.Equal(t, "sample 2 at 2.0s: "+testMC1+": 6 "+api.SwiftNIC+" committed, ceiling 3; counted a (spec), b (reservation)", inv.Violations[1])
	assert.Equal(t, []string{testMC1 + "  6/3 " + api.SwiftNIC + " (2.00), first at sample 2, 2.0s"}, w.fullestLines())

	// The same run without the overbooked sample holds, and still reports its fullest.
	w = newCeilingWatch(placement.DefaultConfig())
	w.observe(samples[0])
	w.observe(samples[2])
	assert.True(t, w.invariant().Passed(), w.invariant().Violations)
	assert.Equal(t, []string{testMC1 + "  3/3 " + api.SwiftNIC + " (1.00), first at sample 1, 1.0s"}, w.fullestLines(), "the first of equally full samples")
}

// A run that sampled nothing, or nothing worth checking, fails instead of passing.
func TestCeilingWatchFailsAnEmptyRun(t *testing.T) {
	tests := map[string][]snapshot{
		"no sample":           nil,
		"no MC with ceiling":  {{mcs: []mcState{{id: testMC1}}}},
		"no cluster on an MC": {{mcs: []mcState{{id: testMC1, ceiling: nics("3")}}}},
	}
	for name, samples := range tests {
		t.Run(name, func(t *testing.T) {
			w := newCeilingWatch(placement.DefaultConfig())
			for _, s := range samples {
				w.observe(s)
			}
			assert.False(t, w.invariant().Passed())
		})
	}
}
