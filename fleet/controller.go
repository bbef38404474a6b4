package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/fleet/agentpools"
	"github.com/hcpsched/hcpsched/fleet/app"
	"github.com/hcpsched/hcpsched/fleet/capacity"
	"github.com/hcpsched/hcpsched/fleet/controllers"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/process"
	"github.com/hcpsched/hcpsched/internal/shard"
)

// Defaults of the controller command's own flags.
const (
	// DefaultAgentPoolSource reads agent pools from ARM.
	DefaultAgentPoolSource = agentPoolSourceARM
	// DefaultAzureCloud is the cloud of ARM and Cosmos authentication.
	DefaultAzureCloud = "AzurePublic"
	// component names the process in its Lease, user agent and metrics.
	component = "fleet"
)

const (
	agentPoolSourceARM    = "arm"
	agentPoolSourceStatic = "static"
)

type controllerFlags struct {
	shell                process.Options
	cosmos               cosmos.Config
	informers            informers.Options
	clusterService       clusterservice.Config
	region               string
	workers              int
	resyncPeriod         time.Duration
	reconcileTimeout     time.Duration
	capacityPollInterval time.Duration
	scaleCeilingInterval time.Duration
	agentPoolSource      string
	agentPoolFile        string
	vmSizesFile          string
	azureCloud           string
}

func parseControllerFlags(args []string, stderr io.Writer, lookup process.LookupEnvFunc) (controllerFlags, error) {
	f := controllerFlags{
		shell:                process.NewOptions(component),
		workers:              controllers.DefaultWorkers,
		resyncPeriod:         controllers.DefaultResyncPeriod,
		reconcileTimeout:     controller.DefaultReconcileTimeout,
		capacityPollInterval: controllers.DefaultCapacityPollInterval,
		scaleCeilingInterval: controllers.DefaultScaleCeilingInterval,
		agentPoolSource:      DefaultAgentPoolSource,
		azureCloud:           DefaultAzureCloud,
	}
	fs := flag.NewFlagSet("fleet controller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.shell.AddFlags(fs)
	cosmos.AddFlags(fs, &f.cosmos)
	informers.AddFlags(fs, &f.informers)
	clusterservice.AddFlags(fs, &f.clusterService)
	fs.StringVar(&f.region, "region", "", "Azure region the management clusters are in; Cluster Service provision shards are created in it (required)")
	fs.IntVar(&f.workers, "workers", f.workers, "Workers per controller")
	fs.DurationVar(&f.resyncPeriod, "resync-period", f.resyncPeriod, "How often the registration, lifecycle and ReadDesire controllers revisit every management cluster")
	fs.DurationVar(&f.reconcileTimeout, "reconcile-timeout", f.reconcileTimeout, "How long one reconcile of any controller may take; a reconcile that reaches it is cut short and retried with backoff")
	fs.DurationVar(&f.capacityPollInterval, "capacity-poll-interval", f.capacityPollInterval, "How often each management cluster's capacity ReadDesire is point-read and mirrored")
	fs.DurationVar(&f.scaleCeilingInterval, "scale-ceiling-interval", f.scaleCeilingInterval, "How often each management cluster's scale ceiling is recomputed from its agent pools")
	fs.StringVar(&f.agentPoolSource, "agent-pool-source", f.agentPoolSource, "Where agent pools come from: arm (the Azure SDK with the default credential chain) or static (--agent-pool-file)")
	fs.StringVar(&f.agentPoolFile, "agent-pool-file", "", "JSON file of agent pools per AKS resource ID (or \"*\"), in ARM's REST shape; for --agent-pool-source=static")
	fs.StringVar(&f.vmSizesFile, "vm-sizes-file", "", "JSON file of per-node resources by VM size, laid over the built-in table, for pools without ready nodes in the capacity report")
	fs.StringVar(&f.azureCloud, "azure-cloud", f.azureCloud, "Azure cloud: AzurePublic, AzureChina or AzureGovernment")
	if err := process.Parse(fs, args, lookup); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return f, f.validate()
}

func (f controllerFlags) validate() error {
	var errs []error
	if f.cosmos.Endpoint == "" {
		errs = append(errs, errors.New("--cosmos-endpoint is required"))
	}
	if f.clusterService.URL == "" {
		errs = append(errs, errors.New("--clusters-service-url is required"))
	}
	if f.region == "" {
		errs = append(errs, errors.New("--region is required"))
	}
	if f.workers < 1 {
		errs = append(errs, fmt.Errorf("--workers must be at least 1, got %d", f.workers))
	}
	errs = append(errs, f.cosmos.Validate(), f.clusterService.Validate())
	for name, d := range map[string]time.Duration{
		"--resync-period": f.resyncPeriod, "--capacity-poll-interval": f.capacityPollInterval, "--scale-ceiling-interval": f.scaleCeilingInterval,
		"--reconcile-timeout": f.reconcileTimeout,
	} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", name, d))
		}
	}
	switch f.agentPoolSource {
	case agentPoolSourceARM:
	case agentPoolSourceStatic:
		if f.agentPoolFile == "" {
			errs = append(errs, errors.New("--agent-pool-file is required with --agent-pool-source=static"))
		}
	default:
		errs = append(errs, fmt.Errorf("--agent-pool-source must be %s or %s, got %q", agentPoolSourceARM, agentPoolSourceStatic, f.agentPoolSource))
	}
	if _, err := cloudConfiguration(f.azureCloud); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func cloudConfiguration(name string) (cloud.Configuration, error) {
	switch name {
	case "AzurePublic":
		return cloud.AzurePublic, nil
	case "AzureChina":
		return cloud.AzureChina, nil
	case "AzureGovernment":
		return cloud.AzureGovernment, nil
	}
	return cloud.Configuration{}, fmt.Errorf("--azure-cloud must be AzurePublic, AzureChina or AzureGovernment, got %q", name)
}

