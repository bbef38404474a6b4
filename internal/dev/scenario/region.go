package scenario

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/fleet/agentpools"
	fleetapp "github.com/hcpsched/hcpsched/fleet/app"
	"github.com/hcpsched/hcpsched/fleet/capacity"
	"github.com/hcpsched/hcpsched/fleet/controllers"
	"github.com/hcpsched/hcpsched/fleet/register"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/cosmos"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/emulator"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/localregion"
	"github.com/hcpsched/hcpsched/internal/dev/mcsim"
	"github.com/hcpsched/hcpsched/internal/dev/versionsim"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/shard"
)

// Settings of the in-process parts of the region that a run does not vary.
const (
	fleetWorkers              = 5
	fleetScaleCeilingInterval = 5 * time.Second
	registerParallelism       = 8
)

// region is everything but the backend: the store, the fake Cluster Service, the
// registered MCs with the fleet controllers mirroring their capacity, the simulator
// writing it, and the stand-in for ARO-HCP's ControlPlaneDesiredVersion controller.
type region struct {
	o      Options
	logDir string
	logger *slog.Logger
	// store is the region's own handle: the memory store itself, or a Cosmos client of
	// its own whose requests are not the backend's.
	store database.Store
	// checkerStore is the chaos checker's own handle: its change-feed reads must not wait
	// out the region client's retry back-off under injected faults, since a failed read
	// is simply made again.
	checkerStore database.Store
	emu          *emulator.Emulator
	cs           *fakeclusterservice.Server
	csURL        string

	// pools are the MCs' agent pools; the chaos run shrinks an MC through them.
	pools *shrinkablePools

	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closers []func()
}

// shrinkablePools serves the static agent pools, except for the MCs given fewer nodes at
// most, as an operator lowering a worker pool's autoscaler maximum would: the fleet's
// ScaleCeiling then lowers the MC's ceiling on its next pass.
type shrinkablePools struct {
	base agentpools.Source
	mu   sync.Mutex
	// maxNodes caps the worker pools of an AKS cluster, by lowercased resource ID.
	maxNodes map[string]int32
}

func (p *shrinkablePools) List(ctx context.Context, aksResourceID string) ([]agentpools.Pool, error) {
	pools, err := p.base.List(ctx, aksResourceID)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	limit, capped := p.maxNodes[strings.ToLower(aksResourceID)]
	p.mu.Unlock()
	if !capped {
		return pools, nil
	}
	out := make([]agentpools.Pool, len(pools))
	for i, pool := range pools {
		if pool.IsWorker() {
			pool.Count, pool.EnableAutoScaling, pool.MaxCount = min(pool.Count, limit), true, &limit
		}
		out[i] = pool
	}
	return out, nil
}

// limit caps the worker pools of one AKS cluster at nodes.
func (p *shrinkablePools) limit(aksResourceID string, nodes int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.maxNodes == nil {
		p.maxNodes = map[string]int32{}
	}
	p.maxNodes[strings.ToLower(aksResourceID)] = int32(nodes)
}

