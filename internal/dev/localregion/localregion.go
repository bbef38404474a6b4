// Package localregion runs a whole ARO-HCP region on one machine, each part a separate
// process on 127.0.0.1: the Cosmos emulator, the fake Cluster Service, the management
// cluster simulator, `fleet controller` and `backend`; the stand-in for ARO-HCP's
// ControlPlaneDesiredVersion controller (package versionsim) runs in this process with
// a Cosmos client of its own. It registers the management clusters, creates
// subscriptions and clusters over time the way ARO-HCP's frontend does, and shows them
// being placed, pinned in Cluster Service and observed. `make run` runs it.
package localregion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/fleet/register"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/dev/emulator"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/dev/mcsim"
	"github.com/hcpsched/hcpsched/internal/dev/versionsim"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// Defaults of the region, defined once; the command's flags read them from here.
const (
	DefaultManagementClusters = 5
	DefaultClusters           = 40
	// DefaultSingleReplicaEvery makes every 8th cluster single-replica.
	DefaultSingleReplicaEvery = 8
	// DefaultNonSwiftEvery makes every 5th cluster non-SWIFT (no vnet-integration
	// subnet, no swift NIC on its MC): most clusters stay SWIFT, so NICs remain the
	// scarce resource, and every run has clusters that cost none. With the single-replica
	// choice, independent of it, 40 clusters are 28 SWIFT HA, 4 SWIFT single-replica,
	// 7 non-SWIFT HA and 1 non-SWIFT single-replica (see frontend.Mix).
	DefaultNonSwiftEvery  = 5
	DefaultCreateInterval = 250 * time.Millisecond
	// DefaultTimeout bounds a run with ExitWhenSettled.
	DefaultTimeout = 3 * time.Minute
	// DefaultTightNodes is the node count of stamp 1, the MC with a tight capacity.
	DefaultTightNodes      = 1
	DefaultReportInterval  = time.Second
	DefaultNotReadyDelay   = 3 * time.Second
	DefaultProgressEvery   = 2 * time.Second
	DefaultRegion          = "eastus"
	DefaultAgentPoolVMSize = mcsim.DefaultVMSize
	// DefaultMaxNodes is every normal worker pool's autoscaling maximum. The simulator
	// does not add nodes, so the default keeps the pools at their ceiling: the scale
	// ceiling then equals what the MCs report and the tight MC takes its share.
	DefaultMaxNodes = 0
	// DefaultDesiredVersion is the X.Y the version simulator gives clusters that name
	// none, as the frontend's clusters do.
	DefaultDesiredVersion = versionsim.DefaultMinor
	// DefaultDesiredVersionLatency is how long the version simulator takes per cluster,
	// standing in for ARO-HCP's query to the update service; the backend's Cluster
	// Service create waits for it.
	DefaultDesiredVersionLatency = 500 * time.Millisecond
	// changefeedPollInterval is how often every process of the region polls the change
	// feeds.
	changefeedPollInterval = 250 * time.Millisecond
)

// Options sizes and paces the region.
type Options struct {
	Region
	SingleReplicaEvery int
	NonSwiftEvery      int
	CreateInterval     time.Duration
	ExitWhenSettled    bool
	Nodes              int
	TightNodes         int
	MaxNodes           int
	NotReadyDelay      time.Duration
	ProgressEvery      time.Duration
	// DesiredVersion and DesiredVersionLatency configure the version simulator.
	DesiredVersion        string
	DesiredVersionLatency time.Duration
	// RepoRoot holds go.mod and emulator/; empty finds it from the working directory.
	RepoRoot string
	// GoBuildFlags are added to the `go build` of the binaries; a test run with -race
	// passes -race so that the build reuses the dependencies its own build compiled.
	GoBuildFlags []string
}

