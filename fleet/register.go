package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/fleet/register"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/process"
	"github.com/hcpsched/hcpsched/internal/shard"
)

// DefaultRegisterTimeout bounds a whole register run.
const DefaultRegisterTimeout = 2 * time.Minute

type registerFlags struct {
	cosmos       cosmos.Config
	azureCloud   string
	opts         register.Options
	ensureLayout bool
	timeout      time.Duration
}

func parseRegisterFlags(args []string, stderr io.Writer, lookup process.LookupEnvFunc) (registerFlags, error) {
	f := registerFlags{azureCloud: DefaultAzureCloud, timeout: DefaultRegisterTimeout}
	fs := flag.NewFlagSet("fleet register", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cosmos.AddFlags(fs, &f.cosmos)
	fs.StringVar(&f.azureCloud, "azure-cloud", f.azureCloud, "Azure cloud: AzurePublic, AzureChina or AzureGovernment")
	o := &f.opts
	fs.StringVar(&o.Stamp, "stamp-identifier", "", "Stamp identifier, e.g. 1 (required)")
	fs.BoolVar(&o.AutoApprove, "auto-approve", false, "Record the stamp as approved (Approved=True, AutoApproved); Cluster Service registration waits for approval")
	fs.StringVar(&o.SchedulingPolicy, "scheduling-policy", "", "Management cluster scheduling policy: Schedulable or Unschedulable. Required for a new management cluster; left out, an existing one keeps its stored policy, so a re-run does not undo a cordon (hcpsched cordon)")
	fs.StringVar(&o.AKSResourceID, "aks-resource-id", "", "ARM resource ID of the management cluster's AKS cluster (required)")
	fs.StringVar(&o.PublicDNSZoneResourceID, "public-dns-zone-resource-id", "", "ARM resource ID of the public DNS zone (needed for the provision shard)")
	fs.StringVar(&o.HostedClustersSecretsKeyVaultURL, "hosted-clusters-secrets-keyvault-url", "", "Key Vault URL for hosted cluster secrets (needed for the provision shard)")
	fs.StringVar(&o.HostedClustersManagedIdentitiesKeyVaultURL, "hosted-clusters-managed-identities-keyvault-url", "", "Key Vault URL for hosted cluster managed identities (needed for the provision shard)")
	fs.StringVar(&o.HostedClustersSecretsKeyVaultManagedIdentityClientID, "hosted-clusters-secrets-keyvault-mi-client-id", "", "Client ID of the secrets Key Vault's managed identity (needed for the provision shard)")
	fs.StringVar(&o.MaestroConsumerName, "maestro-consumer-name", "", "Maestro consumer name (needed for the provision shard)")
	fs.StringVar(&o.MaestroRESTAPIURL, "maestro-rest-api-url", "", "Maestro REST API URL (needed for the provision shard)")
	fs.StringVar(&o.MaestroGRPCTarget, "maestro-grpc-target", "", "Maestro gRPC target host:port (needed for the provision shard)")
	fs.StringVar(&o.KubeApplierCosmosContainerName, "kube-applier-cosmos-container-name", "", "Cosmos container of the management cluster's kube-applier (required)")
	fs.BoolVar(&f.ensureLayout, "ensure-layout", false, "Create the database and the Resources, Fleet, kube-applier and shard-lease containers if missing (local stacks; production databases are provisioned by ARO-HCP)")
	fs.DurationVar(&f.timeout, "timeout", f.timeout, "Give up after this long")
	if err := process.Parse(fs, args, lookup); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return f, f.opts.Validate()
}

func runRegister(ctx context.Context, args []string, stderr io.Writer) error {
	f, err := parseRegisterFlags(args, stderr, nil)
	if err != nil {
		return err
	}
	logger := process.NewLogger(stderr, slog.LevelInfo)
	cloud, err := cloudConfiguration(f.azureCloud)
	if err != nil {
		return err
	}
	f.cosmos.ClientOptions.Cloud = cloud
	store, err := cosmos.Open(f.cosmos, prometheus.NewRegistry())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	if f.ensureLayout {
		// The shard-lease container too, at its default name: local stacks run the
		// controllers leaderless (--leader-elect=false), which shards by lease.
		if err := store.EnsureLayout(ctx, api.ResourcesContainer, api.FleetContainer, f.opts.KubeApplierCosmosContainerName, shard.DefaultLeaseContainer); err != nil {
			return fmt.Errorf("creating the database layout: %w", err)
		}
	}
	if err := register.Run(ctx, store, f.opts, time.Now()); err != nil {
		return err
	}
	logger.Info("registered", "stamp", f.opts.Stamp, "managementCluster", api.ManagementClusterResourceID(f.opts.Stamp).String())
	return nil
}
