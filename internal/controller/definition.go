package controller

import (
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// Settings tune one controller; each binary's flags fill them.
type Settings struct {
	Workers      int
	ResyncPeriod time.Duration
	// RequeueAfter is how long an expected wait lasts before the controller looks
	// again. Only controllers with such a wait have a default for it.
	RequeueAfter time.Duration
	// ReconcileTimeout bounds each reconcile (see Options); 0 is
	// DefaultReconcileTimeout.
	ReconcileTimeout time.Duration
	// EventDelay gathers the events of a key (see Options). Only controllers whose
	// reconcile reads many documents have a default for it.
	EventDelay time.Duration
}

// Trigger is a cache whose events enqueue the keys KeyFor maps them to.
type Trigger struct {
	Informer Informer
	KeyFor   KeyFunc
}

// Definition names one controller and says how to build it from an environment E, the
// binary's bag of caches, writers and clients. New picks from E only what its reconciler
// uses, so the reconciler's struct lists its reads and writes.
type Definition[E any] struct {
	// Name labels the controller's metrics and logs.
	Name string
	// FlagPrefix starts the controller's own flags (--<prefix>-workers and so on), for
	// a binary that tunes each controller apart; empty when it has none.
	FlagPrefix string
	Defaults   Settings
	// Triggers are the caches whose events enqueue keys, and how.
	Triggers func(E) []Trigger
	// New builds the reconcile function.
	New func(E, Settings) (ReconcileFunc, error)
	// Settled, when set, builds the controller's event filter (Options.Settled): the
	// gate its reconcile checks first, read from the same caches. It is built after New,
	// from the same environment, so it may read state New's reconciler keeps.
	Settled func(E) func(key string) bool
}

// Runtime is what every controller of a process shares: metrics, logger, and the retry
// rate limiter tests replace.
type Runtime struct {
	Metrics *Metrics
	Logger  *slog.Logger
	// RateLimiter, when set, builds each controller's retry rate limiter (tests
	// shorten the back-off); nil keeps the framework's default.
	RateLimiter func() workqueue.TypedRateLimiter[string]
	// Ownership, when set, limits every controller to the keys this replica owns.
	Ownership Ownership
}

// Build builds each definition with its settings from cfg (a definition without an entry
// gets its defaults), registering its triggers' event handlers: build before the
// informers start.
func Build[E any](env E, rt Runtime, defs []Definition[E], cfg map[string]Settings) ([]*Controller, error) {
	out := make([]*Controller, 0, len(defs))
	for _, def := range defs {
		s, ok := cfg[def.Name]
		if !ok {
			s = def.Defaults
		}
		c, err := buildOne(env, rt, def, s)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// buildOne builds one definition with the given settings.
func buildOne[E any](env E, rt Runtime, def Definition[E], s Settings) (*Controller, error) {
	reconcile, err := def.New(env, s)
	if err != nil {
		return nil, fmt.Errorf("building controller %s: %w", def.Name, err)
	}
	opts := Options{
		Name:             def.Name,
		Workers:          s.Workers,
		ResyncPeriod:     s.ResyncPeriod,
		ReconcileTimeout: s.ReconcileTimeout,
		EventDelay:       s.EventDelay,
		Metrics:          rt.Metrics,
		Logger:           rt.Logger,
		Ownership:        rt.Ownership,
	}
	if def.Settled != nil {
		opts.Settled = def.Settled(env)
	}
	if rt.RateLimiter != nil {
		opts.RateLimiter = rt.RateLimiter()
	}
	c, err := New(opts, reconcile)
	if err != nil {
		return nil, fmt.Errorf("building controller %s: %w", def.Name, err)
	}
	if def.Triggers != nil {
		for _, t := range def.Triggers(env) {
			if err := c.Watch(t.Informer, t.KeyFor); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}
