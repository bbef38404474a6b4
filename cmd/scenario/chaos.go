package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/hcpsched/hcpsched/internal/dev/scenario"
)

// errInvariantsFailed makes the command exit non-zero after the report said which.
var errInvariantsFailed = errors.New("an invariant failed")

func runChaos(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := scenario.DefaultChaosOptions()
	// The short profile is the starting point the other flags then change.
	if slices.ContainsFunc(args, func(a string) bool {
		return a == "-short" || a == "--short" || a == "--short=true" || a == "-short=true"
	}) {
		c = scenario.ShortChaosOptions()
	}
	c.Progress = stdout
	fs := flag.NewFlagSet("scenario chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addRunFlags(fs, &c.Options)
	fs.Bool("short", false, "The short profile make test runs: a smaller region, the same over-demand, a 20 s fault window with fewer kills")
	fs.IntVar(&c.Backends, "backends", c.Backends, "Backend replicas running at once, leader election off")
	fs.IntVar(&c.Workers, "workers", c.Workers, "Placement workers of each backend replica")
	fs.Float64Var(&c.Rate412, "rate-412", c.Rate412, "Share of conditional writes the emulator answers 412, as if another writer got there first")
	fs.Float64Var(&c.Rate429, "rate-429", c.Rate429, "Share of document requests the emulator throttles with 429")
	fs.Float64Var(&c.Rate503, "rate-503", c.Rate503, "Share of document requests the emulator answers 503")
	fs.Float64Var(&c.SlowRate, "slow-rate", c.SlowRate, "Share of document requests the emulator slows by --slow-latency")
	fs.DurationVar(&c.SlowLatency, "slow-latency", c.SlowLatency, "Latency added to the slowed requests")
	fs.Float64Var(&c.ClusterServiceFailureRate, "cluster-service-failure-rate", c.ClusterServiceFailureRate, "Share of Cluster Service cluster requests answered 503")
	fs.DurationVar(&c.FaultDuration, "fault-duration", c.FaultDuration, "Least time the faults stay on, from the creation of the clusters after cluster 1 (which lands alone first)")
	fs.IntVar(&c.Kills, "kills", c.Kills, "Times a backend replica is killed with SIGKILL and restarted, replicas in turn")
	fs.DurationVar(&c.KillEvery, "kill-every", c.KillEvery, "Time between kills")
	fs.Float64Var(&c.Headroom, "headroom", c.Headroom, "The MCs' ceilings add up to about this many times what the clusters cost (0 nodes only); below 1 demand exceeds capacity")
	fs.BoolVar(&c.Race, "race", c.Race, "Build the backend with the race detector; a race report in any process's output fails the run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	report, err := scenario.Chaos(ctx, c)
	// A run that failed part-way still says what its samples saw.
	if report != nil {
		report.Write(stdout)
	}
	if err != nil {
		return err
	}
	if !report.Passed() {
		return errInvariantsFailed
	}
	fmt.Fprintln(stdout, "\nevery invariant held")
	return nil
}
