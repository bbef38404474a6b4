package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/placement"
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
	o.MemoryLatency = 8 * time.Millisecond
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
		assert.Positive(t, r.ByOperation["patch"], "owned fields are written as patches")
		assert.Positive(t, r.PeakRSSBytes)
		assert.Zero(t, r.RequestCharge, "the memory store charges nothing")

		// The cost figures: every cluster's requests credited to the controllers that made
		// them, its Cluster Service create, the placement queue's wait, the process's CPU.
		c := r.Cost
		assert.Positive(t, c.BackendCPUSeconds)
		assert.Positive(t, c.BackendAllocBytes)
		assert.Equal(t, scopeWholeProcess, c.BackendCPUScope)
		assert.Equal(t, float64(cachedPerCluster*o.Clusters), c.CachedDocuments)
		assert.Equal(t, float64(o.Clusters), c.Requests["CreateServiceProviderCluster"]["create"], "one SPC create per cluster, by its controller")
		assert.GreaterOrEqual(t, c.Requests["Placement"]["patch"], float64(2*o.Clusters), "the reservation and the spec, as patches")
		assert.Positive(t, c.Requests[database.CallerNone]["change_feed"], "the pumps' reads are no controller's")
		assert.Equal(t, float64(o.Clusters), c.ClusterServiceCalls["POST /clusters"], "one create per cluster")
		assert.Contains(t, c.QueueWait, "Placement")
		assert.Equal(t, 8*time.Millisecond, r.AddedLatency, "the memory store's modelled latency")
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
	assert.Contains(t, out.String(), "Cost per cluster", "the cost tables follow the table")
	cost, ok := summary[StoreMemory]["workers_4"].(map[string]any)["cost"].(map[string]any)
	require.True(t, ok, "summary.json carries each run's cost")
	assert.Contains(t, cost, "cosmos_requests_per_cluster_by_controller")
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

	// What the clusters cost, counted here by ARO-HCP's rule: every NonSwiftEvery-th
	// has no VNet integration and takes no NIC, every other SingleReplicaEvery-th 1, the
	// rest 3.
	cost := func(c ChaosOptions) float64 {
		var nics int
		for n := 1; n <= c.Clusters; n++ {
			switch {
			case n%c.NonSwiftEvery == 0:
			case n%c.SingleReplicaEvery == 0:
				nics++
			default:
				nics += 3
			}
		}
		return float64(nics)
	}
	for name, c := range map[string]ChaosOptions{"default": DefaultChaosOptions(), "short": ShortChaosOptions()} {
		t.Run(name, func(t *testing.T) {
			ceilings := float64(c.sizedNodes() * 16 * c.ManagementClusters)
			assert.LessOrEqual(t, ceilings, c.Headroom*cost(c), "demand exceeds capacity")
			// Nodes come whole: rounding down loses less than one node per MC.
			assert.Greater(t, ceilings+float64(16*c.ManagementClusters), c.Headroom*cost(c), "yet no more than a node per MC short of the headroom asked")
		})
	}
	c := DefaultChaosOptions()
	c.Headroom = 1.25
	assert.GreaterOrEqual(t, float64(c.sizedNodes()*16*c.ManagementClusters), 1.25*cost(c), "room to spare when asked")
}