// startRegion starts the store and everything around the backend, and returns once every
// MC is registered, has its provision shard, and has reported capacity and a scale
// ceiling, so that placement can start at once.
func startRegion(ctx context.Context, o Options, logDir string) (_ *region, err error) {
	logFile, err := os.Create(filepath.Join(logDir, "region.log"))
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	r := &region{o: o, logDir: logDir, logger: slog.New(slog.NewJSONHandler(logFile, nil)), cancel: cancel}
	r.closers = append(r.closers, func() { logFile.Close() })
	defer func() {
		if err != nil {
			r.close()
		}
	}()

	if err := r.startStore(ctx); err != nil {
		return nil, err
	}
	if err := r.startClusterService(); err != nil {
		return nil, err
	}
	if err := r.register(ctx); err != nil {
		return nil, err
	}
	if err := r.startFleet(ctx, runCtx); err != nil {
		return nil, err
	}
	sim := mcsim.New(mcsim.Config{
		Store: r.store, ClusterServiceURL: r.csURL,
		ProfileFor: func(*api.ResourceID) mcsim.Profile {
			p := mcsim.DefaultProfile()
			p.Nodes = r.nodes()
			return p
		},
		Logger: r.logger.With("component", "mc-simulator"),
	})
	r.goRun(func() { _ = sim.Run(runCtx, o.ReportInterval) })
	if err := r.startVersionSimulator(runCtx); err != nil {
		return nil, err
	}
	if err := r.waitPlaceable(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// startVersionSimulator runs the desired-version writer ARO-HCP runs beside hcpsched, on
// the region's store handle: under a chaos run its requests meet the injected faults too.
func (r *region) startVersionSimulator(runCtx context.Context) error {
	logger := r.logger.With("component", "version-simulator")
	vs, err := versionsim.New(versionsim.Config{
		Store: r.store, Logger: logger,
		Informers: informers.Options{PollInterval: r.o.PollInterval, Logger: logger},
	})
	if err != nil {
		return err
	}
	r.goRun(func() {
		if err := vs.Run(runCtx); err != nil && runCtx.Err() == nil {
			logger.Error("version simulator stopped", "error", err)
		}
	})
	return nil
}

func (r *region) nodes() int {
	return r.o.nodes(mcsim.DefaultHASwiftNICs, mcsim.DefaultNodeSwiftNICs)
}

func (r *region) goRun(f func()) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		f()
	}()
}

// stopWriters stops the fleet controllers and the simulator; the store stays.
func (r *region) stopWriters() {
	r.cancel()
	r.wg.Wait()
}

// close stops the region's goroutines, then what they used, newest first.
func (r *region) close() {
	r.stopWriters()
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	r.closers = nil
}

func (r *region) kubeApplierContainers() []string {
	names := make([]string, 0, r.o.ManagementClusters)
	for n := 1; n <= r.o.ManagementClusters; n++ {
		names = append(names, localregion.RegisterOptions(n, api.Schedulable).KubeApplierCosmosContainerName)
	}
	return names
}

func (r *region) startStore(ctx context.Context) error {
	if r.o.Store == StoreMemory {
		r.store = memory.New(memory.WithLatency(r.o.MemoryLatency))
		r.checkerStore = r.store
		return nil
	}
	emuLog, err := os.Create(filepath.Join(r.logDir, "emulator.log"))
	if err != nil {
		return err
	}
	r.closers = append(r.closers, func() { emuLog.Close() })
	root, err := localregion.RepoRoot(r.o.RepoRoot)
	if err != nil {
		return err
	}
	emu, err := emulator.Start(ctx, emulator.Options{Dir: filepath.Join(root, "emulator"), Latency: r.o.EmulatorLatency, Log: emuLog})
	if err != nil {
		return err
	}
	r.emu = emu
	r.closers = append(r.closers, func() { _ = emu.Stop() })
	store, err := cosmos.Open(cosmos.Config{Endpoint: emu.Endpoint, Key: emu.Key, Database: cosmos.DefaultDatabase}, prometheus.NewRegistry())
	if err != nil {
		return err
	}
	// The shard-lease container too: the backends run leaderless, sharded by lease.
	if err := store.EnsureLayout(ctx, append([]string{api.ResourcesContainer, api.FleetContainer, shard.DefaultLeaseContainer}, r.kubeApplierContainers()...)...); err != nil {
		return fmt.Errorf("creating the emulator's layout: %w", err)
	}
	r.store = store
	r.checkerStore, err = cosmos.Open(cosmos.Config{Endpoint: emu.Endpoint, Key: emu.Key, Database: cosmos.DefaultDatabase,
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: 1, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 100 * time.Millisecond}},
	}, prometheus.NewRegistry())
	return err
}

// startClusterService serves the fake Cluster Service on loopback, where backend children
// reach it too.
func (r *region) startClusterService() error {
	r.cs = fakeclusterservice.New(fakeclusterservice.WithLogger(r.logger.With("component", "fake-cluster-service")))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("fake Cluster Service: %w", err)
	}
	srv := &http.Server{Handler: r.cs, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	r.closers = append(r.closers, func() { _ = srv.Close() })
	r.csURL = "http://" + l.Addr().String()
	return nil
}

