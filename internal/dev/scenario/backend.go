package scenario

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	backendapp "github.com/hcpsched/hcpsched/backend/app"
	"github.com/hcpsched/hcpsched/backend/controllers"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/localregion"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// backendRequeueAfter shortens the backend's expected waits as the local region does:
// a scenario lasts minutes, not hours.
const backendRequeueAfter = time.Second

// placementRequeueAfter is how soon the backend looks again at a cluster that fits
// nowhere.
func (o Options) placementRequeueAfter() time.Duration {
	if o.PlacementRequeueAfter > 0 {
		return o.PlacementRequeueAfter
	}
	return backendRequeueAfter
}

// stopGrace is how long a backend may drain after SIGTERM before it is killed.
const stopGrace = 10 * time.Second

// backend is one running backend replica, in-process or a child process.
type backend interface {
	counters(ctx context.Context) (counters, error)
	// peakRSS is the highest resident set the replica reached, in bytes.
	peakRSS() int64
	stop()
}

// backendControllers is every controller at its default but placement's workers and the
// two expected waits.
func backendControllers(workers int) controllers.Config {
	cfg := controllers.Config{}
	for _, def := range controllers.Definitions() {
		s := def.Defaults
		switch def.Name {
		case controllers.PlacementName:
			s.Workers, s.RequeueAfter = workers, backendRequeueAfter
		case controllers.ManagementClusterPlacementSyncName:
			s.RequeueAfter = backendRequeueAfter
		}
		cfg[def.Name] = &s
	}
	return cfg
}

// inProcessBackend is the backend assembled in this process over the memory store,
// which only a process of its own can share. Its store is wrapped so that its requests
// are counted as the Cosmos client counts them.
type inProcessBackend struct {
	reg    *prometheus.Registry
	cs     *clusterservice.Client
	cancel context.CancelFunc
	done   chan struct{}
	peak   int64
}

