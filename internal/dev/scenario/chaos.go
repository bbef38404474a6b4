package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hcpsched/hcpsched/internal/dev/emulator"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/dev/mcsim"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// ChaosOptions are a run's size and the faults injected into it.
type ChaosOptions struct {
	Options
	// Rates at which the emulator fails matching requests: 412 on conditional writes
	// (a lost etag race), 429 and 503 on any document request.
	Rate412, Rate429, Rate503 float64
	// SlowRate of the emulator's requests take SlowLatency longer.
	SlowRate    float64
	SlowLatency time.Duration
	// ClusterServiceFailureRate of Cluster Service's cluster requests answer 503.
	ClusterServiceFailureRate float64
	// FaultDuration is how long the faults stay on at least, from the first creation of
	// the clusters after cluster 1 (which lands alone, under the faults too); longer when
	// the creations or the kills take longer.
	FaultDuration time.Duration
	// Kills is how many times a backend replica is killed (SIGKILL) and restarted,
	// one every KillEvery, replicas in turn.
	Kills     int
	KillEvery time.Duration
	// Headroom sizes the MCs: their ceilings add up to about Headroom times what the
	// clusters cost. Below 1 demand exceeds capacity: every MC fills up, so one cluster
	// too many shows as an overbooked MC, and the rest must wait for capacity.
	Headroom float64
	// Race builds the backend with the race detector, whose reports fail the run.
	Race bool
	// SettleGrace is how long reservations may outlive the placements they stood for
	// before the run stops waiting for them and reports them.
	SettleGrace time.Duration
}

// Defaults of `make chaos`, and of the short profile `make test` runs.
const (
	DefaultChaosManagementClusters = 10
	DefaultChaosClusters           = 600
	DefaultChaosRate               = 25.0
	DefaultChaosFaultDuration      = time.Minute
	DefaultChaosKills              = 8
	DefaultChaosKillEvery          = 7 * time.Second
	// DefaultChaosHeadroom is the over-demand case: ceilings about 0.8 times demand.
	DefaultChaosHeadroom    = 0.8
	DefaultChaosFaultRate   = 0.05
	DefaultChaosSlowLatency = 50 * time.Millisecond
	DefaultChaosSettleGrace = 20 * time.Second
	DefaultChaosTimeout     = 5 * time.Minute
	// DefaultChaosPlacementRequeueAfter is how often the backend evaluates again a cluster
	// that waits for capacity. A fifth of the clusters wait, and each evaluation asks
	// Cluster Service about the cluster and logs every MC's reason: at a second, 200
	// waiting clusters on two replicas saturate this 2-core machine and stretch the run
	// to a quarter of an hour.
	DefaultChaosPlacementRequeueAfter = 5 * time.Second
)

// DefaultChaosOptions is `make chaos`: two backend replicas with leader election off, on
// the emulator, every document seeded with fields hcpsched does not know.
func DefaultChaosOptions() ChaosOptions {
	o := DefaultOptions()
	o.Store, o.Backends, o.SeedExtraFields = StoreEmulator, 2, true
	o.ManagementClusters, o.Clusters, o.Rate = DefaultChaosManagementClusters, DefaultChaosClusters, DefaultChaosRate
	o.Timeout = DefaultChaosTimeout
	o.Label = "chaos"
	o.PlacementRequeueAfter = DefaultChaosPlacementRequeueAfter
	return ChaosOptions{
		Options: o,
		Rate412: DefaultChaosFaultRate, Rate429: DefaultChaosFaultRate, Rate503: DefaultChaosFaultRate / 2,
		SlowRate: DefaultChaosFaultRate, SlowLatency: DefaultChaosSlowLatency,
		ClusterServiceFailureRate: DefaultChaosFaultRate,
		FaultDuration:             DefaultChaosFaultDuration,
		Kills:                     DefaultChaosKills, KillEvery: DefaultChaosKillEvery, Headroom: DefaultChaosHeadroom,
		Race: true, SettleGrace: DefaultChaosSettleGrace,
	}
}