func runController(ctx context.Context, args []string, stderr io.Writer) error {
	f, err := parseControllerFlags(args, stderr, nil)
	if err != nil {
		return err
	}
	logger := process.ConfigureLogging(stderr, f.shell.LogLevel)
	reg := prometheus.NewRegistry()
	cloudConfig, _ := cloudConfiguration(f.azureCloud) // validated

	f.cosmos.ClientOptions.Cloud = cloudConfig
	store, err := cosmos.Open(f.cosmos, reg)
	if err != nil {
		return err
	}
	pools, err := agentPoolSource(f, cloudConfig)
	if err != nil {
		return err
	}
	sizes, err := capacity.LoadVMSizes(f.vmSizesFile)
	if err != nil {
		return err
	}
	cs, err := clusterservice.New(ctx, f.clusterServiceConfig(logger, reg))
	if err != nil {
		return err
	}
	defer cs.Close()

	fleet, err := app.New(app.Config{
		Store:                store,
		ClusterService:       cs,
		AgentPools:           pools,
		VMSizes:              sizes,
		Region:               f.region,
		Workers:              f.workers,
		ResyncPeriod:         f.resyncPeriod,
		ReconcileTimeout:     f.reconcileTimeout,
		CapacityPollInterval: f.capacityPollInterval,
		ScaleCeilingInterval: f.scaleCeilingInterval,
		Registerer:           reg,
		Logger:               logger,
		Informers:            f.informers,
		Sharding:             shardConfig(f.shell, store),
	})
	if err != nil {
		return err
	}
	return process.Run(ctx, f.shell, reg, logger, fleet)
}

// clusterServiceConfig is the Cluster Service connection the controllers use: the
// flags, plus the fleet's user agent, logger and metrics registry (request metrics
// under clusterservice.MetricsSubsystem, the backend's names too).
func (f controllerFlags) clusterServiceConfig(logger *slog.Logger, reg prometheus.Registerer) clusterservice.Config {
	return f.clusterService.Of(component, logger, reg)
}

func agentPoolSource(f controllerFlags, cloudConfig cloud.Configuration) (agentpools.Source, error) {
	if f.agentPoolSource == agentPoolSourceStatic {
		return agentpools.LoadStatic(f.agentPoolFile)
	}
	clientOptions := azcore.ClientOptions{Cloud: cloudConfig}
	credential, err := azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{ClientOptions: clientOptions})
	if err != nil {
		return nil, fmt.Errorf("azure credential for ARM: %w", err)
	}
	return agentpools.NewARM(credential, &arm.ClientOptions{ClientOptions: clientOptions}), nil
}

// shardConfig is the lease manager's config in leaderless mode, nil otherwise; `fleet
// register --ensure-layout` creates its container for local stacks.
func shardConfig(shell process.Options, store database.Store) *shard.Config {
	if !shell.Sharded() {
		return nil
	}
	sc := shell.ShardConfig()
	sc.Container = store.Container(shell.Sharding.LeaseContainer)
	return &sc
}
