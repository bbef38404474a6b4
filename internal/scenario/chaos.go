package scenario

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	clusterservicefake "github.com/hcpsched/hcpsched/internal/clusterservice/fake"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/emulator"
	"github.com/hcpsched/hcpsched/internal/localregion"
	"github.com/hcpsched/hcpsched/internal/mcsim"
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
	// Kills is how many times a backend replica is killed (SIGKILL) and restarted,
	// one every KillEvery, replicas in turn.
	Kills     int
	KillEvery time.Duration
	// Headroom sizes the MCs: their ceilings add up to Headroom times what the clusters
	// cost, tight enough that a double commit would break a ceiling.
	Headroom float64
}

// Defaults of `make chaos`, and of the short profile `make test` runs.
const (
	DefaultChaosManagementClusters = 10
	DefaultChaosClusters           = 600
	DefaultChaosRate               = 25.0
	DefaultChaosKills              = 8
	DefaultChaosKillEvery          = 3 * time.Second
	DefaultChaosHeadroom           = 1.25
	DefaultChaosFaultRate          = 0.05
	DefaultChaosSlowLatency        = 50 * time.Millisecond
	DefaultChaosTimeout            = 5 * time.Minute
)

// DefaultChaosOptions is `make chaos`: two backend replicas with leader election off, on
// the emulator, every document seeded with fields hcpsched does not know.
func DefaultChaosOptions() ChaosOptions {
	o := DefaultOptions()
	o.Store, o.Backends, o.SeedExtraFields = StoreEmulator, 2, true
	o.ManagementClusters, o.Clusters, o.Rate = DefaultChaosManagementClusters, DefaultChaosClusters, DefaultChaosRate
	o.Timeout = DefaultChaosTimeout
	o.Label = "chaos"
	return ChaosOptions{
		Options: o,
		Rate412: DefaultChaosFaultRate, Rate429: DefaultChaosFaultRate, Rate503: DefaultChaosFaultRate / 2,
		SlowRate: DefaultChaosFaultRate, SlowLatency: DefaultChaosSlowLatency,
		ClusterServiceFailureRate: DefaultChaosFaultRate,
		Kills:                     DefaultChaosKills, KillEvery: DefaultChaosKillEvery, Headroom: DefaultChaosHeadroom,
	}
}

// ShortChaosOptions is the profile `make test` runs: the same faults on a smaller region,
// within two minutes.
func ShortChaosOptions() ChaosOptions {
	c := DefaultChaosOptions()
	c.ManagementClusters, c.Clusters, c.Rate = 4, 60, 20
	c.Kills, c.KillEvery = 2, 1500*time.Millisecond
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
	if c.Headroom < 1 {
		errs = append(errs, fmt.Errorf("--headroom must be at least 1, got %v", c.Headroom))
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
	// Misplaced is the cluster Cluster Service was made to put elsewhere than pinned.
	Misplaced string
	Settled   time.Duration
	LogDir    string
}

// Passed reports whether every invariant held.
func (r *ChaosReport) Passed() bool {
	for _, i := range r.Invariants {
		if !i.Passed() {
			return false
		}
	}
	return true
}

// Write prints each invariant with PASS or FAIL, the first violations of a FAIL, and what
// was injected.
func (r *ChaosReport) Write(w io.Writer) {
	kinds := slices.Sorted(func(yield func(string) bool) {
		for k := range r.Injected {
			if !yield(k) {
				return
			}
		}
	})
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, r.Injected[k]))
	}
	fmt.Fprintf(w, "\ninjected: %s; backend kills %d; pin violation on %s\n", strings.Join(parts, ", "), r.Kills, r.Misplaced)
	fmt.Fprintf(w, "settled %.1fs after the first creation; logs in %s\n\n", r.Settled.Seconds(), r.LogDir)
	const shown = 5
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
}