// ShortChaosOptions is the profile `make test` runs: the same faults and the same
// over-demand on a smaller region, with fewer kills over a shorter fault window.
func ShortChaosOptions() ChaosOptions {
	c := DefaultChaosOptions()
	c.ManagementClusters, c.Clusters, c.Rate = 3, 60, 6
	c.FaultDuration, c.Kills, c.KillEvery = 20*time.Second, 3, 5*time.Second
	c.Timeout = 90 * time.Second
	return c
}

// Validate names every unusable option.
func (c ChaosOptions) Validate() error {
	errs := []error{c.Options.Validate()}
	if c.Store != StoreEmulator {
		errs = append(errs, errors.New("chaos injects faults through the emulator: the store must be emulator"))
	}
	for name, r := range map[string]float64{"--rate-412": c.Rate412, "--rate-429": c.Rate429, "--rate-503": c.Rate503, "--slow-rate": c.SlowRate, "--cluster-service-failure-rate": c.ClusterServiceFailureRate} {
		if r < 0 || r > 1 {
			errs = append(errs, fmt.Errorf("%s must be between 0 and 1, got %v", name, r))
		}
	}
	if c.Kills < 0 || c.KillEvery <= 0 {
		errs = append(errs, errors.New("--kills must not be negative and --kill-every must be positive"))
	}
	if c.FaultDuration <= 0 || c.SettleGrace <= 0 {
		errs = append(errs, errors.New("--fault-duration and the settle grace must be positive"))
	}
	if c.Headroom <= 0 {
		errs = append(errs, fmt.Errorf("--headroom must be positive, got %v", c.Headroom))
	}
	// The pin violation needs a second shard, the cordons a second MC to place on; the
	// placed-then-failed cluster is the second cluster.
	if c.ManagementClusters < 2 || c.Clusters < 2 {
		errs = append(errs, errors.New("chaos needs at least 2 management clusters and 2 clusters"))
	}
	return errors.Join(errs...)
}

// Invariant is one checked property and what broke it.
type Invariant struct {
	Name       string
	Violations []string
}

// Passed reports whether nothing broke the invariant.
func (i Invariant) Passed() bool { return len(i.Violations) == 0 }

// ChaosReport is what a chaos run did and what it found.
type ChaosReport struct {
	Invariants []Invariant
	// Injected counts the faults that fired, by kind.
	Injected map[string]int
	Kills    int
	// FaultsOn is how long the faults stayed on.
	FaultsOn time.Duration
	// Misplaced is the cluster Cluster Service was made to put elsewhere than pinned;
	// Failed the one it refused, which the run then marked Failed.
	Misplaced, Failed string
	// Samples is how many times the ceilings were checked; Fullest is, per MC, the
	// highest committed/ceiling over the run.
	Samples int
	Fullest []string
	// FeedPages and FeedErrors are the change-feed pages the checker read and its reads
	// that failed (under the injected faults).
	FeedPages, FeedErrors int
	// Posts is the distribution of create POSTs per cluster.
	Posts string
	// Placed and Waiting count the clusters at the end.
	Placed, Waiting int
	// Disturbances are the cordons, uncordons and shrinks, in order.
	Disturbances []string
	Settled      time.Duration
	LogDir       string
}

// Passed reports whether every invariant held; a report without invariants did not
// check anything and fails.
func (r *ChaosReport) Passed() bool {
	for _, i := range r.Invariants {
		if !i.Passed() {
			return false
		}
	}
	return len(r.Invariants) > 0
}

