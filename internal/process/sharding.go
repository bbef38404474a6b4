package process

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/internal/shard"
)

// ShardingOptions configure leaderless mode (--leader-elect=false): instead of one
// replica running every controller, each replica leases a fair share of the key shards
// in a Cosmos container of hcpsched's own and works only their keys. Only the binaries
// use them; the shell just reports which mode it runs in.
type ShardingOptions struct {
	// Shards splits the keys; 0 turns sharding off, so that a leaderless process works
	// every key (one replica only, no lease container).
	Shards         int
	LeaseContainer string
	LeaseDuration  time.Duration
	RenewDeadline  time.Duration
	RetryPeriod    time.Duration
}

func defaultShardingOptions() ShardingOptions {
	return ShardingOptions{
		Shards:         shard.DefaultShards,
		LeaseContainer: shard.DefaultLeaseContainer,
		LeaseDuration:  shard.DefaultLeaseDuration,
		RenewDeadline:  shard.DefaultRenewDeadline,
		RetryPeriod:    shard.DefaultRetryPeriod,
	}
}

func (o *ShardingOptions) addFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.Shards, "shards", o.Shards, fmt.Sprintf("With --leader-elect=false, how many shards the keys split into; each replica leases a fair share and works only their keys. Every replica must agree; 0 works every key in each replica (one replica only). At most %d.", shard.MaxShards))
	fs.StringVar(&o.LeaseContainer, "shard-lease-container", o.LeaseContainer, "Cosmos container (hcpsched's own, partition key /partitionKey) holding the shard leases in leaderless mode.")
	fs.DurationVar(&o.LeaseDuration, "shard-lease-duration", o.LeaseDuration, "How long a replica waits, after it last saw a shard lease change, before taking it over.")
	fs.DurationVar(&o.RenewDeadline, "shard-renew-deadline", o.RenewDeadline, "How long a replica works a shard's keys after its last successful renewal; must be below --shard-lease-duration.")
	fs.DurationVar(&o.RetryPeriod, "shard-retry-period", o.RetryPeriod, "Interval between rounds that renew, balance and take over shard leases.")
}

func (o ShardingOptions) validate() []error {
	var errs []error
	if o.Shards < 0 || o.Shards > shard.MaxShards {
		errs = append(errs, fmt.Errorf("--shards must be between 0 and %d, got %d", shard.MaxShards, o.Shards))
	}
	if o.Shards == 0 {
		return errs
	}
	if o.LeaseContainer == "" {
		errs = append(errs, errors.New("--shard-lease-container must not be empty"))
	}
	if o.RetryPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--shard-retry-period must be positive, got %s", o.RetryPeriod))
	}
	if o.RenewDeadline <= o.RetryPeriod {
		errs = append(errs, fmt.Errorf("--shard-renew-deadline (%s) must be greater than --shard-retry-period (%s)", o.RenewDeadline, o.RetryPeriod))
	}
	if o.LeaseDuration <= o.RenewDeadline {
		errs = append(errs, fmt.Errorf("--shard-lease-duration (%s) must be greater than --shard-renew-deadline (%s)", o.LeaseDuration, o.RenewDeadline))
	}
	return errs
}

// Sharded reports whether this process splits keys with other replicas by lease:
// leaderless mode with shards.
func (o Options) Sharded() bool { return !o.LeaderElect && o.Sharding.Shards > 0 }

// ShardConfig is the lease manager's config for this process over the lease container.
// Its identity is the leader-election identity (the host name by default) plus a random
// suffix: replicas on one host, as in local runs, must differ, and a restarted process
// must not mistake its predecessor's leases for its own.
func (o Options) ShardConfig() shard.Config {
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix) // crypto/rand.Read does not fail
	return shard.Config{
		Group:         o.Component,
		Identity:      o.LeaderElectionIdentity + "-" + hex.EncodeToString(suffix),
		Shards:        o.Sharding.Shards,
		LeaseDuration: o.Sharding.LeaseDuration,
		RenewDeadline: o.Sharding.RenewDeadline,
		RetryPeriod:   o.Sharding.RetryPeriod,
	}
}

// NewShardManager builds the lease manager of leaderless mode from cfg, with the
// process's registerer and logger; a nil cfg (no sharding) is a nil manager.
func NewShardManager(cfg *shard.Config, reg prometheus.Registerer, logger *slog.Logger) (*shard.Manager, error) {
	if cfg == nil {
		return nil, nil
	}
	c := *cfg
	c.Registerer, c.Logger = reg, logger.With("component", "shards")
	m, err := shard.New(c)
	if err != nil {
		return nil, fmt.Errorf("sharding: %w", err)
	}
	return m, nil
}

// RunSharded runs a's controllers inside m's lease rounds and adds m's readiness check:
// a replica that cannot read the leases works no key. A nil m leaves a as it is.
func RunSharded(a App, m *shard.Manager) App {
	if m == nil {
		return a
	}
	run := a.RunControllers
	a.RunControllers = func(ctx context.Context) error { return m.RunAround(ctx, run) }
	a.ReadinessChecks = append(a.ReadinessChecks, ReadinessCheck{Name: shard.ReadinessCheck, Check: m.Check})
	return a
}
