// Command scenario runs the whole hcpsched pipeline at a chosen size and measures it.
//
//	scenario bench [flags]   each store with 20 placement workers, then 1: throughput,
//	                         latency, Cosmos cost and peak RSS; writes summary.json and chart.svg
//	scenario chaos [flags]   the same pipeline under faults, then an invariant check that
//	                         prints PASS or FAIL for each invariant and exits non-zero on a FAIL
//
// `make bench` and `make chaos` run it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"

	"github.com/hcpsched/hcpsched/internal/dev/scenario"
	"github.com/hcpsched/hcpsched/internal/process"
)

const usage = `usage: scenario <command> [flags]

commands:
  bench   run each store with 20 placement workers, then 1, and report throughput, latency and cost
  chaos   run the pipeline under injected faults and check its invariants

Run "scenario <command> -h" for the command's flags.
`

func main() {
	// The runner hosts the fleet's controllers (and, on the memory store, the backend's)
	// in its own process: it runs them with the garbage collector the binaries set.
	process.TuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(os.Stderr, "scenario: %v\n", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("a command is required")
	}
	switch args[0] {
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "chaos":
		return runChaos(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// Profiles of `scenario bench --profile`.
const (
	profileDefault = "default"
	// profileLarge is a region four times the default's MCs with five times its clusters.
	profileLarge             = "large"
	largeManagementClusters  = 200
	largeClusters            = 10000
	defaultBenchOutputFolder = "_output/bench"
)

// addRunFlags binds the flags every command shares: the region's, as `make run` has
// them, and how the runner paces it.
func addRunFlags(fs *flag.FlagSet, o *scenario.Options) {
	o.Region.AddFlags(fs)
	fs.Float64Var(&o.Rate, "rate", o.Rate, "Clusters created per second; 0 creates them all at once (a burst)")
	fs.IntVar(&o.Nodes, "nodes", o.Nodes, "Worker nodes per management cluster; 0 sizes them so the clusters fill at most half of the swift NICs")
	fs.DurationVar(&o.EmulatorLatency, "emulator-latency", o.EmulatorLatency, "Latency the Cosmos emulator adds to every request, to resemble an in-region Cosmos DB")
	fs.DurationVar(&o.MemoryLatency, "memory-latency", o.MemoryLatency, "Latency the memory store models for every request (a wait that holds no lock); 0 for none")
	fs.DurationVar(&o.PollInterval, "poll-interval", o.PollInterval, "Change-feed poll interval of the backend, the fleet and the runner")
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o := scenario.DefaultOptions()
	o.Progress = stdout
	// The bench models an in-region round trip on the memory store too, so that its
	// 20-to-1-worker ratio measures concurrency, not this machine's CPU.
	o.MemoryLatency = scenario.DefaultBenchMemoryLatency
	fs := flag.NewFlagSet("scenario bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addRunFlags(fs, &o)
	stores := fs.String("stores", scenario.StoreMemory+","+scenario.StoreEmulator, "Stores to run on, in order: memory, emulator")
	workers := fs.String("workers", joinInts(scenario.DefaultBenchWorkers), "Placement worker counts each store runs with, in order")
	profile := fs.String("profile", profileDefault, fmt.Sprintf("%s: --management-clusters and --clusters as given; %s: %d MCs and %d clusters", profileDefault, profileLarge, largeManagementClusters, largeClusters))
	outDir := fs.String("bench-output", defaultBenchOutputFolder, "Folder of summary.json and chart.svg")
	fs.IntVar(&o.Backends, "backends", o.Backends, "Backend replicas, leaderless, splitting the keys by shard lease (emulator store only); 1 runs one replica that owns every key")
	cpuProfile := fs.String("cpu-profile", "", "Write a CPU profile of the runner's process (on the memory store: the whole region) to this file, for go tool pprof")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch *profile {
	case profileDefault:
	case profileLarge:
		o.ManagementClusters, o.Clusters = largeManagementClusters, largeClusters
	default:
		return fmt.Errorf("--profile must be %s or %s, got %q", profileDefault, profileLarge, *profile)
	}
	storeList := strings.Split(*stores, ",")
	workerList, err := parseInts(*workers)
	if err != nil {
		return fmt.Errorf("--workers: %w", err)
	}
	for _, s := range storeList {
		probe := o
		probe.Store = s
		if err := probe.Validate(); err != nil {
			return err
		}
	}
	_, err = scenario.Bench(ctx, o, storeList, workerList, *outDir, stdout)
	return err
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// startCPUProfile profiles this process into path until the returned function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
