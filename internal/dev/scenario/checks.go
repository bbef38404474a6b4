package scenario

import (
	"bufio"
	"context"
	"debug/buildinfo"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// load fills the view from a listing of the store instead of its change feeds: the end
// state as the store holds it.
func (v *feedView) load(ctx context.Context) error {
	for _, src := range []struct {
		c     database.Container
		types []string
	}{
		{v.resources, []string{api.ClusterResourceType, api.ServiceProviderClusterResourceType}},
		{v.fleet, []string{api.ManagementClusterResourceType, api.ManagementClusterSchedulingResourceType}},
	} {
		for _, t := range src.types {
			var items []database.Item
			for item, err := range src.c.List(ctx, database.ListOptions{ResourceType: t}) {
				if err != nil {
					return fmt.Errorf("listing %s: %w", t, err)
				}
				items = append(items, item)
			}
			v.apply(items)
		}
	}
	return nil
}

// endState is what the settled region's store, Cluster Service and logs say.
type endState struct {
	view *feedView
	// placed are the clusters with a spec, failed cluster aside.
	placed     []string
	waiting    int
	invariants []Invariant
	logs       logScan
	// raceBuilt says whether the backend binary was built with the race detector.
	raceBuilt bool
}

// endInputs are what the end-state check must know of the run.
type endInputs struct {
	// misplaced is the cluster Cluster Service put elsewhere than pinned, failed the one
	// it refused; lowercased resource IDs, or empty.
	misplaced, failed string
	// created are the run's clusters and kind their kinds.
	created []string
	kind    func(key string) (frontend.Kind, bool)
}

// checkEnd reads the settled region straight from the store and Cluster Service.
func (r *chaosRun) checkEnd(ctx context.Context) (endState, error) {
	return r.s.checkEndState(ctx, endInputs{misplaced: r.misplaced, failed: r.failed, created: slices.Collect(maps.Keys(r.s.obs.createdAt())), kind: r.kind}, r.cfg)
}

func (s *session) checkEndState(ctx context.Context, in endInputs, cfg placement.Config) (endState, error) {
	end := endState{view: newFeedView(s.region.store, s.o.PollInterval, s.region.logger)}
	if err := end.view.load(ctx); err != nil {
		return end, err
	}
	snap := end.view.snapshot(0, in.kind)
	candidates := end.view.candidates()
	mcs := make([]*api.ManagementCluster, 0, len(candidates))
	for _, c := range candidates {
		mcs = append(mcs, c.ManagementCluster)
	}
	inCS, err := s.clustersInClusterService(mcs)
	if err != nil {
		return end, err
	}
	created := slices.Sorted(slices.Values(in.created))

	once := Invariant{Name: "every placed cluster is in Cluster Service once; a waiting or failed one is not in it at all"}
	statusIsSpec := Invariant{Name: "status equals spec, except the injected pin violation, which backend_cluster_info reports as a mismatch"}
	waiting := Invariant{Name: "every cluster that cannot fit waits with CapacityAvailable=False, reason InsufficientCapacity, and placement finds room for none of them"}
	lookup := func(id string) (placement.Cluster, bool) {
		c, ok := snap.clusters[strings.ToLower(id)]
		return c.placementCluster(id), ok && c.known
	}
	for _, key := range created {
		c := snap.clusters[key]
		n := len(inCS[key])
		switch {
		case key == in.failed:
			if n != 0 {
				once.Violations = append(once.Violations, fmt.Sprintf("%s, which Cluster Service refused, is %d times in it", key, n))
			}
		case c.intended != "":
			end.placed = append(end.placed, key)
			if n != 1 {
				once.Violations = append(once.Violations, fmt.Sprintf("%s is placed and %d times in Cluster Service", key, n))
			}
			spec, status := strings.ToLower(c.intended), strings.ToLower(c.observed)
			switch {
			case key == in.misplaced && status == spec:
				statusIsSpec.Violations = append(statusIsSpec.Violations, fmt.Sprintf("%s was misplaced by Cluster Service but its status says %s, its spec", key, status))
			case key != in.misplaced && status != spec:
				statusIsSpec.Violations = append(statusIsSpec.Violations, fmt.Sprintf("%s: spec %s, status %s", key, spec, status))
			}
		default:
			end.waiting++
			if n != 0 {
				once.Violations = append(once.Violations, fmt.Sprintf("%s has no spec but is %d times in Cluster Service", key, n))
			}
			switch cond := c.capacity; {
			case cond == nil:
				waiting.Violations = append(waiting.Violations, fmt.Sprintf("%s has no spec and no CapacityAvailable condition", key))
			case cond.Status != api.ConditionFalse || cond.Reason != placement.ConditionReasonInsufficientCapacity:
				waiting.Violations = append(waiting.Violations, fmt.Sprintf("%s waits with CapacityAvailable %s, reason %s: %s", key, cond.Status, cond.Reason, cond.Message))
			}
			d := placement.Decide(c.placementCluster(key), candidates, cfg, lookup, time.Now())
			if d.Outcome != placement.OutcomeCapacityExhausted {
				waiting.Violations = append(waiting.Violations, fmt.Sprintf("%s waits, but placement's outcome for it now is %s: %s", key, d.Outcome, d.Message()))
			}
		}
	}
	if in.misplaced != "" {
		statusIsSpec.Violations = append(statusIsSpec.Violations, s.mismatchReported(ctx, in.misplaced)...)
	}

	noReservation := Invariant{Name: "no reservation remains after settling"}
	for _, mc := range snap.mcs {
		for _, res := range mc.reservations {
			why := "not a cluster of the run"
			if c, ok := snap.clusters[strings.ToLower(res)]; ok {
				why = fmt.Sprintf("spec %q, status %q, ended %v", path.Base(path.Dir(path.Dir(c.intended))), path.Base(path.Dir(path.Dir(c.observed))), c.ended)
			}
			noReservation.Violations = append(noReservation.Violations, fmt.Sprintf("%s still reserves %s (%s)", mc.id, res, why))
		}
	}

	s.seededMu.Lock()
	seeded := slices.Clone(s.seeded)
	s.seededMu.Unlock()
	noFieldLost := Invariant{Name: fmt.Sprintf("no document lost a field another component wrote (%d seeded fields: %s)", len(seeded), kindsLine(seededKinds(seeded)))}
	if noFieldLost.Violations, err = lostFields(ctx, s.region.store, seeded); err != nil {
		return end, err
	}

	if end.logs, err = scanLogs(s.logDir); err != nil {
		return end, err
	}
	noPanic := Invariant{Name: fmt.Sprintf("no panic in the logs of any process (%d logs read)", end.logs.files), Violations: end.logs.panics}
	noRace := Invariant{Name: fmt.Sprintf("no data race reported by any process (%d logs read)", end.logs.files), Violations: end.logs.races}
	if s.backendB != "" {
		if end.raceBuilt, err = raceBuilt(s.backendB); err != nil {
			return end, err
		}
	}
	end.invariants = []Invariant{once, statusIsSpec, waiting, noReservation, noFieldLost, noPanic, noRace}
	return end, nil
}

func kindsLine(kinds map[string]int) string {
	parts := make([]string, 0, len(kinds))
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range kinds {
			if !yield(k) {
				return
			}
		}
	}) {
		parts = append(parts, fmt.Sprintf("%s %d", k, kinds[k]))
	}
	return strings.Join(parts, ", ")
}

