// Command mc-simulator stands in for the capacity agents and kube-applier of every
// registered management cluster (MC) in a local stack: every --interval it writes each
// MC's capacity ReadDesire status from the hosted control planes the fake Cluster Service
// has on the MC's provision shard. See package mcsim.
//
// Every flag can also be set through its environment variable, HCPSCHED_<FLAG_NAME>.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/dev/mcsim"
	"github.com/hcpsched/hcpsched/internal/process"
)

const component = "mc-simulator"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "mc-simulator:", err)
		os.Exit(1)
	}
}

type options struct {
	shell         process.Options
	cosmos        cosmos.Config
	csURL         string
	interval      time.Duration
	notReadyDelay time.Duration
	profile       mcsim.Profile
	stampNodes    map[string]int
}

func parseFlags(args []string, stderr io.Writer, lookup process.LookupEnvFunc) (options, error) {
	o := options{
		shell:         process.NewOptions(component),
		interval:      mcsim.DefaultInterval,
		notReadyDelay: mcsim.DefaultNotReadyDelay,
		profile:       mcsim.DefaultProfile(),
	}
	// A local tool: no Lease to take.
	o.shell.LeaderElect = false
	var stampNodes string
	var realistic bool
	fs := flag.NewFlagSet(component, flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.shell.AddFlags(fs)
	cosmos.AddFlags(fs, &o.cosmos)
	fs.StringVar(&o.csURL, "clusters-service-url", "", "Base URL of the fake Cluster Service (required)")
	fs.DurationVar(&o.interval, "interval", o.interval, "How often every MC's capacity report is written")
	fs.BoolVar(&realistic, "realistic", false, fmt.Sprintf("Write reports every %s, as the real agent does, unless --interval is given", mcsim.RealisticInterval))
	fs.DurationVar(&o.notReadyDelay, "not-ready-delay", o.notReadyDelay, "How long a new hosted control plane is reported not ready")
	fs.StringVar(&o.profile.VMSize, "vm-size", o.profile.VMSize, "VM size of every MC's worker nodes")
	fs.IntVar(&o.profile.Nodes, "nodes", o.profile.Nodes, "Ready worker nodes per MC")
	fs.StringVar(&stampNodes, "stamp-nodes", "", "Per-stamp node counts overriding --nodes, as stamp=nodes,stamp=nodes")
	if err := process.Parse(fs, args, lookup); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if realistic && !isSet(fs, "interval") {
		o.interval = mcsim.RealisticInterval
	}
	var errs []error
	if o.cosmos.Endpoint == "" {
		errs = append(errs, errors.New("--cosmos-endpoint is required"))
	}
	if o.csURL == "" {
		errs = append(errs, errors.New("--clusters-service-url is required"))
	}
	if o.interval <= 0 {
		errs = append(errs, fmt.Errorf("--interval must be positive, got %s", o.interval))
	}
	if o.profile.Nodes < 0 {
		errs = append(errs, fmt.Errorf("--nodes must not be negative, got %d", o.profile.Nodes))
	}
	var err error
	if o.stampNodes, err = mcsim.ParseStampNodes(stampNodes); err != nil {
		errs = append(errs, fmt.Errorf("--stamp-nodes: %w", err))
	}
	return o, errors.Join(errs...)
}

// isSet reports whether a flag was given on the command line or through the environment.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	o, err := parseFlags(args, stderr, nil)
	if err != nil {
		return err
	}
	logger := process.ConfigureLogging(stderr, o.shell.LogLevel)
	reg := prometheus.NewRegistry()
	store, err := cosmos.Open(o.cosmos, reg)
	if err != nil {
		return err
	}
	sim := mcsim.New(mcsim.Config{
		Store: store, ClusterServiceURL: o.csURL, NotReadyDelay: o.notReadyDelay, Logger: logger,
		ProfileFor: mcsim.ProfilesByStamp(o.profile, o.stampNodes),
	})
	return process.Run(ctx, o.shell, reg, logger, process.App{
		RunControllers: func(ctx context.Context) error { return sim.Run(ctx, o.interval) },
	})
}
