package controllers

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/hcpsched/hcpsched/internal/controller"
)

// Config holds each controller's settings by controller name; AddFlags binds it.
type Config map[string]*controller.Settings

// Settings are the settings controller.Build takes; a controller without an entry gets
// its defaults.
func (c Config) Settings() map[string]controller.Settings {
	out := make(map[string]controller.Settings, len(c))
	for name, s := range c {
		if s != nil {
			out[name] = *s
		}
	}
	return out
}

// AddFlags registers, for every definition, --<prefix>-workers and
// --<prefix>-resync-period, plus --<prefix>-requeue-after for a controller that has an
// expected wait and --<prefix>-event-delay for one that gathers events, defaulting to
// the definition's defaults. One --reconcile-timeout sets the deadline of every
// controller's reconciles.
func AddFlags(fs *flag.FlagSet, defs []controller.Definition[Env]) Config {
	cfg := Config{}
	fs.Var(&reconcileTimeout{value: controller.DefaultReconcileTimeout, cfg: cfg}, "reconcile-timeout",
		// The back-quoted word names the type in -help and docs/configuration.md, which
		// cannot tell it from a custom flag.Value otherwise.
		"How long one reconcile of any controller may take (a `duration`); a reconcile that reaches it is cut short and retried with backoff.")
	for _, def := range defs {
		s := def.Defaults
		cfg[def.Name] = &s
		fs.IntVar(&s.Workers, def.FlagPrefix+"-workers", s.Workers,
			fmt.Sprintf("Clusters the %s controller reconciles in parallel.%s", def.Name, workersWhy[def.Name]))
		fs.DurationVar(&s.ResyncPeriod, def.FlagPrefix+"-resync-period", s.ResyncPeriod,
			fmt.Sprintf("How often the %s controller re-enqueues every cached cluster (jittered up by 10%%); 0 disables it.", def.Name))
		if def.Defaults.RequeueAfter > 0 {
			fs.DurationVar(&s.RequeueAfter, def.FlagPrefix+"-requeue-after", s.RequeueAfter,
				fmt.Sprintf("How long the %s controller waits before looking again at a cluster it is waiting on.", def.Name))
		}
		if def.Defaults.EventDelay > 0 {
			fs.DurationVar(&s.EventDelay, def.FlagPrefix+"-event-delay", s.EventDelay,
				fmt.Sprintf("How long the %s controller gathers the events of one key before it reconciles the key once for all of them; 0 reconciles on every event.", def.Name))
		}
	}
	return cfg
}

// workersWhy explains, in a worker flag's help, a default sized by measurement.
var workersWhy = func() map[string]string {
	const why = " Every new cluster passes through it, so it has as many workers as placement: with 5, its queue rather than placement set the pace of a burst (docs/cluster-service-create.md#workers)."
	out := map[string]string{}
	for _, name := range []string{CreateServiceProviderClusterName, PendingClusterServiceIDAssignName, ClusterServiceCreateName, ManagementClusterPlacementSyncName} {
		out[name] = why
	}
	return out
}()

// reconcileTimeout is --reconcile-timeout: one value, written into every controller's
// Settings. A deadline is a property of the process's remote calls, not of a controller,
// so one flag rather than one per controller.
type reconcileTimeout struct {
	value time.Duration
	cfg   Config
}

func (r *reconcileTimeout) String() string {
	if r == nil {
		return ""
	}
	return r.value.String()
}

func (r *reconcileTimeout) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return err
	}
	r.value = d
	for _, s := range r.cfg {
		s.ReconcileTimeout = d
	}
	return nil
}

// Validate reports every invalid setting at once, naming its flag.
func (c Config) Validate(defs []controller.Definition[Env]) error {
	var errs []error
	for _, def := range defs {
		if s := c[def.Name]; s != nil && s.ReconcileTimeout <= 0 {
			errs = append(errs, fmt.Errorf("--reconcile-timeout must be positive, got %s", s.ReconcileTimeout))
			break
		}
	}
	for _, def := range defs {
		s := c[def.Name]
		if s == nil {
			continue
		}
		if s.Workers < 1 {
			errs = append(errs, fmt.Errorf("--%s-workers must be at least 1, got %d", def.FlagPrefix, s.Workers))
		}
		if s.ResyncPeriod < 0 {
			errs = append(errs, fmt.Errorf("--%s-resync-period must not be negative, got %s", def.FlagPrefix, s.ResyncPeriod))
		}
		if def.Defaults.RequeueAfter > 0 && s.RequeueAfter <= 0 {
			errs = append(errs, fmt.Errorf("--%s-requeue-after must be positive, got %s", def.FlagPrefix, s.RequeueAfter))
		}
		if s.EventDelay < 0 {
			errs = append(errs, fmt.Errorf("--%s-event-delay must not be negative, got %s", def.FlagPrefix, s.EventDelay))
		}
	}
	return errors.Join(errs...)
}
