package scenario

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/benchreport"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/dev/localregion"
	"github.com/hcpsched/hcpsched/internal/dev/mcsim"
)

// createRetries bounds how often the runner retries creating one document: under
// injected faults the runner's own requests fail too.
const createRetries = 20

// Result is one run's measurements. The counters are the backend's, summed over its
// replicas, from just before the first cluster was created until the run settled.
type Result struct {
	benchreport.Run
	ByOperation map[string]float64
	ByStatus    map[string]float64
	Attempts    map[string]float64
	// Reconciles are the backend's reconciles by "<controller> <result>".
	Reconciles map[string]float64
	// ReconcileSeconds is the time the backend spent reconciling, by controller.
	ReconcileSeconds map[string]float64
	// Settled is how long after the first creation every cluster was placed, created in
	// Cluster Service and observed, with no reservation left.
	Settled time.Duration
	LogDir  string
}

// session is one run's region, backends and observer.
type session struct {
	o        Options
	root     string
	logDir   string
	backendB string
	region   *region
	obs      *observer
	backends []backend
	procs    []*processBackend
	// seededMu guards seeded and kinds, which the creators fill.
	seededMu sync.Mutex
	seeded   []seededField
	kinds    map[string]frontend.Kind
	began    time.Time
	// progressMu serialises progress lines: the disturber, the killer and the sampler
	// print from their own goroutines to one writer.
	progressMu sync.Mutex
}

