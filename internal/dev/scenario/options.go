// Package scenario runs the whole hcpsched pipeline at a chosen size and measures it: the
// fleet controllers, the management cluster simulator and the fake Cluster Service of the
// local region run in this process, over either the memory store or the Cosmos emulator,
// and the backend runs either in-process (memory store) or as the real binary (emulator).
// A burst of clusters, or a steady rate of them, is created the way ARO-HCP's frontend
// creates them, and the run ends when every cluster is placed, created in Cluster Service
// and observed, with no reservation left.
//
// Bench runs each store with 20 placement workers and then 1 and reports throughput,
// latency and cost; Chaos adds faults and checks the invariants of docs/architecture.md.
package scenario

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/dev/localregion"
)

// Stores a scenario runs on.
const (
	StoreMemory   = "memory"
	StoreEmulator = "emulator"
)

// Defaults, defined once; the command's flags take them from here.
const (
	DefaultManagementClusters = 50
	DefaultClusters           = 2000
	// DefaultEmulatorLatency brings the emulator's loopback round trip (about 0.4 ms) to
	// an in-region Cosmos DB's (about 5-10 ms), so that worker counts compare as they
	// would in production.
	DefaultEmulatorLatency = 5 * time.Millisecond
	// DefaultMemoryLatency is the memory store's modelled round trip of a scenario run:
	// none, so that `make run` and the tests answer at once.
	DefaultMemoryLatency = 0
	// DefaultBenchMemoryLatency is the memory store's modelled round trip in the bench: an
	// in-region Cosmos DB's, so that the 20-to-1-worker ratio shows how much of the
	// latency concurrency hides once the CPU is not the limit.
	DefaultBenchMemoryLatency = 8 * time.Millisecond
	// DefaultPollInterval is the change-feed poll of the backend, the fleet and the
	// runner, the local region's.
	DefaultPollInterval   = 250 * time.Millisecond
	DefaultReportInterval = time.Second
	DefaultTimeout        = 10 * time.Minute
	DefaultProgressEvery  = 2 * time.Second
	// DefaultCreators write a burst's clusters in parallel, as many frontends would.
	DefaultCreators = 32
	// DefaultSingleReplicaEvery makes every 8th cluster single-replica, as `make run` does.
	DefaultSingleReplicaEvery = 8
	// DefaultNonSwiftEvery makes every 5th cluster non-SWIFT, as `make run` does.
	DefaultNonSwiftEvery = localregion.DefaultNonSwiftEvery
	// DefaultHeadroom sizes each MC so that the clusters fill at most half of its
	// swift NICs: the run measures placement, not waiting for capacity.
	DefaultHeadroom = 2.0
)

// Options size and pace one run.
type Options struct {
	// Store is StoreMemory or StoreEmulator.
	Store string
	// Region sizes the run; its OutputDir receives bin/ and scenario/<label>/ logs.
	localregion.Region
	// Rate creates clusters at this many per second; 0 creates them all at once.
	Rate float64
	// Workers is the backend's placement workers.
	Workers int
	// Backends is how many backend replicas run at once, with leader election off;
	// more than one needs StoreEmulator.
	Backends int
	// Nodes per MC; 0 sizes the MCs for the clusters with DefaultHeadroom.
	Nodes           int
	EmulatorLatency time.Duration
	// MemoryLatency is the memory store's modelled per-request latency
	// (memory.WithLatency); 0 for none.
	MemoryLatency      time.Duration
	PollInterval       time.Duration
	SingleReplicaEvery int
	// NonSwiftEvery makes every Nth cluster non-SWIFT (no vnet-integration subnet); 0
	// for none. With SingleReplicaEvery it chooses each cluster's kind (frontend.Mix).
	NonSwiftEvery int
	ProgressEvery time.Duration
	// Label names the run's log folder; empty derives it from the store and workers.
	Label string
	// RepoRoot holds go.mod and emulator/; empty finds it from the working directory.
	RepoRoot string
	// GoBuildFlags are added to the backend binary's `go build`.
	GoBuildFlags []string
	// Progress receives a line every ProgressEvery; nil is silent.
	Progress io.Writer
	// SeedExtraFields adds fields hcpsched does not know to every cluster, management
	// cluster and scheduling document, for the no-field-lost invariant.
	SeedExtraFields bool
	// PlacementRequeueAfter is the backend binary's wait before it evaluates again a
	// cluster that fits nowhere; 0 is a second.
	PlacementRequeueAfter time.Duration
}