// Chaos runs the pipeline under faults until every cluster is created and placed and
// every kill done, lifts the faults, waits for the region to settle and checks the invariants.
func Chaos(ctx context.Context, c ChaosOptions) (*ChaosReport, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c.Nodes = c.tightNodes()
	s, err := open(ctx, c.Options)
	if err != nil {
		return nil, err
	}
	defer s.close()
	report := &ChaosReport{Injected: map[string]int{}, LogDir: s.logDir}

	// The pin violation: Cluster Service puts the first cluster elsewhere than pinned.
	first, err := localregion.NewClusterDocument(1, false, time.Now())
	if err != nil {
		return nil, err
	}
	report.Misplaced = strings.ToLower(first.ResourceID)
	s.region.cs.MisplaceOnCreate(path.Base(first.ResourceID))

	emuFaults, err := c.injectEmulatorFaults(ctx, s.region.emu)
	if err != nil {
		return nil, err
	}
	// The fake reads a zero rate as "always": no rate, no fault.
	var csFault string
	if c.ClusterServiceFailureRate > 0 {
		if csFault, err = s.region.cs.InjectFault(clusterservicefake.Fault{PathPrefix: clusterservicefake.ClustersPath, Status: 503, Rate: c.ClusterServiceFailureRate}); err != nil {
			return nil, err
		}
	}
	s.progressf("faults on: emulator 412 %.0f%%, 429 %.0f%%, 503 %.0f%%, +%s on %.0f%%; Cluster Service 503 %.0f%%; %d backend kills",
		100*c.Rate412, 100*c.Rate429, 100*c.Rate503, c.SlowLatency, 100*c.SlowRate, 100*c.ClusterServiceFailureRate, c.Kills)

	killed := make(chan error, 1)
	killCtx, stopKilling := context.WithCancel(ctx)
	defer stopKilling()
	go func() { killed <- s.killBackends(killCtx, c.Kills, c.KillEvery) }()
	if err := s.createClusters(ctx); err != nil {
		return nil, err
	}
	if err := <-killed; err != nil {
		return nil, err
	}
	for _, p := range s.procs {
		report.Kills += p.killCount()
	}
	// Every placement happens under the faults.
	if _, err := s.waitUntil(ctx, "placed under faults", func(p progress) bool { return p.placed == c.Clusters }); err != nil {
		return nil, err
	}

	// Lift the faults, counting what fired.
	statuses, err := s.region.emu.Faults(ctx)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	s.region.cs.ClearFaults()
	s.progressf("faults off; waiting for the region to settle")

	if _, err := s.waitUntil(ctx, "settled", func(p progress) bool { return p.settled(c.Clusters) }); err != nil {
		return nil, err
	}
	report.Settled = time.Since(s.began)
	report.Invariants, err = s.checkInvariants(ctx, report.Misplaced)
	if err != nil {
		return nil, err
	}
	return report, nil
}

// tightNodes sizes every MC so that the ceilings add up to Headroom times the clusters'
// cost.
func (c ChaosOptions) tightNodes() int {
	if c.Nodes > 0 {
		return c.Nodes
	}
	var cost float64
	for n := 1; n <= c.Clusters; n++ {
		cost += float64(clusterCost(c.SingleReplicaEvery > 0 && n%c.SingleReplicaEvery == 0))
	}
	perMC := cost * c.Headroom / float64(c.ManagementClusters)
	return int(perMC/float64(mcsim.DefaultNodeSwiftNICs)) + 1
}