func startInProcessBackend(ctx context.Context, store database.Store, csURL string, o Options, logger *slog.Logger) (*inProcessBackend, error) {
	reg := prometheus.NewRegistry()
	counted, err := newCountingStore(store, reg)
	if err != nil {
		return nil, err
	}
	cs, err := clusterservice.New(ctx, clusterservice.Config{URL: csURL, Agent: "hcpsched-backend", Logger: logger})
	if err != nil {
		return nil, err
	}
	app, err := backendapp.New(backendapp.Config{
		Store: counted, ClusterService: cs, Registerer: reg, Logger: logger,
		Informers:   informers.Options{PollInterval: o.PollInterval},
		Placement:   placement.DefaultConfig(),
		Controllers: backendControllers(o.Workers),
	})
	if err != nil {
		_ = cs.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	b := &inProcessBackend{reg: reg, cs: cs, cancel: cancel, done: make(chan struct{})}
	if err := app.StartCaches(runCtx); err != nil {
		b.stop()
		return nil, err
	}
	if !app.WaitForCacheSync(runCtx) {
		b.stop()
		return nil, errors.New("backend caches did not sync")
	}
	// The peak from here on is the backend's, not the set-up's before it.
	_ = resetPeakRSS(0)
	go func() {
		defer close(b.done)
		if err := app.RunControllers(runCtx); err != nil && runCtx.Err() == nil {
			logger.Error("backend controllers stopped", "error", err)
		}
	}()
	return b, nil
}

// counters are the backend's metrics and, since it shares this process with the region,
// the whole process's CPU and live heap (after a collection): an in-process backend's own
// share of either cannot be told apart.
func (b *inProcessBackend) counters(context.Context) (counters, error) {
	families, err := b.reg.Gather()
	if err != nil {
		return counters{}, fmt.Errorf("gathering backend metrics: %w", err)
	}
	c := countersOf(families)
	if c.cpuSeconds, err = processCPUSeconds(0); err != nil {
		return counters{}, err
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	c.heapBytes = float64(ms.HeapAlloc)
	c.allocBytes = float64(ms.TotalAlloc)
	return c, nil
}

func (b *inProcessBackend) peakRSS() int64 {
	if v, err := peakRSS(0); err == nil {
		b.peak = max(b.peak, v)
	}
	return b.peak
}

func (b *inProcessBackend) stop() {
	b.peakRSS()
	b.cancel()
	select {
	case <-b.done:
	case <-time.After(stopGrace):
	}
	_ = b.cs.Close()
}

// processBackend is the backend binary as a child process: its peak RSS is its own, and
// it can be killed.
type processBackend struct {
	name    string
	bin     string
	args    []string
	addr    string
	logPath string
	client  *http.Client

	mu    sync.Mutex
	cmd   *exec.Cmd
	done  chan struct{}
	peak  int64
	kills int
}

func newProcessBackend(name, bin, logPath, addr string, args []string) *processBackend {
	return &processBackend{name: name, bin: bin, args: args, addr: addr, logPath: logPath, client: &http.Client{Timeout: 10 * time.Second}}
}

// backendArgs are the flags of a backend child: leader election off, so that several
// replicas run at once when asked, splitting the keys by shard lease. A lone replica
// owns every key and splits nothing (--shards=0): it then measures what one elected
// leader costs, without lease requests and with the record of unsent Cluster Service IDs
// that only a process whose keys cannot move keeps.
func backendArgs(o Options, cosmosEndpoint, cosmosKey, csURL, addr string) []string {
	shards := []string{}
	if o.Backends <= 1 {
		shards = []string{"--shards=0"}
	}
	return append(shards,
		"--cosmos-endpoint", cosmosEndpoint, "--cosmos-key", cosmosKey,
		"--clusters-service-url", csURL,
		"--metrics-address", addr, "--health-address", addr, "--leader-elect=false", "--shutdown-timeout", "5s",
		// A profile of the backend can be taken during a run (docs/benchmarks.md).
		"--profiling",
		"--changefeed-poll-interval", o.PollInterval.String(),
		"--placement-workers", strconv.Itoa(o.Workers),
		"--placement-requeue-after", o.placementRequeueAfter().String(),
		"--management-cluster-placement-sync-requeue-after", backendRequeueAfter.String(),
	)
}

// start runs the binary, its output appended to its log, and waits until /readyz says its
// caches synced.
func (p *processBackend) start(ctx context.Context) error {
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("starting %s: %w", p.name, err)
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.SysProcAttr = localregion.ProcAttr()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("starting %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(done)
	}()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	return p.waitReady(ctx, done)
}

func (p *processBackend) waitReady(ctx context.Context, done <-chan struct{}) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+"/readyz", nil)
		if err != nil {
			return err
		}
		if resp, err := p.client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to be ready: %w", p.name, ctx.Err())
		case <-done:
			return fmt.Errorf("%s exited before it was ready; see %s", p.name, p.logPath)
		case <-tick.C:
		}
	}
}

// running is the current child and its exit channel, nil when none runs.
func (p *processBackend) running() (*exec.Cmd, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd, p.done
}

func (p *processBackend) samplePeak(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	if v, err := peakRSS(cmd.Process.Pid); err == nil {
		p.mu.Lock()
		p.peak = max(p.peak, v)
		p.mu.Unlock()
	}
}

// kill ends the child with SIGKILL: no drain, no goodbye, as a node failure would.
func (p *processBackend) kill() {
	cmd, done := p.running()
	if cmd == nil {
		return
	}
	p.samplePeak(cmd)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
	p.mu.Lock()
	p.kills++
	p.mu.Unlock()
}

// killCount is how many times the replica was killed.
func (p *processBackend) killCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.kills
}

func (p *processBackend) stop() {
	cmd, done := p.running()
	if cmd == nil {
		return
	}
	p.samplePeak(cmd)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(stopGrace):
		_ = cmd.Process.Kill()
		<-done
	}
}

func (p *processBackend) peakRSS() int64 {
	cmd, _ := p.running()
	p.samplePeak(cmd)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

func (p *processBackend) counters(ctx context.Context) (counters, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+"/metrics", nil)
	if err != nil {
		return counters{}, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return counters{}, fmt.Errorf("scraping %s: %w", p.name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return counters{}, fmt.Errorf("scraping %s: %s", p.name, resp.Status)
	}
	families, err := parseMetrics(resp.Body)
	if err != nil {
		return counters{}, fmt.Errorf("scraping %s: %w", p.name, err)
	}
	return countersOf(families), nil
}