// DefaultOptions is `make run` without RUN_FLAGS.
func DefaultOptions() Options {
	return Options{
		Region: Region{
			ManagementClusters: DefaultManagementClusters, Clusters: DefaultClusters,
			ReportInterval: DefaultReportInterval, Timeout: DefaultTimeout,
		},
		SingleReplicaEvery: DefaultSingleReplicaEvery, NonSwiftEvery: DefaultNonSwiftEvery, CreateInterval: DefaultCreateInterval,
		Nodes: mcsim.DefaultNodes, TightNodes: DefaultTightNodes, MaxNodes: DefaultMaxNodes,
		NotReadyDelay: DefaultNotReadyDelay, ProgressEvery: DefaultProgressEvery,
		DesiredVersion: DefaultDesiredVersion, DesiredVersionLatency: DefaultDesiredVersionLatency,
	}
}

// Mix is the kinds of the clusters the region creates, by their index.
func (o Options) Mix() frontend.Mix {
	return frontend.Mix{SingleReplicaEvery: o.SingleReplicaEvery, NonSwiftEvery: o.NonSwiftEvery}
}

// Validate reports unusable options, naming the flags.
func (o Options) Validate() error {
	var errs []error
	if o.ManagementClusters < 1 {
		errs = append(errs, fmt.Errorf("--management-clusters must be at least 1, got %d", o.ManagementClusters))
	}
	if o.Clusters < 0 {
		errs = append(errs, fmt.Errorf("--clusters must not be negative, got %d", o.Clusters))
	}
	if o.Nodes < 1 || o.TightNodes < 1 {
		errs = append(errs, errors.New("--nodes and --tight-nodes must be at least 1"))
	}
	if _, err := versionsim.MinorOf(o.DesiredVersion); err != nil {
		errs = append(errs, fmt.Errorf("--desired-version: %w", err))
	}
	if o.DesiredVersionLatency < 0 {
		errs = append(errs, fmt.Errorf("--desired-version-latency must not be negative, got %s", o.DesiredVersionLatency))
	}
	for name, d := range map[string]time.Duration{
		"--timeout": o.Timeout, "--report-interval": o.ReportInterval, "--progress-every": o.ProgressEvery,
	} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", name, d))
		}
	}
	return errors.Join(errs...)
}