// Write prints each invariant with PASS or FAIL and the first violations of a FAIL, then
// the summary: samples, the fullest committed/ceiling per MC, POSTs per cluster, faults
// by kind, kills and disturbances.
func (r *ChaosReport) Write(w io.Writer) {
	const shown = 12
	fmt.Fprintln(w)
	for _, inv := range r.Invariants {
		verdict := "PASS"
		if !inv.Passed() {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "%s  %s\n", verdict, inv.Name)
		for i, v := range inv.Violations {
			if i == shown {
				fmt.Fprintf(w, "      ... and %d more\n", len(inv.Violations)-shown)
				break
			}
			fmt.Fprintf(w, "      %s\n", v)
		}
	}
	if len(r.Invariants) == 0 {
		fmt.Fprintln(w, "FAIL  no invariant was checked")
	}
	faults := make([]string, 0, len(r.Injected))
	for _, k := range slices.Sorted(maps.Keys(r.Injected)) {
		faults = append(faults, fmt.Sprintf("%s %d", k, r.Injected[k]))
	}
	fmt.Fprintf(w, "\nsummary\n  samples taken: %d (change-feed pages read %d, failed reads %d)\n  maximum committed/ceiling per management cluster:\n", r.Samples, r.FeedPages, r.FeedErrors)
	for _, l := range r.Fullest {
		fmt.Fprintf(w, "    %s\n", l)
	}
	fmt.Fprintf(w, "  clusters: %d placed, %d waiting for capacity; pin violation on %s; placed then failed: %s\n", r.Placed, r.Waiting, path.Base(r.Misplaced), path.Base(r.Failed))
	fmt.Fprintf(w, "  %s\n", r.Posts)
	fmt.Fprintf(w, "  faults by kind (on for %.1fs): %s\n", r.FaultsOn.Seconds(), strings.Join(faults, ", "))
	fmt.Fprintf(w, "  backend kills: %d\n", r.Kills)
	fmt.Fprintf(w, "  disturbances: %s\n", strings.Join(r.Disturbances, "; "))
	fmt.Fprintf(w, "  settled %.1fs after the first creation; logs in %s\n", r.Settled.Seconds(), r.LogDir)
}

// Chaos runs the pipeline under faults, samples the invariants from the change feeds
// the whole time, lifts the faults once the fault window is over, waits until every
// cluster is placed and observed or waiting for capacity with the right reason, and
// checks the end state. The report is returned even when the run fails part-way, with
// what was sampled until then.
func Chaos(ctx context.Context, c ChaosOptions) (*ChaosReport, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c.Nodes = c.sizedNodes()
	if c.Race && !slices.Contains(c.GoBuildFlags, "-race") {
		c.GoBuildFlags = append(slices.Clone(c.GoBuildFlags), "-race")
	}
	s, err := open(ctx, c.Options)
	if err != nil {
		return nil, err
	}
	defer s.close()
	r := newChaosRun(s, c)
	report, err := r.run(ctx)
	report.LogDir = s.logDir
	return report, err
}

// sizedNodes sizes every MC so that the ceilings add up to about Headroom times the
// clusters' cost: no less when Headroom is above 1, no more when below, so that an
// over-demand run really has too little room.
func (c ChaosOptions) sizedNodes() int {
	if c.Nodes > 0 {
		return c.Nodes
	}
	var cost float64
	for n := 1; n <= c.Clusters; n++ {
		cost += float64(c.mix().Kind(n).SwiftNICs())
	}
	perMC := cost * c.Headroom / float64(c.ManagementClusters) / float64(mcsim.DefaultNodeSwiftNICs)
	if c.Headroom < 1 {
		return max(int(math.Floor(perMC)), 1)
	}
	return int(math.Ceil(perMC))
}

// chaosRun is one chaos run's state beyond the session's.
type chaosRun struct {
	s   *session
	c   ChaosOptions
	cfg placement.Config
	t0  time.Time

	view *feedView
	// watchMu guards watch, which the view's goroutine feeds.
	watchMu sync.Mutex
	watch   *ceilingWatch

	// misplaced and failed are the lowercased resource IDs of the clusters Cluster
	// Service misplaces and refuses.
	misplaced, failed string

	mu           sync.Mutex
	disturbances []string
	cordons      int
	uncordons    int
	shrinks      int
	markedFailed bool
	// nodes is each MC's worker node maximum, by stamp number, once lowered.
	nodes map[int]int
}

