package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
)

// small is a region that settles in seconds on the memory store.
func small(t *testing.T) Options {
	o := DefaultOptions()
	o.ManagementClusters, o.Clusters, o.SingleReplicaEvery = 3, 24, 4
	o.Timeout, o.ProgressEvery = time.Minute, 500*time.Millisecond
	o.OutputDir = t.TempDir()
	if raceEnabled {
		o.GoBuildFlags = []string{"-race"}
	}
	return o
}

func TestBenchMeasuresEveryRunAndWritesTheReport(t *testing.T) {
	o := small(t)
	outDir := t.TempDir()
	var out bytes.Buffer
	results, err := Bench(t.Context(), o, []string{StoreMemory}, []int{4, 1}, outDir, &out)
	require.NoError(t, err, out.String())
	require.Len(t, results, 2)
	for i, workers := range []int{4, 1} {
		r := results[i]
		assert.Equal(t, workers, r.Workers)
		assert.Equal(t, o.Clusters, r.Placements, "every cluster placed")
		assert.Len(t, r.Latencies, o.Clusters)
		for _, l := range r.Latencies {
			assert.Positive(t, l, "placed after it was created")
		}
		assert.Positive(t, r.Elapsed)
		// Each placement costs at least its SPC create, the reservation and the record.
		assert.GreaterOrEqual(t, r.CosmosRequests, float64(3*o.Clusters))
		assert.Positive(t, r.ByOperation["replace"])
		assert.Positive(t, r.PeakRSSBytes)
		assert.Zero(t, r.RequestCharge, "the memory store charges nothing")
	}

	b, err := os.ReadFile(filepath.Join(outDir, "summary.json"))
	require.NoError(t, err)
	var summary map[string]map[string]any
	require.NoError(t, json.Unmarshal(b, &summary))
	require.Contains(t, summary, StoreMemory)
	assert.Contains(t, summary[StoreMemory], "workers_4")
	assert.Contains(t, summary[StoreMemory], "throughput_ratio_4_to_1")
	assert.FileExists(t, filepath.Join(outDir, "chart.svg"))
	assert.Contains(t, out.String(), "throughput ratio")
}

func TestOptionsValidate(t *testing.T) {
	tests := map[string]func(*Options){
		"unknown store":                 func(o *Options) { o.Store = "disk" },
		"no management cluster":         func(o *Options) { o.ManagementClusters = 0 },
		"no cluster":                    func(o *Options) { o.Clusters = 0 },
		"negative rate":                 func(o *Options) { o.Rate = -1 },
		"no worker":                     func(o *Options) { o.Workers = 0 },
		"two replicas on memory":        func(o *Options) { o.Backends = 2 },
		"zero poll interval":            func(o *Options) { o.PollInterval = 0 },
		"negative latency of emulators": func(o *Options) { o.EmulatorLatency = -time.Millisecond },
	}
	require.NoError(t, DefaultOptions().Validate())
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			mutate(&o)
			assert.Error(t, o.Validate())
		})
	}
	c := DefaultChaosOptions()
	require.NoError(t, c.Validate())
	c.Store = StoreMemory
	assert.ErrorContains(t, c.Validate(), "emulator")
}

func TestNodesHoldTheClustersWithHeadroom(t *testing.T) {
	o := DefaultOptions()
	nodes := o.nodes(3, 16)
	perMC := o.Clusters / o.ManagementClusters
	assert.GreaterOrEqual(t, nodes*16, int(float64(perMC*3)*DefaultHeadroom))
	o.Nodes = 7
	assert.Equal(t, 7, o.nodes(3, 16))

	c := DefaultChaosOptions()
	n := c.tightNodes()
	assert.Less(t, float64(n*16*c.ManagementClusters), 2*float64(c.Clusters*3), "tight enough that a double commit shows")
	assert.GreaterOrEqual(t, float64(n*16*c.ManagementClusters), c.Headroom*float64(c.Clusters)*2.5)
}

