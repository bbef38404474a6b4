// Command backend runs hcpsched's cluster creation flow against ARO-HCP's Cosmos DB
// database and Cluster Service: every new cluster gets its ServiceProviderCluster and a
// pre-assigned Cluster Service ID, is placed on a management cluster with capacity, is
// created in Cluster Service pinned to that management cluster's provision shard, and
// has where Cluster Service put it recorded.
//
// Every flag can also be set through its environment variable, HCPSCHED_<FLAG_NAME>
// (--cosmos-endpoint is HCPSCHED_COSMOS_ENDPOINT); the command line wins.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/backend/app"
	"github.com/hcpsched/hcpsched/backend/controllers"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
	"github.com/hcpsched/hcpsched/internal/process"
	"github.com/hcpsched/hcpsched/internal/shard"
)

// Component names the binary: its Lease, user agent and logs.
const Component = "backend"

// Defaults of the backend's own flags, defined once.
const (
	// DefaultCosmosEnsureLayout leaves the database alone: production databases are
	// provisioned by ARO-HCP, only local stacks and tests create them.
	DefaultCosmosEnsureLayout = false
	// DefaultLayoutTimeout bounds creating the database and containers at start-up.
	DefaultLayoutTimeout = time.Minute
)

func main() {
	process.TuneGC()
	if err := run(context.Background(), os.Args[1:], os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(os.Stderr, "backend: %v\n", err)
		}
		os.Exit(1)
	}
}

// config is everything the flags fill.
type config struct {
	process            process.Options
	cosmos             cosmos.Config
	cosmosEnsureLayout bool
	clusterService     clusterservice.Config
	informers          informers.Options
	placement          placement.Config
	controllers        controllers.Config
}

// newFlagSet binds a fresh config to a FlagSet, every default taken from the Default
// constants of the packages that own the settings.
func newFlagSet(stderr io.Writer) (*flag.FlagSet, *config) {
	cfg := &config{process: process.NewOptions(Component)}
	fs := flag.NewFlagSet(Component, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.process.AddFlags(fs)
	cosmos.AddFlags(fs, &cfg.cosmos)
	fs.BoolVar(&cfg.cosmosEnsureLayout, "cosmos-ensure-layout", DefaultCosmosEnsureLayout,
		"Create the database and its Resources and Fleet containers if they are missing (local stacks and tests; production databases are provisioned by ARO-HCP).")
	clusterservice.AddFlags(fs, &cfg.clusterService)
	informers.AddFlags(fs, &cfg.informers)
	placement.AddFlags(fs, &cfg.placement)
	cfg.controllers = controllers.AddFlags(fs, controllers.Definitions())
	return fs, cfg
}

func (c *config) validate() error {
	var errs []error
	if c.cosmos.Endpoint == "" {
		errs = append(errs, errors.New("--cosmos-endpoint is required"))
	}
	if c.cosmos.Database == "" {
		errs = append(errs, errors.New("--cosmos-database must not be empty"))
	}
	if c.clusterService.URL == "" {
		errs = append(errs, errors.New("--clusters-service-url is required"))
	}
	errs = append(errs, c.cosmos.Validate(), c.clusterService.Validate())
	errs = append(errs, c.placement.Validate())
	errs = append(errs, c.controllers.Validate(controllers.Definitions()))
	return errors.Join(errs...)
}

// clusterServiceConfig is the Cluster Service connection the controllers use: the
// flags, plus the backend's user agent, logger and metrics registry (request metrics
// under clusterservice.MetricsSubsystem, the fleet's names too).
func (c *config) clusterServiceConfig(logger *slog.Logger, reg prometheus.Registerer) clusterservice.Config {
	return c.clusterService.Of(Component, logger.With("client", "clusterservice"), reg)
}

// layoutContainers are the containers --cosmos-ensure-layout creates: ARO-HCP's two,
// and hcpsched's shard-lease container in leaderless mode.
func (c *config) layoutContainers() []string {
	out := []string{api.ResourcesContainer, api.FleetContainer}
	if c.process.Sharded() {
		out = append(out, c.process.Sharding.LeaseContainer)
	}
	return out
}

// sharding is the lease manager's config in leaderless mode, nil otherwise.
func (c *config) sharding(store database.Store) *shard.Config {
	if !c.process.Sharded() {
		return nil
	}
	sc := c.process.ShardConfig()
	sc.Container = store.Container(c.process.Sharding.LeaseContainer)
	return &sc
}

// run is the whole life of the binary; main only adds the exit code.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs, cfg := newFlagSet(stderr)
	if err := process.Parse(fs, args, nil); err != nil {
		return err
	}
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("invalid flags: %w", err)
	}
	logger := process.ConfigureLogging(stderr, cfg.process.LogLevel)
	reg := prometheus.NewRegistry()

	store, err := cosmos.Open(cfg.cosmos, reg)
	if err != nil {
		return fmt.Errorf("opening Cosmos DB: %w", err)
	}
	if cfg.cosmosEnsureLayout {
		layoutCtx, cancel := context.WithTimeout(ctx, DefaultLayoutTimeout)
		err := store.EnsureLayout(layoutCtx, cfg.layoutContainers()...)
		cancel()
		if err != nil {
			return fmt.Errorf("creating the Cosmos DB layout: %w", err)
		}
	}

	cs, err := clusterservice.New(ctx, cfg.clusterServiceConfig(logger, reg))
	if err != nil {
		return err
	}
	defer func() { _ = cs.Close() }()

	backend, err := app.New(app.Config{
		Store:          store,
		ClusterService: cs,
		Registerer:     reg,
		Logger:         logger,
		Informers:      cfg.informers,
		Placement:      cfg.placement,
		Controllers:    cfg.controllers,
		Sharding:       cfg.sharding(store),
	})
	if err != nil {
		return err
	}
	return process.Run(ctx, cfg.process, reg, logger, backend)
}