func newChaosRun(s *session, c ChaosOptions) *chaosRun {
	return &chaosRun{s: s, c: c, cfg: placement.DefaultConfig(), watch: newCeilingWatch(placement.DefaultConfig()), nodes: map[int]int{}}
}

func (r *chaosRun) since() time.Duration { return time.Since(r.t0) }

func (r *chaosRun) note(format string, args ...any) {
	line := fmt.Sprintf("%.1fs ", r.since().Seconds()) + fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.disturbances = append(r.disturbances, line)
	r.mu.Unlock()
	r.s.progressf("[%6.1fs] %s", r.since().Seconds(), fmt.Sprintf(format, args...))
}

// kind answers for the clusters the run created.
func (r *chaosRun) kind(key string) (frontend.Kind, bool) {
	return r.s.kindOf(key)
}

// sample checks the ceilings against the view as it is now.
func (r *chaosRun) sample() {
	snap := r.view.snapshot(r.since(), r.kind)
	r.watchMu.Lock()
	r.watch.observe(snap)
	r.watchMu.Unlock()
}

// misplacedWait bounds landMisplaced's wait: a kill can leave the cluster's shard with
// no owner until its lease expires, and the runner may kill once more meanwhile.
const misplacedWait = 2 * time.Minute

// landMisplaced creates cluster 1, whose pin Cluster Service ignores, and waits until the
// change feeds show where Cluster Service put it, before any other cluster exists. Cluster
// Service places it without asking whether that MC has room, so it must land while every
// MC has room: created with the others, a kill could hold its create back (its key's
// shard waits for a lease to expire) until placement had filled the MC it lands on, and
// the ceiling check would charge hcpsched with Cluster Service's overbooking. From the
// moment it is seen there, every placement must count it.
func (r *chaosRun) landMisplaced(ctx context.Context) error {
	r.s.progressf("creating %s first, whose pin Cluster Service ignores", path.Base(r.misplaced))
	if err := r.s.createCluster(ctx, 1); err != nil {
		return err
	}
	var landed clusterState
	if err := r.waitViewWithin(ctx, "where Cluster Service put "+path.Base(r.misplaced), misplacedWait, func() bool {
		landed = r.view.snapshot(r.since(), r.kind).clusters[r.misplaced]
		return landed.observed != ""
	}); err != nil {
		return err
	}
	r.note("%s is on %s, not on %s where it was pinned", path.Base(r.misplaced), landed.observed, landed.intended)
	return nil
}