// Run runs one scenario: the region comes up, the clusters are created, and Run returns
// once they all settled, with the backend's measurements.
func Run(ctx context.Context, o Options) (*Result, error) {
	s, err := open(ctx, o)
	if err != nil {
		return nil, err
	}
	defer s.close()
	base, err := s.window(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.createClusters(ctx, 1); err != nil {
		return nil, err
	}
	final, err := s.waitUntil(ctx, "settled", func(p progress) bool { return p.settled(o.Clusters) })
	if err != nil {
		return nil, err
	}
	end, err := s.window(ctx)
	if err != nil {
		return nil, err
	}
	w := window{counters: end.counters.since(base.counters), runnerCPU: end.runnerCPU - base.runnerCPU, since: base.since}
	return s.result(final, w), nil
}

// window is the backends' counters and the runner process's CPU now.
func (s *session) window(ctx context.Context) (window, error) {
	since := time.Now()
	c, err := s.counters(ctx)
	if err != nil {
		return window{}, err
	}
	cpu, err := processCPUSeconds(0)
	if err != nil {
		return window{}, err
	}
	return window{counters: c, runnerCPU: cpu, since: since}, nil
}

// open builds what the run needs and starts the region and the backends.
func open(ctx context.Context, o Options) (_ *session, err error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	root, err := localregion.RepoRoot(o.RepoRoot)
	if err != nil {
		return nil, err
	}
	outDir := o.OutputDir
	if outDir == "" {
		outDir = filepath.Join(root, "_output")
	}
	s := &session{o: o, root: root, logDir: filepath.Join(outDir, "scenario", o.label()), kinds: map[string]frontend.Kind{}}
	// Logs of an earlier run would be mistaken for this one's.
	if err := os.RemoveAll(s.logDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.logDir, 0o755); err != nil {
		return nil, err
	}
	if o.Store == StoreEmulator {
		if s.backendB, err = buildBackend(ctx, root, filepath.Join(outDir, "bin"), o.GoBuildFlags); err != nil {
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	s.progressf("starting the region: %s store, %d management clusters of %d nodes", o.Store, o.ManagementClusters, o.nodes(mcsim.DefaultHASwiftNICs, mcsim.DefaultNodeSwiftNICs))
	if s.region, err = startRegion(ctx, o, s.logDir); err != nil {
		return nil, err
	}
	if o.SeedExtraFields {
		if err := s.seedFleet(ctx); err != nil {
			return nil, err
		}
	}
	if s.obs, err = newObserver(ctx, s.region); err != nil {
		return nil, err
	}
	if err := s.startBackends(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *session) close() {
	for _, b := range s.backends {
		b.stop()
	}
	if s.region != nil {
		s.region.close()
	}
}

func (s *session) progressf(format string, args ...any) {
	if s.o.Progress == nil {
		return
	}
	s.progressMu.Lock()
	defer s.progressMu.Unlock()
	fmt.Fprintf(s.o.Progress, format+"\n", args...)
}

// buildBackend builds the backend binary the emulator runs use.
func buildBackend(ctx context.Context, root, binDir string, flags []string) (string, error) {
	out := filepath.Join(binDir, "backend")
	args := append(append([]string{"build"}, flags...), "-o", out, "./backend")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./backend: %w\n%s", err, b)
	}
	return out, nil
}

func (s *session) startBackends(ctx context.Context) error {
	if s.o.Store == StoreMemory {
		b, err := startInProcessBackend(ctx, s.region.store, s.region.csURL, s.o, s.region.logger.With("component", "backend"))
		if err != nil {
			return err
		}
		s.backends = append(s.backends, b)
		return nil
	}
	for i := 1; i <= s.o.Backends; i++ {
		addr, err := localregion.FreeAddress()
		if err != nil {
			return err
		}
		name := fmt.Sprintf("backend-%d", i)
		p := newProcessBackend(name, s.backendB, filepath.Join(s.logDir, name+".log"), addr,
			backendArgs(s.o, s.region.emu.Endpoint, s.region.emu.Key, s.region.csURL, addr))
		s.backends = append(s.backends, p)
		s.procs = append(s.procs, p)
		if err := p.start(ctx); err != nil {
			return err
		}
	}
	return nil
}

// counters sums the backends' counters.
func (s *session) counters(ctx context.Context) (counters, error) {
	var sum counters
	for _, b := range s.backends {
		c, err := b.counters(ctx)
		if err != nil {
			return counters{}, err
		}
		sum = sum.add(c)
	}
	return sum, nil
}

// createClusters creates the run's clusters, from cluster number from on, as a burst from
// DefaultCreators writers, or one every 1/Rate seconds, and returns once all are stored.
// The run's clock starts here unless it already runs.
func (s *session) createClusters(ctx context.Context, from int) error {
	// A chaos run sets it first: its goroutines read it while the clusters are created.
	if s.began.IsZero() {
		s.began = time.Now()
	}
	count := max(s.o.Clusters-from+1, 0)
	s.progressf("creating %d clusters %s", count, map[bool]string{true: "as a burst", false: fmt.Sprintf("at %.1f/s", s.o.Rate)}[s.o.Rate == 0])
	next := make(chan int)
	errs := make(chan error, count)
	go func() {
		defer close(next)
		var tick <-chan time.Time
		if s.o.Rate > 0 {
			t := time.NewTicker(time.Duration(float64(time.Second) / s.o.Rate))
			defer t.Stop()
			tick = t.C
		}
		for n := from; n <= s.o.Clusters; n++ {
			if tick != nil && n > from {
				select {
				case <-tick:
				case <-ctx.Done():
					return
				}
			}
			select {
			case next <- n:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range DefaultCreators {
		wg.Go(func() {
			for n := range next {
				if err := s.createCluster(ctx, n); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return errors.Join(collect(errs)...)
}

func collect(errs <-chan error) []error {
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}

// createCluster writes cluster n as ARO-HCP's frontend does, its Subscription first (ARM
// registers the subscription before it sends any PUT), retrying failed writes with the
// same documents so that the cluster's creation time is the one stored.
func (s *session) createCluster(ctx context.Context, n int) error {
	now := time.Now()
	kind := s.o.mix().Kind(n)
	sub, err := frontend.Subscription(frontend.SubscriptionID(n), frontend.Tenant)
	if err != nil {
		return err
	}
	doc, err := frontend.ClusterOfKind(n, kind, now)
	if err != nil {
		return err
	}
	if s.o.SeedExtraFields {
		var seeded []seededField
		if doc, seeded, err = withExtras(doc, api.ResourcesContainer, clusterSeeds); err != nil {
			return err
		}
		s.addSeeded(seeded)
	}
	// The kind is known before the document is written: the backend may place the cluster
	// (and the checker see its reservation) before the write's answer comes back, and a
	// cluster the run cannot name a kind for costs the checker as much as a SWIFT HA one.
	s.seededMu.Lock()
	s.kinds[strings.ToLower(doc.ResourceID)] = kind
	s.seededMu.Unlock()
	resources := s.region.store.Container(api.ResourcesContainer)
	if err := createWithRetries(ctx, func() error {
		_, err := database.Create(ctx, resources, sub.DeepCopy())
		return err
	}); err != nil {
		return fmt.Errorf("creating the subscription of cluster %d: %w", n, err)
	}
	if err := createWithRetries(ctx, func() error {
		_, err := database.Create(ctx, resources, doc.DeepCopy())
		return err
	}); err != nil {
		return fmt.Errorf("creating cluster %d: %w", n, err)
	}
	s.obs.recordCreated(doc.ResourceID, now)
	return nil
}

// createWithRetries runs create until it succeeds or finds the document there already
// (an earlier attempt that failed only on its way back), backing off between attempts.
func createWithRetries(ctx context.Context, create func() error) error {
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := create()
		if err == nil || errors.Is(err, database.ErrConflict) {
			return nil
		}
		if attempt == createRetries || ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// waitUntil polls the observer until done holds, printing progress, and fails after
// Options.Timeout.
func (s *session) waitUntil(ctx context.Context, what string, done func(progress) bool) (progress, error) {
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	report := time.NewTicker(s.o.ProgressEvery)
	defer report.Stop()
	for {
		p := s.obs.progress()
		if done(p) {
			p = s.obs.progressOf(true)
			s.progressf("[%6.1fs] %s: %s", time.Since(s.began).Seconds(), what, p)
			return p, nil
		}
		select {
		case <-ctx.Done():
			return p, fmt.Errorf("not %s after %s (%s); logs in %s", what, s.o.Timeout, p, s.logDir)
		case <-report.C:
			s.progressf("[%6.1fs] %s", time.Since(s.began).Seconds(), p)
		case <-tick.C:
		}
	}
}

// result turns the final progress and the backend's counters into the run's figures.
func (s *session) result(p progress, w window) *Result {
	c := w.counters
	created := s.obs.createdAt()
	var first, last time.Time
	for _, t := range created {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	run := benchreport.Run{
		Store: s.o.Store, Workers: s.o.Workers, ManagementClusters: s.o.ManagementClusters, Clusters: s.o.Clusters,
		Placements: p.placed, CosmosRequests: c.requests, RequestCharge: c.charge, Conflicts: c.byStatus["412"],
	}
	switch s.o.Store {
	case StoreEmulator:
		run.AddedLatency = s.o.EmulatorLatency
	case StoreMemory:
		run.AddedLatency = s.o.MemoryLatency
	}
	run.Cost = cost(s.o.Store, s.o.Clusters, w, s.region.cs.Requests())
	for cluster, at := range p.placedAt {
		if at.After(last) {
			last = at
		}
		run.Latencies = append(run.Latencies, at.Sub(created[cluster]))
		run.PlacedAt = append(run.PlacedAt, at.Sub(first))
	}
	run.Elapsed = last.Sub(first)
	for _, b := range s.backends {
		run.PeakRSSBytes = max(run.PeakRSSBytes, b.peakRSS())
	}
	return &Result{Run: run, ByOperation: c.byOperation, ByStatus: c.byStatus, Attempts: c.attempts, Reconciles: c.reconciles, ReconcileSeconds: c.reconcileSeconds, Settled: time.Since(first), LogDir: s.logDir}
}

func (s *session) addSeeded(seeded []seededField) {
	s.seededMu.Lock()
	defer s.seededMu.Unlock()
	s.seeded = append(s.seeded, seeded...)
}

// seedFleet gives every management cluster and scheduling document fields hcpsched does
// not know, at each level its controllers write and in every element of their condition
// arrays, and a condition of another component next to hcpsched's.
func (s *session) seedFleet(ctx context.Context) error {
	fleet := s.region.store.Container(api.FleetContainer)
	mcs, err := seedStored[api.ManagementClusterProperties](ctx, fleet, api.ManagementClusterResourceType, mcSeeds)
	if err != nil {
		return err
	}
	schedulings, err := seedStored[api.ManagementClusterSchedulingProperties](ctx, fleet, api.ManagementClusterSchedulingResourceType, schedulingSeeds)
	if err != nil {
		return err
	}
	s.addSeeded(append(mcs, schedulings...))
	return nil
}

// kindOf is the kind of a cluster the run created; ours is false for any other.
func (s *session) kindOf(key string) (k frontend.Kind, ours bool) {
	s.seededMu.Lock()
	defer s.seededMu.Unlock()
	k, ours = s.kinds[key]
	return k, ours
}
