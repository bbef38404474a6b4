package process

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

// EnvPrefix starts the environment variable of every flag: --foo-bar is HCPSCHED_FOO_BAR.
const EnvPrefix = "HCPSCHED"

// EnvName is the environment variable that sets the flag called name.
func EnvName(name string) string {
	upper := strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
	return EnvPrefix + "_" + upper
}

// LookupEnvFunc reads one environment variable; os.LookupEnv is the real one.
type LookupEnvFunc func(name string) (string, bool)

// Parse parses args into fs, then fills every flag not given on the command line from
// its environment variable. The command line wins so that a one-off override in a pod
// spec's args does not need the env block edited too. A nil lookup uses os.LookupEnv.
func Parse(fs *flag.FlagSet, args []string, lookup LookupEnvFunc) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	return ApplyEnv(fs, lookup)
}

// ApplyEnv sets every flag of fs that was not set on the command line from its
// environment variable. Empty variables count as unset: manifests often render an
// optional value as "". Values that do not parse are all reported, each naming its
// variable, so a broken deployment is fixed in one round.
func ApplyEnv(fs *flag.FlagSet, lookup LookupEnvFunc) error {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	onCommandLine := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { onCommandLine[f.Name] = true })

	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if onCommandLine[f.Name] {
			return
		}
		env := EnvName(f.Name)
		value, ok := lookup(env)
		if !ok || value == "" {
			return
		}
		if err := fs.Set(f.Name, value); err != nil {
			// The value is not echoed: the variable may hold a secret.
			errs = append(errs, fmt.Errorf("environment variable %s (--%s): invalid value: %w", env, f.Name, err))
		}
	})
	return errors.Join(errs...)
}

// FlagDoc describes one flag for the configuration reference.
type FlagDoc struct {
	// Flag is the command-line form, e.g. "--metrics-address".
	Flag string
	// Env is the environment variable, e.g. "HCPSCHED_METRICS_ADDRESS".
	Env string
	// Type is a short type word ("string", "duration", "bool", "value", ...).
	Type    string
	Default string
	Usage   string
}

// Describe lists every flag of fs in name order with its environment variable, default
// and usage; docs/configuration.md is generated from it.
func Describe(fs *flag.FlagSet) []FlagDoc {
	var docs []FlagDoc
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		if typ == "" {
			typ = "bool"
		}
		docs = append(docs, FlagDoc{
			Flag:    "--" + f.Name,
			Env:     EnvName(f.Name),
			Type:    typ,
			Default: f.DefValue,
			Usage:   usage,
		})
	})
	return docs
}