func (r *chaosRun) run(ctx context.Context) (*ChaosReport, error) {
	s, c := r.s, r.c
	report := &ChaosReport{Injected: map[string]int{}}
	r.t0 = time.Now()
	s.began = r.t0
	viewCtx, stopView := context.WithCancel(ctx)
	viewDone := make(chan struct{})
	r.view = newFeedView(s.region.checkerStore, s.o.PollInterval/2, s.region.logger.With("component", "checker"))
	r.view.onSample = r.sample
	go func() {
		defer close(viewDone)
		r.view.Run(viewCtx)
	}()
	stop := func() {
		stopView()
		<-viewDone
	}
	defer stop()
	// Whatever happens from here, the report says what the samples saw.
	defer func() {
		r.watchMu.Lock()
		report.Samples, report.Fullest = r.watch.samples, r.watch.fullestLines()
		r.watchMu.Unlock()
		report.FeedPages, report.FeedErrors, _ = r.view.counts()
		r.mu.Lock()
		report.Disturbances = slices.Clone(r.disturbances)
		r.mu.Unlock()
	}()
	if !r.view.waitCaughtUp(ctx) {
		return report, fmt.Errorf("the checker's change-feed reader never completed a poll: %w", ctx.Err())
	}

	// Cluster Service: a double create shows as two clusters; cluster 1's pin is
	// ignored; cluster 2 is refused, and the run marks it Failed once placed.
	s.region.cs.AcceptDuplicateNames(true)
	for n, target := range map[int]*string{1: &r.misplaced, 2: &r.failed} {
		doc, err := frontend.Cluster(n, false, time.Now())
		if err != nil {
			return report, err
		}
		*target = strings.ToLower(doc.ResourceID)
	}
	report.Misplaced, report.Failed = r.misplaced, r.failed
	s.region.cs.MisplaceOnCreate(path.Base(r.misplaced))
	s.region.cs.RejectCreate(path.Base(r.failed))

	emuFaults, err := c.injectEmulatorFaults(ctx, s.region.emu)
	if err != nil {
		return report, err
	}
	// The fake reads a zero rate as "always": no rate, no fault.
	var csFault string
	if c.ClusterServiceFailureRate > 0 {
		if csFault, err = s.region.cs.InjectFault(fakeclusterservice.Fault{PathPrefix: fakeclusterservice.ClustersPath, Status: 503, Rate: c.ClusterServiceFailureRate}); err != nil {
			return report, err
		}
	}
	injected := time.Now()
	s.progressf("faults on for at least %s: emulator 412 %.0f%%, 429 %.0f%%, 503 %.0f%%, +%s on %.0f%%; Cluster Service 503 %.0f%%; %d backend kills, one every %s",
		c.FaultDuration, 100*c.Rate412, 100*c.Rate429, 100*c.Rate503, c.SlowLatency, 100*c.SlowRate, 100*c.ClusterServiceFailureRate, c.Kills, c.KillEvery)

	bgCtx, stopBackground := context.WithCancel(ctx)
	var bg sync.WaitGroup
	// Every goroutine of the run has ended when Chaos returns, on every path, so none
	// writes progress into a writer the caller is already reading.
	defer func() {
		stopBackground()
		bg.Wait()
	}()
	bgErrs := make(chan error, 4)
	goBackground := func(f func(context.Context) error) {
		bg.Go(func() {
			if err := f(bgCtx); err != nil && bgCtx.Err() == nil {
				bgErrs <- err
			}
		})
	}
	// The MC cordoned from the start takes no cluster until it is shrunk and uncordoned.
	if err := r.cordon(ctx, c.ManagementClusters, true); err != nil {
		return report, err
	}
	if err := r.landMisplaced(ctx); err != nil {
		return report, err
	}
	// The fault window, the kills and the disturbances count from the first creation of
	// the rest, as they did before cluster 1 was created alone: started with cluster 1,
	// they found fewer clusters in flight, and Cluster Service's 503s hit as few as none.
	faultsOn := time.Now()
	killed := make(chan error, 1)
	bg.Go(func() { killed <- s.killBackends(bgCtx, c.Kills, c.KillEvery) })
	disturbed := make(chan error, 1)
	bg.Go(func() { disturbed <- r.disturb(bgCtx, faultsOn) })
	goBackground(r.failPlaced)
	seedCtx, stopSeeding := context.WithCancel(bgCtx)
	defer stopSeeding()
	seeded := make(chan error, 1)
	bg.Go(func() { seeded <- r.seedServiceProviderClusters(seedCtx) })

	if err := s.createClusters(ctx, 2); err != nil {
		return report, err
	}
	if err := <-killed; err != nil {
		return report, err
	}
	for _, p := range s.procs {
		report.Kills += p.killCount()
	}
	if err := <-disturbed; err != nil {
		return report, err
	}
	if !sleepCtx(ctx, time.Until(faultsOn.Add(c.FaultDuration))) {
		return report, ctx.Err()
	}

	// Lift the faults, counting what fired.
	statuses, err := s.region.emu.Faults(ctx)
	if err != nil {
		return report, err
	}
	for _, f := range statuses {
		if kind, ours := emuFaults[f.ID]; ours {
			report.Injected[kind] += f.Hits
		}
	}
	for _, f := range s.region.cs.Faults() {
		if csFault != "" && f.ID == csFault {
			report.Injected["Cluster Service 503"] += f.Hits
		}
	}
	if err := s.region.emu.ClearFaults(ctx); err != nil {
		return report, err
	}
	s.region.cs.ClearFaults()
	report.FaultsOn = time.Since(injected)
	s.progressf("[%6.1fs] faults off after %.1fs; waiting for every cluster to be placed and observed or to wait for capacity", r.since().Seconds(), report.FaultsOn.Seconds())

	settleErr := r.settle(ctx)
	report.Settled = r.since()
	stopSeeding()
	if err := <-seeded; err != nil && !errors.Is(err, context.Canceled) {
		return report, err
	}
	stopBackground()
	bg.Wait()
	close(bgErrs)
	if err := errors.Join(collect(bgErrs)...); err != nil {
		return report, err
	}

	end, err := r.checkEnd(ctx)
	if err != nil {
		return report, err
	}
	// A last sample of the settled store, straight from it rather than the feeds.
	r.watchMu.Lock()
	r.watch.observe(end.view.snapshot(r.since(), r.kind))
	ceilings := r.watch.invariant()
	r.watchMu.Unlock()
	stop()

	log := s.region.cs.Requests()
	p := countPosts(log)
	report.Posts = p.distribution()
	report.Placed, report.Waiting = len(end.placed), end.waiting
	report.Invariants = append([]Invariant{ceilings, p.invariant(end.placed, []string{r.failed})}, end.invariants...)
	report.Invariants = append(report.Invariants, r.exercised(report, p, end))
	if settleErr != nil {
		report.Invariants = append(report.Invariants, Invariant{Name: "the region settles", Violations: []string{settleErr.Error()}})
	}
	return report, nil
}