// exercised fails the run when something the checks rely on did not happen: a check of
// nothing passes whatever the code does.
func (r *chaosRun) exercised(report *ChaosReport, p posts, end endState) Invariant {
	r.watchMu.Lock()
	samples := r.watch.samples
	r.watchMu.Unlock()
	r.mu.Lock()
	cordons, uncordons, shrinks, failed := r.cordons, r.uncordons, r.shrinks, r.markedFailed
	r.mu.Unlock()
	pages, _, malformed := r.view.counts()
	s := r.s
	s.seededMu.Lock()
	kinds := seededKinds(s.seeded)
	s.seededMu.Unlock()
	checks := []struct {
		ok   bool
		what string
	}{
		{samples > 0 && pages > 0, fmt.Sprintf("samples taken from the change feeds: %d (%d pages)", samples, pages)},
		{malformed == 0, fmt.Sprintf("documents the checker could not decode: %d", malformed)},
		{len(s.obs.createdAt()) == s.o.Clusters, fmt.Sprintf("clusters created: %d of %d", len(s.obs.createdAt()), s.o.Clusters)},
		{len(end.placed) > 0, fmt.Sprintf("clusters placed: %d", len(end.placed))},
		{r.c.Headroom >= 1 || end.waiting > 0, fmt.Sprintf("clusters waiting for capacity with demand at %.2f times the ceilings: %d", 1/r.c.Headroom, end.waiting)},
		{p.total > 0 && len(p.created) > 0, fmt.Sprintf("create POSTs in Cluster Service's request log: %d, for %d clusters created", p.total, len(p.created))},
		{report.Kills == r.c.Kills, fmt.Sprintf("backend kills: %d of %d", report.Kills, r.c.Kills)},
		{report.FaultsOn >= r.c.FaultDuration, fmt.Sprintf("faults on for %.1fs, at least %s", report.FaultsOn.Seconds(), r.c.FaultDuration)},
		{cordons >= 2 && uncordons >= 2 && shrinks >= 1, fmt.Sprintf("cordons %d, uncordons %d, shrinks %d (at least 2, 2 and 1)", cordons, uncordons, shrinks)},
		{failed, "the refused cluster was marked Failed after placement"},
		{end.logs.files > len(s.procs), fmt.Sprintf("logs read: %d, for %d backend replicas and the region", end.logs.files, len(s.procs))},
		{!r.c.Race || end.raceBuilt, "the backend was built with the race detector"},
	}
	for kind, rate := range map[string]float64{
		"emulator 412": r.c.Rate412, "emulator 429": r.c.Rate429, "emulator 503": r.c.Rate503, "emulator slow": r.c.SlowRate,
		"Cluster Service 503": r.c.ClusterServiceFailureRate,
	} {
		if rate > 0 {
			checks = append(checks, struct {
				ok   bool
				what string
			}{report.Injected[kind] > 0, fmt.Sprintf("%s faults hit: %d", kind, report.Injected[kind])})
		}
	}
	if s.o.SeedExtraFields {
		for _, kind := range []string{clusterSeeds.kind, mcSeeds.kind, schedulingSeeds.kind, spcSeeds.kind, spcSeeds.kind + " ARO-HCP field", "condition element", "foreign condition"} {
			checks = append(checks, struct {
				ok   bool
				what string
			}{kinds[kind] > 0, fmt.Sprintf("seeded %s fields: %d", kind, kinds[kind])})
		}
	}
	inv := Invariant{Name: fmt.Sprintf("the run exercised everything the checks rely on (%d counts, each asserted non-zero)", len(checks))}
	slices.SortStableFunc(checks, func(a, b struct {
		ok   bool
		what string
	}) int {
		return strings.Compare(a.what, b.what)
	})
	for _, c := range checks {
		if !c.ok {
			inv.Violations = append(inv.Violations, c.what)
		}
	}
	return inv
}