// DefaultOptions is one bench run on the memory store with 20 workers.
func DefaultOptions() Options {
	return Options{
		Store: StoreMemory,
		Region: localregion.Region{
			ManagementClusters: DefaultManagementClusters, Clusters: DefaultClusters,
			ReportInterval: DefaultReportInterval, Timeout: DefaultTimeout,
		},
		Workers: 20, Backends: 1, EmulatorLatency: DefaultEmulatorLatency, MemoryLatency: DefaultMemoryLatency, PollInterval: DefaultPollInterval,
		SingleReplicaEvery: DefaultSingleReplicaEvery, NonSwiftEvery: DefaultNonSwiftEvery, ProgressEvery: DefaultProgressEvery,
	}
}

// Validate names every unusable option.
func (o Options) Validate() error {
	var errs []error
	if o.Store != StoreMemory && o.Store != StoreEmulator {
		errs = append(errs, fmt.Errorf("store must be %s or %s, got %q", StoreMemory, StoreEmulator, o.Store))
	}
	if o.ManagementClusters < 1 {
		errs = append(errs, fmt.Errorf("--management-clusters must be at least 1, got %d", o.ManagementClusters))
	}
	if o.Clusters < 1 {
		errs = append(errs, fmt.Errorf("--clusters must be at least 1, got %d", o.Clusters))
	}
	if o.Rate < 0 {
		errs = append(errs, fmt.Errorf("--rate must not be negative, got %v", o.Rate))
	}
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("placement workers must be at least 1, got %d", o.Workers))
	}
	if o.Backends < 1 {
		errs = append(errs, fmt.Errorf("backends must be at least 1, got %d", o.Backends))
	}
	if o.Backends > 1 && o.Store != StoreEmulator {
		errs = append(errs, errors.New("several backend replicas need the emulator: the memory store lives in one process"))
	}
	if o.Nodes < 0 || o.EmulatorLatency < 0 || o.MemoryLatency < 0 || o.SingleReplicaEvery < 0 || o.NonSwiftEvery < 0 {
		errs = append(errs, errors.New("--nodes, --emulator-latency, --memory-latency and the single-replica and non-SWIFT intervals must not be negative"))
	}
	for name, d := range map[string]time.Duration{"--poll-interval": o.PollInterval, "--report-interval": o.ReportInterval, "--timeout": o.Timeout, "progress interval": o.ProgressEvery} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", name, d))
		}
	}
	return errors.Join(errs...)
}

// nodes is o.Nodes, or enough nodes for every MC to hold its share of the clusters
// within DefaultHeadroom, counting each as highly available.
func (o Options) nodes(haSwiftNICs, nodeSwiftNICs int) int {
	if o.Nodes > 0 {
		return o.Nodes
	}
	perMC := (o.Clusters + o.ManagementClusters - 1) / o.ManagementClusters
	need := float64(perMC*haSwiftNICs) * DefaultHeadroom
	return max(int(need)/nodeSwiftNICs+1, 1)
}

// mix is the kinds of the clusters the run creates, by their index.
func (o Options) mix() frontend.Mix {
	return frontend.Mix{SingleReplicaEvery: o.SingleReplicaEvery, NonSwiftEvery: o.NonSwiftEvery}
}

func (o Options) label() string {
	if o.Label != "" {
		return o.Label
	}
	return fmt.Sprintf("%s-workers-%d", o.Store, o.Workers)
}