// TestInvariantsCatchWhatTheyClaim settles a seeded region, finds every invariant
// holding, then breaks each one in the store or the logs and expects it to fail.
func TestInvariantsCatchWhatTheyClaim(t *testing.T) {
	o := small(t)
	o.SeedExtraFields = true
	// 32 swift NICs per MC hold a third of the clusters' 60, not all of them.
	o.Nodes = 2
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	s, err := open(ctx, o)
	require.NoError(t, err)
	defer s.close()
	require.NoError(t, s.createClusters(ctx))
	_, err = s.waitUntil(ctx, "settled", func(p progress) bool { return p.settled(o.Clusters) })
	require.NoError(t, err)

	invariants, err := s.checkInvariants(ctx, "")
	require.NoError(t, err)
	require.Len(t, invariants, 6)
	for _, inv := range invariants {
		assert.True(t, inv.Passed(), "%s: %v", inv.Name, inv.Violations)
	}
	require.NotEmpty(t, s.seeded)

	// Break them: the backend and the fleet must be stopped first, or they would repair
	// some and race the edits.
	for _, b := range s.backends {
		b.stop()
	}
	s.backends = nil
	s.region.stopWriters()
	resources := s.region.store.Container(api.ResourcesContainer)
	fleet := s.region.store.Container(api.FleetContainer)

	spcs, err := database.ListDecoded[api.ServiceProviderClusterProperties](ctx, resources, api.ServiceProviderClusterResourceType)
	require.NoError(t, err)
	schedulings, err := database.ListDecoded[api.ManagementClusterSchedulingProperties](ctx, fleet, api.ManagementClusterSchedulingResourceType)
	require.NoError(t, err)
	require.NotEmpty(t, spcs)
	require.NotEmpty(t, schedulings)

	// A status that differs from its spec, which was not the injected violation.
	moved := spcs[0].DeepCopy()
	rid, err := schedulings[0].ParsedResourceID()
	require.NoError(t, err)
	if strings.EqualFold(rid.Parent().String(), moved.Properties.IntendedManagementCluster()) {
		rid, err = schedulings[1].ParsedResourceID()
		require.NoError(t, err)
	}
	other := rid.Parent().String()
	moved.Properties.Status.ManagementClusterResourceID = other
	_, err = database.Replace(ctx, resources, moved)
	require.NoError(t, err)

	// Every cluster committed to one MC, far past its ceiling.
	for _, spc := range spcs[1:] {
		update := spc.DeepCopy()
		update.Properties.Spec.ManagementClusterResourceID = strings.ToLower(other)
		_, err := database.Replace(ctx, resources, update)
		require.NoError(t, err)
	}

	// A cluster without its SPC, so without a spec.
	last, err := resources.Get(ctx, spcs[len(spcs)-1].PartitionKey, spcs[len(spcs)-1].ID)
	require.NoError(t, err)
	require.NoError(t, resources.Delete(ctx, last.PartitionKey, last.ID, last.ETag))

	// A reservation left behind, and a seeded field lost with it.
	sched := schedulings[0].DeepCopy()
	sched.Properties.Status.PendingAssignedClusters = []string{"/subscriptions/x/resourcegroups/y/providers/microsoft.redhatopenshift/hcpopenshiftclusters/z"}
	sched.Properties.Status.Object = api.Object{}
	_, err = database.Replace(ctx, fleet, sched)
	require.NoError(t, err)

	// A panic in a log.
	require.NoError(t, os.WriteFile(filepath.Join(s.logDir, "backend-9.log"), []byte("panic: runtime error: index out of range\n"), 0o644))

	invariants, err = s.checkInvariants(ctx, "")
	require.NoError(t, err)
	failed := map[string]bool{}
	for _, inv := range invariants {
		failed[inv.Name] = !inv.Passed()
	}
	assert.Equal(t, map[string]bool{
		invariants[0].Name: true,
		invariants[1].Name: true,
		invariants[2].Name: true,
		invariants[3].Name: true,
		invariants[4].Name: true,
		invariants[5].Name: true,
	}, failed)

	report := &ChaosReport{Invariants: invariants, Injected: map[string]int{"emulator 412": 3}}
	var out bytes.Buffer
	report.Write(&out)
	assert.False(t, report.Passed())
	assert.Contains(t, out.String(), "FAIL  no reservation remains after settling")
	assert.Contains(t, out.String(), "FAIL  every cluster has exactly one spec")
	assert.Contains(t, out.String(), "has 0 specs")
}

// TestShortChaos is the short chaos profile: two backend replicas on the emulator, faults
// from the emulator and Cluster Service, kills, a pin violation; every invariant must hold.
func TestShortChaos(t *testing.T) {
	c := ShortChaosOptions()
	c.OutputDir = t.TempDir()
	if raceEnabled {
		c.GoBuildFlags = []string{"-race"}
	}
	var out bytes.Buffer
	c.Progress = &out
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	report, err := Chaos(ctx, c)
	require.NoError(t, err, out.String())
	report.Write(&out)
	assert.True(t, report.Passed(), out.String())
	assert.Equal(t, c.Kills, report.Kills)
	for _, kind := range []string{"emulator 412", "emulator 429", "emulator 503", "emulator slow", "Cluster Service 503"} {
		assert.Positive(t, report.Injected[kind], "%s fired", kind)
	}
	assert.Contains(t, report.Misplaced, "hcp-local-1")
}
