// Command localregion runs a whole region on this machine (see package localregion):
// `make run` starts it. It runs until Ctrl-C, or with --exit-when-settled until every
// cluster is placed, created in Cluster Service and observed with no reservation left.
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

	"github.com/hcpsched/hcpsched/internal/dev/localregion"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "localregion:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (localregion.Options, error) {
	o := localregion.DefaultOptions()
	fs := flag.NewFlagSet("localregion", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage of localregion: a whole region on this machine. Stamp 1's management cluster has a tight\n"+
			"capacity and, with more than one, the last management cluster is Unschedulable.\n\n")
		// The defaults, not o: the flags parsed before --help may have changed it.
		fmt.Fprint(stderr, localregion.Sizes(localregion.DefaultOptions())+"\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.IntVar(&o.SingleReplicaEvery, "single-replica-every", o.SingleReplicaEvery, "Make every Nth cluster single-replica; 0 for none")
	fs.IntVar(&o.NonSwiftEvery, "non-swift-every", o.NonSwiftEvery, "Make every Nth cluster non-SWIFT (no vnet-integration subnet, no swift NIC); 0 for none")
	fs.DurationVar(&o.CreateInterval, "create-interval", o.CreateInterval, "Time between two cluster creations")
	fs.BoolVar(&o.ExitWhenSettled, "exit-when-settled", o.ExitWhenSettled, "Exit 0 once every cluster is placed, created in Cluster Service and observed and no reservation remains; non-zero after --timeout")
	fs.IntVar(&o.Nodes, "nodes", o.Nodes, "Worker nodes of every management cluster but the tight one")
	fs.IntVar(&o.MaxNodes, "max-nodes", o.MaxNodes, "Autoscaling maximum of the normal worker pools the fleet sees (the simulator does not scale; below --nodes means --nodes)")
	fs.IntVar(&o.TightNodes, "tight-nodes", o.TightNodes, "Worker nodes of the tight management cluster (stamp 1)")
	fs.DurationVar(&o.NotReadyDelay, "not-ready-delay", o.NotReadyDelay, "How long a new hosted control plane is reported not ready")
	fs.DurationVar(&o.ProgressEvery, "progress-every", o.ProgressEvery, "How often progress is printed")
	fs.StringVar(&o.DesiredVersion, "desired-version", o.DesiredVersion, "X.Y the version simulator (ARO-HCP's ControlPlaneDesiredVersion stand-in) chooses for clusters without customerProperties.version.id")
	fs.DurationVar(&o.DesiredVersionLatency, "desired-version-latency", o.DesiredVersionLatency, "How long the version simulator takes to choose each cluster's desired version")
	fs.StringVar(&o.RepoRoot, "repo-root", o.RepoRoot, "The hcpsched checkout (default: found from the working directory)")
	o.Region.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, o.Validate()
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	return localregion.Run(ctx, o, stdout)
}