// injectEmulatorFaults turns the rate faults on and returns their kinds by fault ID.
func (c ChaosOptions) injectEmulatorFaults(ctx context.Context, emu *emulator.Emulator) (map[string]string, error) {
	docs := "/dbs/" // document requests only: the control and account endpoints stay up
	faults := []struct {
		kind  string
		fault emulator.Fault
	}{
		{"emulator 412", emulator.Fault{Status: 412, Rate: c.Rate412, IfMatchOnly: true, PathPrefix: docs}},
		{"emulator 429", emulator.Fault{Status: 429, Rate: c.Rate429, RetryAfter: 10 * time.Millisecond, PathPrefix: docs}},
		{"emulator 503", emulator.Fault{Status: 503, Rate: c.Rate503, PathPrefix: docs}},
		{"emulator slow", emulator.Fault{Latency: c.SlowLatency, Rate: c.SlowRate, PathPrefix: docs}},
	}
	ids := map[string]string{}
	for _, f := range faults {
		if f.fault.Rate == 0 {
			continue
		}
		id, err := emu.InjectFault(ctx, f.fault)
		if err != nil {
			return nil, fmt.Errorf("injecting %s: %w", f.kind, err)
		}
		ids[id] = f.kind
	}
	return ids, nil
}

// killBackends kills a replica every interval, replicas in turn, and restarts it at once.
func (s *session) killBackends(ctx context.Context, kills int, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for i := range kills {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		p := s.procs[i%len(s.procs)]
		p.kill()
		s.progressf("[%6.1fs] killed %s (SIGKILL); restarting it", time.Since(s.began).Seconds(), p.name)
		if err := p.start(ctx); err != nil {
			return fmt.Errorf("restarting %s: %w", p.name, err)
		}
	}
	return nil
}
