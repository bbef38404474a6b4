package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/placement"
	"github.com/hcpsched/hcpsched/internal/process"
)

// DefaultTimeout bounds a whole command: loading the region and any write.
const DefaultTimeout = time.Minute

// globals are the flags every verb takes, before or after the verb's name.
type globals struct {
	cosmos    cosmos.Config
	placement placement.Config
	output    string
	timeout   time.Duration
}

// verbOptions are the verbs' own flags; a verb binds the ones it takes.
type verbOptions struct {
	managementCluster string
	reason            string
}

// command is one parsed invocation.
type command struct {
	globals globals
	opts    verbOptions
	deps    deps
	stderr  io.Writer
	// stops end what the verb started (the region's caches), before the command returns.
	stops []func()
}

// stop runs the stops, so that nothing the verb started reads, logs or writes after the
// command has returned its exit code.
func (c *command) stop() {
	for _, s := range c.stops {
		s()
	}
	c.stops = nil
}

// parseCommandLine finds the verb, then parses the global flags and the verb's own
// wherever they stand, so that "hcpsched explain ID -o json" works as an SRE types it.
// Every global flag also comes from its HCPSCHED_* variable, as in the backend.
func parseCommandLine(args []string, stderr io.Writer, d deps) (*command, verb, []string, error) {
	c := &command{deps: d.withDefaults(), stderr: stderr}
	fs := flag.NewFlagSet("hcpsched", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addGlobalFlags(fs, &c.globals)

	at := verbIndex(fs, args)
	if at < 0 {
		if helpAsked(args) {
			printUsage(stderr, fs)
			return nil, verb{}, nil, flag.ErrHelp
		}
		return nil, verb{}, nil, usagef("no verb given; one of %s", strings.Join(verbNames(), ", "))
	}
	v, ok := findVerb(args[at])
	if !ok {
		return nil, verb{}, nil, usagef("unknown verb %q; one of %s", args[at], strings.Join(verbNames(), ", "))
	}
	if v.flags != nil {
		v.flags(fs, &c.opts)
	}
	rest := append(append([]string{}, args[:at]...), args[at+1:]...)
	positional, err := parseInterleaved(fs, rest)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printVerbUsage(stderr, v, fs)
		return nil, verb{}, nil, flag.ErrHelp
	case err != nil:
		return nil, verb{}, nil, usageError{err}
	}
	if err := process.ApplyEnv(fs, c.deps.lookupEnv); err != nil {
		return nil, verb{}, nil, usageError{err}
	}
	if len(positional) < v.minArgs || len(positional) > v.maxArgs {
		return nil, verb{}, nil, usagef("usage: hcpsched %s", v.usage)
	}
	if err := c.globals.validate(); err != nil {
		return nil, verb{}, nil, usageError{err}
	}
	return c, v, positional, nil
}

func addGlobalFlags(fs *flag.FlagSet, g *globals) {
	cosmos.AddFlags(fs, &g.cosmos)
	placement.AddFlags(fs, &g.placement)
	g.output = outputTable
	fs.StringVar(&g.output, "output", g.output, "Output format: "+strings.Join(outputFormats, ", "))
	fs.StringVar(&g.output, "o", g.output, "Shorthand for --output")
	fs.DurationVar(&g.timeout, "timeout", DefaultTimeout, "Give up after this long (loading the region and any write)")
}

func (g globals) validate() error {
	var errs []error
	if g.cosmos.Endpoint == "" {
		errs = append(errs, errors.New("--cosmos-endpoint is required (or HCPSCHED_COSMOS_ENDPOINT)"))
	}
	if !validOutput(g.output) {
		errs = append(errs, fmt.Errorf("--output must be one of %s, got %q", strings.Join(outputFormats, ", "), g.output))
	}
	if g.timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout must be positive, got %s", g.timeout))
	}
	errs = append(errs, g.cosmos.Validate(), g.placement.Validate())
	return errors.Join(errs...)
}

// verbIndex is the position of the first argument that is neither a flag nor a
// flag's value, or -1.
func verbIndex(fs *flag.FlagSet, args []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return i + 1
			}
			return -1
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return i
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if f := fs.Lookup(name); f != nil && !hasValue && !isBoolFlag(f) {
			i++ // the flag's value
		}
	}
	return -1
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func helpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// parseInterleaved parses flags anywhere among the positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

func findVerb(name string) (verb, bool) {
	for _, v := range verbs() {
		if v.name == name {
			return v, true
		}
	}
	return verb{}, false
}

func verbNames() []string {
	var names []string
	for _, v := range verbs() {
		names = append(names, v.name)
	}
	return names
}

func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "Usage: hcpsched [flags] VERB [verb flags] [ARG]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Verbs:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, v := range verbs() {
		fmt.Fprintf(tw, "  %s\t%s\n", v.usage, v.summary)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Flags (each also HCPSCHED_<FLAG_NAME>; the command line wins):")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit codes: 0 done, 1 failed, 2 usage error, 3 unknown cluster or management cluster.")
}

func printVerbUsage(w io.Writer, v verb, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: hcpsched %s\n\n%s\n\nFlags:\n", v.usage, v.summary)
	fs.SetOutput(w)
	fs.PrintDefaults()
}
