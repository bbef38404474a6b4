package controllers

import (
	"errors"
	"flag"
	"fmt"
)

// Config holds each controller's settings by controller name; AddFlags binds it.
type Config map[string]*Settings

// AddFlags registers, for every definition, --<prefix>-workers and
// --<prefix>-resync-period, plus --<prefix>-requeue-after for a controller that has an
// expected wait, defaulting to the definition's defaults. Placement's definitions get
// their flags the same way once they are listed.
func AddFlags(fs *flag.FlagSet, defs []Definition) Config {
	cfg := Config{}
	for _, def := range defs {
		s := def.Defaults
		cfg[def.Name] = &s
		fs.IntVar(&s.Workers, def.FlagPrefix+"-workers", s.Workers,
			fmt.Sprintf("Clusters the %s controller reconciles in parallel.", def.Name))
		fs.DurationVar(&s.ResyncPeriod, def.FlagPrefix+"-resync-period", s.ResyncPeriod,
			fmt.Sprintf("How often the %s controller re-enqueues every cached cluster (jittered up by 10%%); 0 disables it.", def.Name))
		if def.Defaults.RequeueAfter > 0 {
			fs.DurationVar(&s.RequeueAfter, def.FlagPrefix+"-requeue-after", s.RequeueAfter,
				fmt.Sprintf("How long the %s controller waits before looking again at a cluster it is waiting on.", def.Name))
		}
	}
	return cfg
}

// Validate reports every invalid setting at once, naming its flag.
func (c Config) Validate(defs []Definition) error {
	var errs []error
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
	}
	return errors.Join(errs...)
}