// register registers every MC as `fleet register` would, all of them schedulable.
func (r *region) register(ctx context.Context) error {
	now := time.Now()
	errs := make([]error, r.o.ManagementClusters+1)
	slots := make(chan struct{}, registerParallelism)
	var wg sync.WaitGroup
	for n := 1; n <= r.o.ManagementClusters; n++ {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			if err := register.Run(ctx, r.store, localregion.RegisterOptions(n, api.Schedulable), now); err != nil {
				errs[n] = fmt.Errorf("registering stamp %d: %w", n, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (r *region) startFleet(ctx, runCtx context.Context) error {
	poolsJSON, err := localregion.AgentPools(r.nodes(), r.nodes(), r.nodes())
	if err != nil {
		return err
	}
	static, err := agentpools.ParseStatic(poolsJSON)
	if err != nil {
		return err
	}
	r.pools = &shrinkablePools{base: static}
	sizes, err := capacity.LoadVMSizes("")
	if err != nil {
		return err
	}
	logger := r.logger.With("component", "fleet")
	cs, err := clusterservice.New(ctx, clusterservice.Config{URL: r.csURL, Agent: "hcpsched-fleet", Logger: logger})
	if err != nil {
		return err
	}
	r.closers = append(r.closers, func() { _ = cs.Close() })
	app, err := fleetapp.New(fleetapp.Config{
		Store: r.store, ClusterService: cs, AgentPools: r.pools, VMSizes: sizes, Region: localregion.DefaultRegion,
		Workers: fleetWorkers, ResyncPeriod: controllers.DefaultResyncPeriod,
		CapacityPollInterval: r.o.ReportInterval, ScaleCeilingInterval: fleetScaleCeilingInterval,
		Registerer: prometheus.NewRegistry(), Logger: logger,
		Informers: informers.Options{PollInterval: r.o.PollInterval},
	})
	if err != nil {
		return err
	}
	if err := app.StartCaches(runCtx); err != nil {
		return err
	}
	if !app.WaitForCacheSync(ctx) {
		return errors.New("the fleet's caches did not sync")
	}
	r.goRun(func() {
		if err := app.RunControllers(runCtx); err != nil && runCtx.Err() == nil {
			logger.Error("fleet controllers stopped", "error", err)
		}
	})
	return nil
}

// waitPlaceable waits until every MC is Ready with current capacity and scaling data.
func (r *region) waitPlaceable(ctx context.Context) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	ctx, cancel := context.WithTimeout(ctx, r.o.Timeout)
	defer cancel()
	for {
		ready, err := r.placeableMCs(ctx)
		if err == nil && ready == r.o.ManagementClusters {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("only %d of %d management clusters became placeable (last error: %v); logs in %s", ready, r.o.ManagementClusters, err, r.logDir)
		case <-tick.C:
		}
	}
}

func (r *region) placeableMCs(ctx context.Context) (int, error) {
	fleet := r.store.Container(api.FleetContainer)
	ready := map[string]bool{}
	mcs, err := database.ListDecoded[api.ManagementClusterProperties](ctx, fleet, api.ManagementClusterResourceType)
	if err != nil {
		return 0, err
	}
	for _, mc := range mcs {
		rid, err := mc.ParsedResourceID()
		if st := mc.Properties.Status; err == nil && st != nil && api.IsConditionTrue(st.Conditions, api.ManagementClusterConditionReady) {
			ready[rid.Key()] = true
		}
	}
	schedulings, err := database.ListDecoded[api.ManagementClusterSchedulingProperties](ctx, fleet, api.ManagementClusterSchedulingResourceType)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range schedulings {
		st := s.Properties.Status
		rid, err := s.ParsedResourceID()
		if err != nil || st == nil || !ready[rid.Parent().Key()] {
			continue
		}
		if api.IsConditionTrue(st.Conditions, api.SchedulingConditionCapacityDataCurrent) && api.IsConditionTrue(st.Conditions, api.SchedulingConditionScalingDataCurrent) {
			n++
		}
	}
	return n, nil
}
