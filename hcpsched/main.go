// Command hcpsched is the operator's view of a region: why a cluster is not placed,
// how full each management cluster (MC) is, which clusters are on an MC, where they
// would go if it were drained, and the one write an SRE needs, cordoning an MC.
//
// It reads the region exactly as the backend does: the same caches filled from the
// same Cosmos DB containers, the same placement snapshot, and the same --placement-*
// flags with the same defaults and HCPSCHED_* environment variables. Run inside the
// backend's pod it therefore decides with the backend's configuration:
//
//	kubectl -n <namespace> exec deploy/<release>-backend -c backend -- hcpsched capacity
//
// Every verb but cordon and uncordon is read-only. Exit codes: 0 done, 1 failed, 2 usage
// error, 3 unknown cluster or MC. See docs/operations.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, deps{})
	stop()
	os.Exit(code)
}

// verb is one subcommand. Each lives in its own file.
type verb struct {
	name string
	// usage is the verb's arguments, as in "explain CLUSTER".
	usage   string
	summary string
	// flags binds the verb's own flags, if any.
	flags func(fs *flag.FlagSet, o *verbOptions)
	// minArgs and maxArgs bound the positional arguments.
	minArgs, maxArgs int
	run              func(ctx context.Context, c *command, args []string) (result, error)
}

// verbs are the subcommands, in the order the help lists them.
func verbs() []verb {
	return []verb{
		explainVerb(),
		capacityVerb(),
		clustersVerb(),
		cordonVerb(),
		uncordonVerb(),
		drainPlanVerb(),
	}
}

// run is the whole life of the command; it returns the process's exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, d deps) int {
	c, v, rest, err := parseCommandLine(args, stderr, d)
	if err != nil {
		return report(stderr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.globals.timeout)
	defer cancel()
	res, err := v.run(ctx, c, rest)
	c.stop()
	if err != nil {
		return report(stderr, fmt.Errorf("%s: %w", v.name, err))
	}
	if err := render(stdout, c.globals.output, res); err != nil {
		return report(stderr, fmt.Errorf("%s: writing the output: %w", v.name, err))
	}
	return exitOK
}