// clusterCost is a cluster's swift NICs as placement counts them.
func clusterCost(singleReplica bool) int64 {
	nics := placement.DefaultConfig().Resources[0]
	if singleReplica {
		return nics.SingleReplica.Value()
	}
	return nics.HA.Value()
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

// panicPattern matches what a Go panic or a recovered controller panic leaves in a log.
var panicPattern = regexp.MustCompile(`(?i)\bpanic\b|goroutine \d+ \[running\]`)

// checkInvariants reads the settled region straight from the store and Cluster Service.
func (s *session) checkInvariants(ctx context.Context, misplaced string) ([]Invariant, error) {
	resources := s.region.store.Container(api.ResourcesContainer)
	fleet := s.region.store.Container(api.FleetContainer)
	spcs, err := database.ListDecoded[api.ServiceProviderClusterProperties](ctx, resources, api.ServiceProviderClusterResourceType)
	if err != nil {
		return nil, err
	}
	mcs, err := database.ListDecoded[api.ManagementClusterProperties](ctx, fleet, api.ManagementClusterResourceType)
	if err != nil {
		return nil, err
	}
	schedulings, err := database.ListDecoded[api.ManagementClusterSchedulingProperties](ctx, fleet, api.ManagementClusterSchedulingResourceType)
	if err != nil {
		return nil, err
	}
	created := s.obs.createdAt()

	// Every cluster: one SPC with a spec, and one cluster in Cluster Service.
	oneSpec := Invariant{Name: "every cluster has exactly one spec (one SPC with spec.managementClusterResourceID, one Cluster Service cluster)"}
	specs := map[string][]string{}
	for _, spc := range spcs {
		rid, err := spc.ParsedResourceID()
		if err != nil {
			return nil, err
		}
		if mc := spc.Properties.IntendedManagementCluster(); mc != "" {
			specs[rid.Parent().Key()] = append(specs[rid.Parent().Key()], mc)
		}
	}
	inCS, err := s.clustersInClusterService(mcs)
	if err != nil {
		return nil, err
	}
	for cluster := range created {
		if n := len(specs[cluster]); n != 1 {
			oneSpec.Violations = append(oneSpec.Violations, fmt.Sprintf("%s has %d specs", cluster, n))
		}
		if n := len(inCS[cluster]); n != 1 {
			oneSpec.Violations = append(oneSpec.Violations, fmt.Sprintf("%s is %d times in Cluster Service", cluster, n))
		}
	}

	// Status equals spec, but for the injected violation, which the metrics report.
	statusIsSpec := Invariant{Name: "status equals spec, except the injected pin violation, which backend_cluster_info reports as a mismatch"}
	for _, spc := range spcs {
		rid, _ := spc.ParsedResourceID()
		cluster := rid.Parent().Key()
		if _, ours := created[cluster]; !ours {
			continue
		}
		spec, status := spc.Properties.IntendedManagementCluster(), strings.ToLower(spc.Properties.ObservedManagementCluster())
		switch {
		case cluster == misplaced && status == spec:
			statusIsSpec.Violations = append(statusIsSpec.Violations, fmt.Sprintf("%s was misplaced by Cluster Service but its status says %s, its spec", cluster, status))
		case cluster != misplaced && status != spec:
			statusIsSpec.Violations = append(statusIsSpec.Violations, fmt.Sprintf("%s: spec %s, status %s", cluster, spec, status))
		}
	}
	statusIsSpec.Violations = append(statusIsSpec.Violations, s.mismatchReported(ctx, misplaced)...)

	// No MC committed past its ceiling by placement: the clusters whose spec names it.
	ceilings := Invariant{Name: "no management cluster is committed past its scale ceiling by placement"}
	committed := map[string]int64{}
	var fullest struct{ committed, ceiling int64 }
	for cluster, mcsOf := range specs {
		if _, ours := created[cluster]; ours && len(mcsOf) > 0 {
			committed[mcsOf[0]] += clusterCost(s.isSingleReplica(cluster))
		}
	}
	for _, sched := range schedulings {
		rid, _ := sched.ParsedResourceID()
		mc := rid.Parent().Key()
		ceiling, ok := swiftNICCeiling(sched)
		if !ok {
			ceilings.Violations = append(ceilings.Violations, fmt.Sprintf("%s has no swift NIC ceiling", mc))
			continue
		}
		if committed[mc] > ceiling {
			ceilings.Violations = append(ceilings.Violations, fmt.Sprintf("%s: %d swift NICs committed, ceiling %d", mc, committed[mc], ceiling))
		}
		if fullest.ceiling == 0 || committed[mc]*fullest.ceiling > fullest.committed*ceiling {
			fullest.committed, fullest.ceiling = committed[mc], ceiling
		}
	}
	ceilings.Name += fmt.Sprintf(" (fullest: %d of %d swift NICs)", fullest.committed, fullest.ceiling)

	noReservation := Invariant{Name: "no reservation remains after settling"}
	for _, sched := range schedulings {
		if st := sched.Properties.Status; st != nil && len(st.PendingAssignedClusters) > 0 {
			noReservation.Violations = append(noReservation.Violations, fmt.Sprintf("%s still reserves %v", sched.ResourceID, st.PendingAssignedClusters))
		}
	}

	noFieldLost := Invariant{Name: fmt.Sprintf("no document lost a field it had at the start (%d seeded fields)", len(s.seeded))}
	if noFieldLost.Violations, err = lostFields(ctx, s.region.store, s.seeded); err != nil {
		return nil, err
	}
	if len(s.seeded) == 0 {
		noFieldLost.Violations = append(noFieldLost.Violations, "nothing was seeded")
	}

	noPanic := Invariant{Name: "no panic in any log"}
	if noPanic.Violations, err = panicsInLogs(s.logDir); err != nil {
		return nil, err
	}
	return []Invariant{oneSpec, statusIsSpec, ceilings, noReservation, noFieldLost, noPanic}, nil
}

// isSingleReplica is whether the run created the cluster single-replica.
func (s *session) isSingleReplica(cluster string) bool {
	s.seededMu.Lock()
	defer s.seededMu.Unlock()
	return s.singleReplica[cluster]
}

// clustersInClusterService lists, by lowercased Azure resource ID, the Cluster Service
// clusters on every MC's shard.
func (s *session) clustersInClusterService(mcs []*api.ManagementCluster) (map[string][]string, error) {
	out := map[string][]string{}
	for _, mc := range mcs {
		st := mc.Properties.Status
		if st == nil || st.ClusterServiceProvisionShardID == "" {
			continue
		}
		shard, err := clusterservice.ParseShardHREF(st.ClusterServiceProvisionShardID)
		if err != nil {
			return nil, err
		}
		clusters, err := s.region.cs.ClustersOnShard(shard)
		if err != nil {
			return nil, err
		}
		for _, c := range clusters {
			if rid, ok := mcsim.AzureResourceID(c); ok {
				out[strings.ToLower(rid)] = append(out[strings.ToLower(rid)], c.ID())
			}
		}
	}
	return out, nil
}

// mismatchReported checks that every live replica's backend_cluster_info reports the
// misplaced cluster, and only it, as a mismatch.
func (s *session) mismatchReported(ctx context.Context, misplaced string) []string {
	var problems []string
	for _, p := range s.procs {
		c, err := p.counters(ctx)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", p.name, err))
			continue
		}
		if !slices.Equal(c.mismatched, []string{misplaced}) {
			problems = append(problems, fmt.Sprintf("%s reports mismatches %v, want [%s]", p.name, c.mismatched, misplaced))
		}
		if c.panics > 0 {
			problems = append(problems, fmt.Sprintf("%s counted %v controller panics", p.name, c.panics))
		}
	}
	return problems
}

func swiftNICCeiling(s *api.ManagementClusterScheduling) (int64, bool) {
	st := s.Properties.Status
	if st == nil || st.ScaleCeiling == nil {
		return 0, false
	}
	q, err := placement.ParseQuantity(st.ScaleCeiling.Capacity[api.SwiftNIC])
	if err != nil {
		return 0, false
	}
	return q.Value(), true
}

// panicsInLogs returns each log line that shows a panic.
func panicsInLogs(dir string) ([]string, error) {
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, err
	}
	var found []string
	for _, path := range logs {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for line := 1; sc.Scan(); line++ {
			if panicPattern.MatchString(sc.Text()) {
				found = append(found, fmt.Sprintf("%s:%d: %.200s", filepath.Base(path), line, sc.Text()))
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
	}
	return found, nil
}