// What a Go panic, a recovered controller panic and a race detector report leave in a log.
var (
	panicPattern = regexp.MustCompile(`(?i)\bpanic\b|goroutine \d+ \[running\]`)
	racePattern  = regexp.MustCompile(`WARNING: DATA RACE`)
)

// logScan is what the processes' logs show.
type logScan struct {
	files         int
	panics, races []string
}

// scanLogs reads every log of the run: each backend replica's output over all its lives
// (the race detector writes its reports to standard error, which goes there), the
// region's and the emulator's.
func scanLogs(dir string) (logScan, error) {
	var out logScan
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return out, err
	}
	for _, p := range logs {
		f, err := os.Open(p)
		if err != nil {
			return out, err
		}
		out.files++
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for line := 1; sc.Scan(); line++ {
			text := sc.Text()
			where := fmt.Sprintf("%s:%d: %.200s", filepath.Base(p), line, text)
			if racePattern.MatchString(text) {
				out.races = append(out.races, where)
			} else if panicPattern.MatchString(text) {
				out.panics = append(out.panics, where)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return out, fmt.Errorf("reading %s: %w", p, err)
		}
	}
	return out, nil
}

// raceBuilt reads from a binary's build information whether it has the race detector.
func raceBuilt(bin string) (bool, error) {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return false, fmt.Errorf("reading the build information of %s: %w", bin, err)
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true", nil
		}
	}
	return false, nil
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
			if rid, ok := fakeclusterservice.AzureResourceID(c); ok {
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
