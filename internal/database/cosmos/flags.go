package cosmos

import (
	"context"
	"flag"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/internal/durationflag"
)

// DefaultDatabase is the database name ARO-HCP's components use.
const DefaultDatabase = "arohcp"

// AddFlags registers the Cosmos connection flags on fs, filling cfg. The key is meant
// for the emulator only; production authenticates with azidentity's default chain.
func AddFlags(fs *flag.FlagSet, cfg *Config) {
	fs.StringVar(&cfg.Endpoint, "cosmos-endpoint", cfg.Endpoint, "Cosmos DB account endpoint, e.g. https://<account>.documents.azure.com:443/")
	if cfg.Database == "" {
		cfg.Database = DefaultDatabase
	}
	fs.StringVar(&cfg.Database, "cosmos-database", cfg.Database, "Cosmos DB database name")
	fs.StringVar(&cfg.Key, "cosmos-key", cfg.Key, "Cosmos DB account key; leave empty to use the default Azure credential chain (workload identity). For emulators only")
	durationflag.Var(fs, &cfg.TryTimeout, tryTimeoutFlag, DefaultTryTimeout,
		"Deadline of each HTTP attempt of a Cosmos DB call; the SDK tries a timed-out read again, a timed-out write is left to the caller's retry")
}

const tryTimeoutFlag = "cosmos-try-timeout"

// Validate reports settings the flags cannot take, naming the flag.
func (c Config) Validate() error { return durationflag.Positive(tryTimeoutFlag, c.TryTimeout) }

// Open connects to the configured database with request metrics on reg. It does no I/O.
func Open(cfg Config, reg prometheus.Registerer) (*Store, error) {
	metrics, err := NewMetricsPolicy(reg)
	if err != nil {
		return nil, fmt.Errorf("cosmos: metrics: %w", err)
	}
	cfg.ClientOptions.PerRetryPolicies = append([]policy.Policy{metrics}, cfg.ClientOptions.PerRetryPolicies...)
	client, err := NewClient(cfg)
	if err != nil {
		return nil, err
	}
	return New(client, cfg.Database), nil
}

// EnsureLayout creates the database and containers if they are missing; local stacks
// and tests use it, production databases are provisioned by ARO-HCP.
func (s *Store) EnsureLayout(ctx context.Context, containers ...string) error {
	if err := s.EnsureDatabase(ctx); err != nil {
		return err
	}
	for _, c := range containers {
		if err := s.EnsureContainer(ctx, c); err != nil {
			return err
		}
	}
	return nil
}