// TestEndStateChecksCatchWhatTheyClaim settles a seeded region, finds every end-state
// check holding, then breaks each one in the store or the logs and expects it to fail.
func TestEndStateChecksCatchWhatTheyClaim(t *testing.T) {
	o := small(t)
	o.SeedExtraFields = true
	// 32 swift NICs per MC hold a third of the clusters' 60, not all of them.
	o.Nodes = 2
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	s, err := open(ctx, o)
	require.NoError(t, err)
	defer s.close()
	require.NoError(t, s.createClusters(ctx, 1))
	_, err = s.waitUntil(ctx, "settled", func(p progress) bool { return p.settled(o.Clusters) })
	require.NoError(t, err)
	resources := s.region.store.Container(api.ResourcesContainer)
	spcSeeded, err := seedStored[api.ServiceProviderClusterProperties](ctx, resources, api.ServiceProviderClusterResourceType, spcSeeds)
	require.NoError(t, err)
	s.addSeeded(spcSeeded)

	cfg := placement.DefaultConfig()
	in := endInputs{created: slices.Collect(maps.Keys(s.obs.createdAt())), kind: s.kindOf}
	end, err := s.checkEndState(ctx, in, cfg)
	require.NoError(t, err)
	require.Len(t, end.invariants, 7)
	for _, inv := range end.invariants {
		assert.True(t, inv.Passed(), "%s: %v", inv.Name, inv.Violations)
	}
	assert.Len(t, end.placed, o.Clusters)
	watch := newCeilingWatch(cfg)
	watch.observe(end.view.snapshot(0, in.kind))
	assert.True(t, watch.invariant().Passed(), watch.invariant().Violations)
	require.NotEmpty(t, s.seeded)

	// Break them: the backend and the fleet must be stopped first, or they would repair
	// some and race the edits.
	for _, b := range s.backends {
		b.stop()
	}
	s.backends = nil
	s.region.stopWriters()
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
		update.Properties.Status.ManagementClusterResourceID = ""
		_, err := database.Replace(ctx, resources, update)
		require.NoError(t, err)
	}

	// A cluster without its SPC: no spec, yet in Cluster Service, and no reason to wait.
	last, err := resources.Get(ctx, spcs[len(spcs)-1].PartitionKey, spcs[len(spcs)-1].ID)
	require.NoError(t, err)
	require.NoError(t, resources.Delete(ctx, last.PartitionKey, last.ID, last.ETag))

	// A reservation left behind, and seeded fields lost with it: the status's own and
	// those of its condition elements.
	sched := schedulings[0].DeepCopy()
	sched.Properties.Status.PendingAssignedClusters = []string{"/subscriptions/x/resourcegroups/y/providers/microsoft.redhatopenshift/hcpopenshiftclusters/z"}
	sched.Properties.Status.Object = api.Object{}
	sched.Properties.Status.Conditions = sched.Properties.Status.Conditions[:1]
	sched.Properties.Status.Conditions[0].Object = api.Object{}
	_, err = database.Replace(ctx, fleet, sched)
	require.NoError(t, err)

	// A panic in one log, a race report in another.
	require.NoError(t, os.WriteFile(filepath.Join(s.logDir, "backend-9.log"), []byte("panic: runtime error: index out of range\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(s.logDir, "backend-8.log"), []byte("==================\nWARNING: DATA RACE\nWrite at 0x00c000123 by goroutine 7:\n"), 0o644))

	end, err = s.checkEndState(ctx, in, cfg)
	require.NoError(t, err)
	for _, inv := range end.invariants {
		assert.False(t, inv.Passed(), "%s should fail", inv.Name)
	}
	watch.observe(end.view.snapshot(time.Second, in.kind))
	ceilings := watch.invariant()
	require.False(t, ceilings.Passed())
	assert.Contains(t, ceilings.Violations[1], "sample 2 at 1.0s: "+other)

	report := &ChaosReport{Invariants: append([]Invariant{ceilings}, end.invariants...), Injected: map[string]int{"emulator 412": 3}}
	var out bytes.Buffer
	report.Write(&out)
	assert.False(t, report.Passed())
	for _, want := range []string{
		"FAIL  no management cluster is committed past its scale ceiling at any of 2 samples",
		"FAIL  no reservation remains after settling",
		"FAIL  every placed cluster is in Cluster Service once",
		"has no spec but is 1 times in Cluster Service",
		"FAIL  no data race reported by any process",
		"backend-8.log:2: WARNING: DATA RACE",
		"conditions[type=" + foreignConditionType + "]." + extraField,
		"samples taken: 0",
	} {
		assert.Contains(t, out.String(), want)
	}
}

// A chaos run that did nothing fails, whatever its invariants say: no samples, no
// clusters, no POSTs, no faults, no kills, no disturbance.
func TestAnEmptyChaosRunFails(t *testing.T) {
	c := DefaultChaosOptions()
	s := &session{o: c.Options, obs: &observer{created: map[string]time.Time{}}, kinds: map[string]frontend.Kind{}}
	r := newChaosRun(s, c)
	r.view = newFeedView(memory.New(), time.Second, slog.New(slog.DiscardHandler))
	inv := r.exercised(&ChaosReport{Injected: map[string]int{}}, countPosts(nil), endState{})
	require.False(t, inv.Passed())
	for _, want := range []string{
		"samples taken from the change feeds: 0 (0 pages)",
		"clusters created: 0 of 600",
		"clusters placed: 0",
		"create POSTs in Cluster Service's request log: 0, for 0 clusters created",
		"backend kills: 0 of 8",
		"emulator 412 faults hit: 0",
		"Cluster Service 503 faults hit: 0",
		"cordons 0, uncordons 0, shrinks 0 (at least 2, 2 and 1)",
		"seeded condition element fields: 0",
		"the backend was built with the race detector",
	} {
		assert.Contains(t, inv.Violations, want)
	}
	assert.False(t, (&ChaosReport{}).Passed(), "a report that checked nothing fails")
}

// TestShortChaos is the short chaos profile: two backend replicas on the emulator, more
// demand than capacity, faults from the emulator and Cluster Service for 20 s, kills, a
// pin violation, a placed-then-failed cluster, cordons and a shrink; every invariant
// must hold at every sample.
func TestShortChaos(t *testing.T) {
	c := ShortChaosOptions()
	c.OutputDir = t.TempDir()
	var out bytes.Buffer
	c.Progress = &out
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	report, err := Chaos(ctx, c)
	if report != nil {
		report.Write(&out)
	}
	require.NoError(t, err, out.String())
	assert.True(t, report.Passed(), out.String())
	assert.Equal(t, c.Kills, report.Kills)
	for _, kind := range []string{"emulator 412", "emulator 429", "emulator 503", "emulator slow", "Cluster Service 503"} {
		assert.Positive(t, report.Injected[kind], "%s fired", kind)
	}
	assert.Positive(t, report.Samples)
	assert.Positive(t, report.Waiting, "demand exceeds capacity")
	assert.Len(t, report.Fullest, c.ManagementClusters)
	assert.Contains(t, report.Misplaced, "hcp-local-1")
	assert.Contains(t, out.String(), "summary\n  samples taken: ")
}