// Run starts the region and drives it until ctx ends or, with ExitWhenSettled, until every
// cluster has settled. Every process it started is stopped before it returns.
func Run(ctx context.Context, o Options, out io.Writer) error {
	if err := o.Validate(); err != nil {
		return err
	}
	root, err := RepoRoot(o.RepoRoot)
	if err != nil {
		return err
	}
	outDir := o.OutputDir
	if outDir == "" {
		outDir = filepath.Join(root, "_output")
	}
	binDir := filepath.Join(outDir, "bin")
	logDir := filepath.Join(outDir, "localregion")
	// Logs of an earlier run would be mistaken for this one's.
	if err := os.RemoveAll(logDir); err != nil {
		return err
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	log := &stepLog{out: out}
	log.printf("building into %s (the first build compiles every dependency and takes a few minutes)\n", binDir)
	targets := toBuild(root)
	for _, pkg := range targets {
		if err := build(ctx, log, root, binDir, o.GoBuildFlags, pkg); err != nil {
			return err
		}
	}
	bin := func(name string) string { return filepath.Join(binDir, name) }

	sup := newSupervisor(logDir)
	defer sup.stopAll()

	emuLog, err := os.Create(filepath.Join(logDir, "emulator.log"))
	if err != nil {
		return err
	}
	defer emuLog.Close()
	var emu *emulator.Emulator
	if err := log.step("starting the Cosmos emulator", "started the Cosmos emulator", func() (string, error) {
		var err error
		emu, err = emulator.Start(ctx, emulator.Options{Dir: filepath.Join(root, "emulator"), Log: emuLog})
		if err != nil {
			return "", err
		}
		return emu.Endpoint, nil
	}); err != nil {
		return err
	}
	defer func() { _ = emu.Stop() }()

	var csURL string
	if err := log.step("starting the fake Cluster Service", "started the fake Cluster Service", func() (string, error) {
		_, csOut, err := sup.start("fake-cluster-service", bin("fake-cluster-service"), true, "--listen", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		line, err := readFirstLine(csOut, 30*time.Second)
		if err != nil {
			return "", fmt.Errorf("fake Cluster Service: %w", err)
		}
		var announced struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal([]byte(line), &announced); err != nil || announced.URL == "" {
			return "", fmt.Errorf("fake Cluster Service announced %q, want {\"url\": ...}", line)
		}
		csURL = announced.URL
		return csURL, nil
	}); err != nil {
		return err
	}

	cosmosArgs := []string{"--cosmos-endpoint", emu.Endpoint, "--cosmos-key", emu.Key}
	if err := registerAll(ctx, log, sup, bin("fleet"), o, cosmosArgs); err != nil {
		return err
	}
	poolFile := filepath.Join(logDir, "agentpools.json")
	if err := writeAgentPools(poolFile, o); err != nil {
		return err
	}

	var services []service
	startService := func(name, display, binary string, args ...string) error {
		addr, err := FreeAddress()
		if err != nil {
			return err
		}
		args = append(args, "--metrics-address", addr, "--health-address", addr, "--leader-elect=false", "--shutdown-timeout", "5s")
		log.printf("starting %s ...\n", display)
		started := time.Now()
		if _, _, err := sup.start(name, binary, false, args...); err != nil {
			return err
		}
		services = append(services, service{name: name, display: display, addr: addr, started: started})
		return nil
	}
	if err := startService("fleet", "fleet controller", bin("fleet"), append([]string{"controller",
		"--clusters-service-url", csURL, "--region", DefaultRegion,
		"--agent-pool-source", "static", "--agent-pool-file", poolFile,
		"--capacity-poll-interval", o.ReportInterval.String(), "--scale-ceiling-interval", "5s",
		"--changefeed-poll-interval", changefeedPollInterval.String()}, cosmosArgs...)...); err != nil {
		return err
	}
	if err := startService("mc-simulator", "the MC simulator", bin("mc-simulator"), append([]string{
		"--clusters-service-url", csURL, "--interval", o.ReportInterval.String(),
		"--not-ready-delay", o.NotReadyDelay.String(), "--nodes", strconv.Itoa(o.Nodes),
		"--stamp-nodes", "1=" + strconv.Itoa(o.TightNodes)}, cosmosArgs...)...); err != nil {
		return err
	}
	if err := startService("backend", "backend", bin("backend"), append([]string{
		"--clusters-service-url", csURL, "--cosmos-ensure-layout",
		"--changefeed-poll-interval", changefeedPollInterval.String(), "--placement-requeue-after", "1s",
		"--management-cluster-placement-sync-requeue-after", "1s"}, cosmosArgs...)...); err != nil {
		return err
	}
	if err := waitReady(ctx, log, sup, services); err != nil {
		return err
	}
	var versions *inProcess
	if err := log.step("starting the version simulator (in this process)", "started the version simulator", func() (string, error) {
		var err error
		versions, err = startVersionSimulator(ctx, o, emu, filepath.Join(logDir, versionSimulatorLog))
		return fmt.Sprintf("desired versions %s.z, %s each", o.DesiredVersion, o.DesiredVersionLatency), err
	}); err != nil {
		return err
	}
	defer versions.stop()

	fmt.Fprintln(out, "\nmetrics:")
	for _, s := range services {
		fmt.Fprintf(out, "  %-15s http://%s/metrics\n", s.name, s.addr)
	}
	fmt.Fprintf(out, "logs: %s\n", logDir)
	if slices.Contains(targets, operatorCommand) {
		fmt.Fprintf(out, "operator command against this region (also explain CLUSTER, clusters --management-cluster MC,\n"+
			"cordon MC --reason TEXT, uncordon MC --reason TEXT, drain-plan MC):\n  %s\n",
			operatorCommandLine(bin(filepath.Base(operatorCommand)), emu.Endpoint, emu.Key, cosmos.DefaultDatabase))
	} else {
		fmt.Fprintf(out, "operator command: not built, this checkout has no %s\n", operatorCommand)
	}
	fmt.Fprintln(out)

	store, err := cosmos.Open(cosmos.Config{Endpoint: emu.Endpoint, Key: emu.Key, Database: cosmos.DefaultDatabase}, prometheus.NewRegistry())
	if err != nil {
		return err
	}
	return drive(ctx, o, out, store, csURL, sup, emu.Done(), versions.done)
}

// versionSimulatorLog is the version simulator's log file in the region's log folder.
const versionSimulatorLog = "version-simulator.log"

// inProcess is a component the region runs in its own process.
type inProcess struct {
	// done receives the component's result if it stops on its own.
	done     chan error
	stop     func()
	finished chan struct{}
}

// startVersionSimulator runs the stand-in for ARO-HCP's ControlPlaneDesiredVersion
// controller with a Cosmos client of its own, as another process's would be, logging to
// logPath.
func startVersionSimulator(ctx context.Context, o Options, emu *emulator.Emulator, logPath string) (*inProcess, error) {
	store, err := cosmos.Open(cosmos.Config{Endpoint: emu.Endpoint, Key: emu.Key, Database: cosmos.DefaultDatabase}, prometheus.NewRegistry())
	if err != nil {
		return nil, fmt.Errorf("version simulator: %w", err)
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("version simulator: %w", err)
	}
	sim, err := versionsim.New(versionsim.Config{
		Store: store, DefaultMinor: o.DesiredVersion, Latency: o.DesiredVersionLatency,
		Informers: informers.Options{PollInterval: changefeedPollInterval},
		Logger:    slog.New(slog.NewJSONHandler(logFile, nil)).With("component", "version-simulator"),
	})
	if err != nil {
		logFile.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	p := &inProcess{done: make(chan error, 1), finished: make(chan struct{})}
	go func() {
		defer close(p.finished)
		p.done <- sim.Run(runCtx)
	}()
	p.stop = func() {
		cancel()
		<-p.finished
		logFile.Close()
	}
	return p, nil
}

// drive creates the subscriptions and clusters, shows progress and decides when the run
// is over. emulatorDone closes when the Cosmos emulator, which the supervisor does not run, exits.
// versionsDone receives the version simulator's result should it stop.
func drive(ctx context.Context, o Options, out io.Writer, store database.Store, csURL string, sup *supervisor, emulatorDone <-chan struct{}, versionsDone <-chan error) error {
	obs := &observer{store: store, csURL: csURL, client: &http.Client{Timeout: 10 * time.Second}}
	start := time.Now()
	var deadline <-chan time.Time
	if o.ExitWhenSettled {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	create := time.NewTicker(max(o.CreateInterval, time.Millisecond))
	defer create.Stop()
	progress := time.NewTicker(o.ProgressEvery)
	defer progress.Stop()
	resources := store.Container(api.ResourcesContainer)
	last := snapshot{}
	// On a terminal each progress block replaces the previous one.
	redraw, drawn := isTerminal(out), 0
	// settled is whether the last progress line found the region settled; a line saying
	// so is printed each time it becomes so.
	settled := false
	fmt.Fprint(out, legend+"\n")
	stopped := func() error {
		fmt.Fprintln(out, "\nstopping")
		renderPlacements(out, last)
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return stopped()
		case c := <-sup.died:
			if ctx.Err() != nil {
				return stopped()
			}
			return deathError(c)
		case <-emulatorDone:
			// Ctrl-C reaches the emulator too, which may exit before ctx ends.
			if ctx.Err() != nil {
				return stopped()
			}
			return fmt.Errorf("the Cosmos emulator exited unexpectedly; its log is %s", filepath.Join(sup.logDir, "emulator.log"))
		case err := <-versionsDone:
			if ctx.Err() != nil {
				return stopped()
			}
			return fmt.Errorf("the version simulator stopped unexpectedly (%v); its log is %s", err, filepath.Join(sup.logDir, versionSimulatorLog))
		case <-deadline:
			why := "the listing above says where each cluster stopped"
			if s, err := obs.snapshot(ctx); err == nil {
				render(out, s, o.Clusters, time.Since(start))
				fmt.Fprintln(out)
				renderUnsettled(out, s, o.Clusters)
			} else {
				why = fmt.Sprintf("reading the region for the reasons failed: %v", err)
			}
			return fmt.Errorf("timed out after %s before the region settled (%s): every cluster must be placed, created in Cluster Service and observed, with no reservation left; logs in %s", o.Timeout, why, sup.logDir)
		case <-create.C:
			if len(obs.created) >= o.Clusters {
				continue
			}
			n := len(obs.created) + 1
			kind := o.Mix().Kind(n)
			now := time.Now()
			// ARM registers the subscription with the resource provider before it sends
			// the cluster's PUT, so its document is there first.
			sub, err := frontend.Subscription(frontend.SubscriptionID(n), frontend.Tenant)
			if err != nil {
				return err
			}
			if _, err := database.Create(ctx, resources, sub); err != nil && !errors.Is(err, database.ErrConflict) {
				return fmt.Errorf("creating subscription %s: %w", sub.ResourceID, err)
			}
			doc, err := frontend.ClusterOfKind(n, kind, now)
			if err != nil {
				return err
			}
			if _, err := database.Create(ctx, resources, doc); err != nil && !errors.Is(err, database.ErrConflict) {
				return fmt.Errorf("creating cluster %d: %w", n, err)
			}
			obs.add(doc.ResourceID, now, kind)
		case <-progress.C:
			s, err := obs.snapshot(ctx)
			if err != nil {
				if ctx.Err() == nil {
					fmt.Fprintf(out, "reading progress: %v\n", err)
				}
				continue
			}
			last = s
			if redraw && drawn > 0 {
				fmt.Fprintf(out, "\033[%dA\033[J", drawn)
			}
			drawn = render(out, s, o.Clusters, time.Since(start))
			now := s.settled(o.Clusters)
			switch {
			case now && !settled:
				fmt.Fprintf(out, "settled: %d clusters in %s: placed, created in Cluster Service and observed; no reservation left\n",
					o.Clusters, time.Since(start).Round(100*time.Millisecond))
				// The block stays above the line; the next one is drawn below it.
				drawn = 0
				if o.ExitWhenSettled {
					renderPlacements(out, s)
					return nil
				}
			case !now && settled:
				fmt.Fprintf(out, "no longer settled: %d of %d observed, %d pending %s\n", s.observed, o.Clusters, s.pending, plural(s.pending, "reservation", "reservations"))
				drawn = 0
			}
			settled = now
		}
	}
}

// registerAll runs `fleet register` for every MC: stamp 1 is the tight one and, when
// there are several, the last is Unschedulable. The first run creates the database
// layout alone so that the others do not race to create it.
func registerAll(ctx context.Context, log *stepLog, sup *supervisor, fleet string, o Options, cosmosArgs []string) error {
	args := func(n int) []string {
		policy := api.Schedulable
		if o.ManagementClusters > 1 && n == o.ManagementClusters {
			policy = api.Unschedulable
		}
		r := RegisterOptions(n, policy)
		return append([]string{"register", "--stamp-identifier", r.Stamp, "--scheduling-policy", r.SchedulingPolicy,
			"--aks-resource-id", r.AKSResourceID, "--kube-applier-cosmos-container-name", r.KubeApplierCosmosContainerName,
			"--auto-approve", "--ensure-layout",
			"--public-dns-zone-resource-id", r.PublicDNSZoneResourceID,
			"--hosted-clusters-secrets-keyvault-url", r.HostedClustersSecretsKeyVaultURL,
			"--hosted-clusters-managed-identities-keyvault-url", r.HostedClustersManagedIdentitiesKeyVaultURL,
			"--hosted-clusters-secrets-keyvault-mi-client-id", r.HostedClustersSecretsKeyVaultManagedIdentityClientID,
			"--maestro-consumer-name", r.MaestroConsumerName,
			"--maestro-rest-api-url", r.MaestroRESTAPIURL,
			"--maestro-grpc-target", r.MaestroGRPCTarget,
		}, cosmosArgs...)
	}
	register := func(n int) error {
		return log.step(fmt.Sprintf("registering stamp %d (fleet register)", n), fmt.Sprintf("registered stamp %d", n), func() (string, error) {
			return "", sup.runToCompletion(ctx, fmt.Sprintf("register-%d", n), fleet, args(n)...)
		})
	}
	if err := register(1); err != nil {
		return err
	}
	errs := make([]error, o.ManagementClusters+1)
	var wg sync.WaitGroup
	for n := 2; n <= o.ManagementClusters; n++ {
		wg.Go(func() { errs[n] = register(n) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// RegisterOptions is what the local region registers as stamp n: an AKS cluster, key
// vaults and a Maestro consumer of its own, auto-approved.
func RegisterOptions(n int, policy string) register.Options {
	return register.Options{
		Stamp:                            strconv.Itoa(n),
		AutoApprove:                      true,
		SchedulingPolicy:                 policy,
		AKSResourceID:                    AKSResourceID(n),
		KubeApplierCosmosContainerName:   fmt.Sprintf("kubeapplier-%d", n),
		PublicDNSZoneResourceID:          "/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/global/providers/Microsoft.Network/dnszones/local.hcp.example.com",
		HostedClustersSecretsKeyVaultURL: fmt.Sprintf("https://local-cx-%d.vault.azure.net/", n),
		HostedClustersManagedIdentitiesKeyVaultURL:           fmt.Sprintf("https://local-mi-%d.vault.azure.net/", n),
		HostedClustersSecretsKeyVaultManagedIdentityClientID: "6f1c3a52-9d7e-4b1a-8c55-2f0e9d41b7a3",
		MaestroConsumerName:                                  fmt.Sprintf("local-mgmt-%d", n),
		MaestroRESTAPIURL:                                    "http://maestro.maestro.svc.cluster.local:8000",
		MaestroGRPCTarget:                                    "maestro-grpc.maestro.svc.cluster.local:8090",
	}
}

// AKSResourceID is the resource ID of stamp n's AKS cluster.
func AKSResourceID(n int) string {
	return fmt.Sprintf("/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/hcp-underlay-local-mgmt-%d/providers/Microsoft.ContainerService/managedClusters/local-mgmt-%d", n, n)
}

// writeAgentPools writes the fleet's static agent pool file.
func writeAgentPools(path string, o Options) error {
	b, err := AgentPools(o.Nodes, o.TightNodes, o.MaxNodes)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// AgentPools is the fleet's static agent pool file: autoscaling worker pools of nodes
// nodes up to maxNodes (at least nodes), and a fixed pool of tightNodes for stamp 1.
func AgentPools(nodes, tightNodes, maxNodes int) ([]byte, error) {
	pool := func(count, maxCount int, autoscale bool) []map[string]any {
		return []map[string]any{{"name": "worker", "properties": map[string]any{
			"vmSize": DefaultAgentPoolVMSize, "count": count, "enableAutoScaling": autoscale, "maxCount": maxCount,
			"nodeLabels": map[string]string{"aro-hcp.azure.com/role": "worker"},
			"tags":       map[string]string{"aks-nic-secondary-count": strconv.Itoa(mcsim.DefaultNodeSwiftNICs)},
		}}}
	}
	pools := map[string]any{
		"*":              pool(nodes, max(nodes, maxNodes), true),
		AKSResourceID(1): pool(tightNodes, tightNodes, false),
	}
	return json.MarshalIndent(pools, "", "  ")
}

// RepoRoot is dir, or the nearest folder above the working directory holding go.mod and
// emulator/server.js.
func RepoRoot(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if fileExists(filepath.Join(d, "go.mod")) && fileExists(filepath.Join(d, "emulator", "server.js")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no hcpsched checkout (go.mod and emulator/server.js) above %s", wd)
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
