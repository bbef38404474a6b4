package scenario

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/localregion"
	"github.com/hcpsched/hcpsched/internal/dev/mcsim"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// How long the run waits for what it changed to show in its own view of the feeds, and
// for placements in flight onto a cordoned MC to land before it is shrunk.
const (
	viewWait     = 30 * time.Second
	quiesceWait  = 10 * time.Second
	failPollWait = 200 * time.Millisecond
	seedPollWait = 500 * time.Millisecond
)

func mcOf(stamp int) *api.ResourceID { return api.ManagementClusterResourceID(strconv.Itoa(stamp)) }

// update applies mutate to a fresh read of a document and writes it back under If-Match,
// again from a fresh read whenever the write fails (see retryWrite). mutate returns false
// when there is nothing to change.
func update[P any](ctx context.Context, c database.Container, rid *api.ResourceID, pk string, mutate func(*api.Document[P]) bool) error {
	err := retryWrite(ctx, func() error {
		doc, err := database.Get[P](ctx, c, pk, rid.String())
		if err != nil || !mutate(doc) {
			return err
		}
		_, err = database.Replace(ctx, c, doc)
		return err
	})
	if err != nil {
		return fmt.Errorf("updating %s: %w", rid, err)
	}
	return nil
}

// cordon sets an MC's scheduling policy as an operator would, and waits until the run's
// view of the feeds shows it.
func (r *chaosRun) cordon(ctx context.Context, stamp int, cordoned bool) error {
	mc := mcOf(stamp)
	policy := api.Schedulable
	if cordoned {
		policy = api.Unschedulable
	}
	pk, err := api.FleetPartitionKey(mc)
	if err != nil {
		return err
	}
	err = update(ctx, r.s.region.store.Container(api.FleetContainer), mc, pk, func(d *api.ManagementCluster) bool {
		if d.Properties.Spec == nil {
			d.Properties.Spec = &api.ManagementClusterSpec{}
		}
		if d.Properties.Spec.SchedulingPolicy == policy {
			return false
		}
		d.Properties.Spec.SchedulingPolicy = policy
		return true
	})
	if err != nil {
		return err
	}
	if err := r.waitView(ctx, fmt.Sprintf("stamp %d %s", stamp, policy), func() bool {
		doc := r.view.managementCluster(mc.Key())
		return doc != nil && doc.Properties.Spec != nil && doc.Properties.Spec.SchedulingPolicy == policy
	}); err != nil {
		return err
	}
	r.mu.Lock()
	if cordoned {
		r.cordons++
	} else {
		r.uncordons++
	}
	r.mu.Unlock()
	r.note("stamp %d %s", stamp, map[bool]string{true: "cordoned", false: "uncordoned"}[cordoned])
	return nil
}

// waitView polls the run's view until done holds, for at most viewWait.
func (r *chaosRun) waitView(ctx context.Context, what string, done func() bool) error {
	return r.waitViewWithin(ctx, what, viewWait, done)
}

// waitViewWithin is waitView with a limit of its own.
func (r *chaosRun) waitViewWithin(ctx context.Context, what string, limit time.Duration, done func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for !done() {
		if !sleepCtx(ctx, r.view.interval) {
			return fmt.Errorf("the change feeds did not show %s within %s", what, limit)
		}
	}
	return nil
}

// disturb cordons, uncordons and shrinks MCs at fixed points of the fault window. The
// last MC is cordoned from the start (by the caller); stamp 1 is cordoned early, shrunk
// as far as what it holds allows and uncordoned; then the last is shrunk and uncordoned,
// and stamp 2 is cordoned and uncordoned once every MC is full.
func (r *chaosRun) disturb(ctx context.Context, faultsOn time.Time) error {
	at := func(fraction float64) bool {
		return sleepCtx(ctx, time.Until(faultsOn.Add(time.Duration(fraction*float64(r.c.FaultDuration)))))
	}
	last := r.c.ManagementClusters
	steps := []struct {
		at float64
		do func() error
	}{
		{0.10, func() error { return r.cordon(ctx, 1, true) }},
		{0.25, func() error { return errors.Join(r.shrink(ctx, 1), r.cordon(ctx, 1, false)) }},
		{0.45, func() error { return errors.Join(r.shrink(ctx, last), r.cordon(ctx, last, false)) }},
	}
	if last >= 3 {
		steps = append(steps,
			struct {
				at float64
				do func() error
			}{0.60, func() error { return r.cordon(ctx, 2, true) }},
			struct {
				at float64
				do func() error
			}{0.80, func() error { return r.cordon(ctx, 2, false) }})
	}
	for _, step := range steps {
		if !at(step.at) {
			return ctx.Err()
		}
		if err := step.do(); err != nil {
			return err
		}
	}
	return nil
}

// shrink lowers a cordoned MC's worker pools to the fewest nodes that still hold what
// hcpsched committed there, so that the new ceiling is below the old one but not below
// hcpsched's own decisions: what placement does next must respect it. It first waits for
// the placements that were in flight when the MC was cordoned.
func (r *chaosRun) shrink(ctx context.Context, stamp int) error {
	mc := mcOf(stamp)
	if !r.view.waitCaughtUp(ctx) {
		return ctx.Err()
	}
	deadline := time.Now().Add(quiesceWait)
	var committed int64
	for {
		snap := r.view.snapshot(r.since(), r.kind)
		committed = 0
		for _, c := range commitments(snap, r.cfg) {
			if strings.EqualFold(c.mc, mc.String()) && c.resource == api.SwiftNIC {
				committed = c.committed
			}
		}
		if inFlight(snap, mc.String()) == 0 || time.Now().After(deadline) {
			break
		}
		if !sleepCtx(ctx, r.view.interval) {
			return ctx.Err()
		}
	}
	r.mu.Lock()
	current, lowered := r.nodes[stamp]
	r.mu.Unlock()
	if !lowered {
		current = r.s.region.nodes()
	}
	perNode := int64(mcsim.DefaultNodeSwiftNICs) * 1000
	target := max(int((committed+perNode-1)/perNode), 1)
	if target >= current {
		r.note("stamp %d not shrunk: the %s swift NICs committed there need all its %d nodes", stamp, formatMilli(committed), current)
		return nil
	}
	r.s.region.pools.limit(localregion.AKSResourceID(stamp), target)
	want := strconv.Itoa(target * mcsim.DefaultNodeSwiftNICs)
	if err := r.waitView(ctx, fmt.Sprintf("stamp %d's ceiling of %s", stamp, want), func() bool {
		for _, m := range r.view.snapshot(r.since(), r.kind).mcs {
			if strings.EqualFold(m.id, mc.String()) {
				q, err := placement.ParseQuantity(m.ceiling[api.SwiftNIC])
				return err == nil && strconv.FormatInt(q.Value(), 10) == want
			}
		}
		return false
	}); err != nil {
		return err
	}
	r.mu.Lock()
	r.nodes[stamp] = target
	r.shrinks++
	r.mu.Unlock()
	r.note("stamp %d shrunk from %d to %d nodes: ceiling %d → %s swift NICs, %s committed", stamp, current, target,
		current*mcsim.DefaultNodeSwiftNICs, want, formatMilli(committed))
	return nil
}

// inFlight counts the reservations on an MC of clusters not placed anywhere yet.
func inFlight(s snapshot, mcID string) int {
	n := 0
	for _, mc := range s.mcs {
		if !strings.EqualFold(mc.id, mcID) {
			continue
		}
		for _, res := range mc.reservations {
			if c, ok := s.clusters[strings.ToLower(res)]; !ok || (c.effective() == "" && !c.ended) {
				n++
			}
		}
	}
	return n
}

// failPlaced marks the refused cluster Failed once it is placed, as ARO-HCP does with a
// cluster that Cluster Service will not create: its reservation must then be released.
func (r *chaosRun) failPlaced(ctx context.Context) error {
	for {
		if c, ok := r.view.snapshot(r.since(), r.kind).clusters[r.failed]; ok && c.intended != "" {
			break
		}
		if !sleepCtx(ctx, failPollWait) {
			return ctx.Err()
		}
	}
	rid, err := api.ParseResourceID(r.failed)
	if err != nil {
		return err
	}
	pk, err := api.ResourcesPartitionKey(rid)
	if err != nil {
		return err
	}
	err = update(ctx, r.s.region.store.Container(api.ResourcesContainer), rid, pk, func(d *api.Cluster) bool {
		if d.Properties.ServiceProviderProperties == nil {
			d.Properties.ServiceProviderProperties = &api.ClusterServiceProviderProperties{}
		}
		d.Properties.ServiceProviderProperties.ProvisioningState = api.ProvisioningStateFailed
		return true
	})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.markedFailed = true
	r.mu.Unlock()
	r.note("%s marked Failed after placement (Cluster Service refuses it)", path.Base(r.failed))
	return nil
}

// seedServiceProviderClusters seeds every SPC of the run once it has its CapacityAvailable
// condition, so that hcpsched's later writes of the condition, the spec and the status
// all go through a document another component has written to.
func (r *chaosRun) seedServiceProviderClusters(ctx context.Context) error {
	if !r.s.o.SeedExtraFields {
		return nil
	}
	resources := r.s.region.store.Container(api.ResourcesContainer)
	done := map[string]bool{}
	for {
		snap := r.view.snapshot(r.since(), r.kind)
		for key := range r.s.obs.createdAt() {
			if c, ok := snap.clusters[key]; done[key] || !ok || c.capacity == nil {
				continue
			}
			cluster, err := api.ParseResourceID(key)
			if err != nil {
				return err
			}
			spc := api.ServiceProviderClusterResourceID(cluster)
			pk, err := api.ResourcesPartitionKey(spc)
			if err != nil {
				return err
			}
			seeded, err := seedOne[api.ServiceProviderClusterProperties](ctx, resources, pk, spc.String(), spcSeeds)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				// The next pass tries again; a field is only checked once it is seeded.
				r.s.region.logger.Warn("seeding an SPC failed; retrying", "resourceID", spc.String(), "error", err.Error())
				continue
			}
			r.s.addSeeded(seeded)
			done[key] = true
		}
		if !sleepCtx(ctx, seedPollWait) {
			return ctx.Err()
		}
	}
}

// resolution is how far the run's clusters are from settled.
type resolution struct {
	placed, waiting, ended, unresolved, reservations int
	// examples are the first unresolved clusters and why.
	examples []string
}

func (p resolution) String() string {
	s := fmt.Sprintf("placed and observed %d  waiting for capacity %d  ended %d  unresolved %d  reservations %d",
		p.placed, p.waiting, p.ended, p.unresolved, p.reservations)
	if len(p.examples) > 0 {
		s += " (" + strings.Join(p.examples, "; ") + ")"
	}
	return s
}

// resolve judges every cluster of the run: placed and observed, ended, or waiting for
// capacity, which requires CapacityAvailable=False with reason InsufficientCapacity and
// placement itself, given what the view holds, finding no MC with room for it.
func resolve(s snapshot, created []string, candidates []placement.Candidate, cfg placement.Config, now time.Time) resolution {
	var p resolution
	lookup := func(id string) (placement.Cluster, bool) {
		c, ok := s.clusters[strings.ToLower(id)]
		return c.placementCluster(id), ok && c.known
	}
	unresolved := func(key, why string) {
		p.unresolved++
		if len(p.examples) < 3 {
			p.examples = append(p.examples, path.Base(key)+": "+why)
		}
	}
	for _, key := range created {
		c, ok := s.clusters[key]
		switch {
		case !ok:
			unresolved(key, "not in the change feed yet")
		case c.ended:
			p.ended++
		case c.intended != "" && c.observed != "":
			p.placed++
		case c.intended != "":
			unresolved(key, "placed, not observed yet")
		case c.capacity == nil:
			unresolved(key, "not evaluated yet")
		case c.capacity.Status != api.ConditionFalse || c.capacity.Reason != placement.ConditionReasonInsufficientCapacity:
			unresolved(key, fmt.Sprintf("CapacityAvailable %s, %s", c.capacity.Status, c.capacity.Reason))
		default:
			d := placement.Decide(c.placementCluster(key), candidates, cfg, lookup, now)
			if d.Outcome == placement.OutcomePlaced {
				unresolved(key, "waits although stamp "+path.Base(path.Dir(path.Dir(d.Chosen.ManagementCluster.ResourceID)))+" has room")
				continue
			}
			p.waiting++
		}
	}
	for _, mc := range s.mcs {
		p.reservations += len(mc.reservations)
	}
	return p
}

// settle waits until every cluster is resolved and no reservation is left, or until
// reservations have outlived every placement by the settle grace: those are then the
// end-state check's to report, not a reason to time out.
func (r *chaosRun) settle(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.c.Timeout)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	report := time.NewTicker(r.s.o.ProgressEvery)
	defer report.Stop()
	var resolvedSince time.Time
	for {
		created := slices.Collect(maps.Keys(r.s.obs.createdAt()))
		p := resolve(r.view.snapshot(r.since(), r.kind), created, r.view.candidates(), r.cfg, time.Now())
		switch {
		case p.unresolved > 0:
			resolvedSince = time.Time{}
		case p.reservations == 0:
			r.s.progressf("[%6.1fs] settled: %s", r.since().Seconds(), p)
			return nil
		case resolvedSince.IsZero():
			resolvedSince = time.Now()
		case time.Since(resolvedSince) >= r.c.SettleGrace:
			r.s.progressf("[%6.1fs] settled but for reservations held %s after every placement: %s", r.since().Seconds(), r.c.SettleGrace, p)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not settled after %s: %s", r.c.Timeout, p)
		case <-report.C:
			r.s.progressf("[%6.1fs] %s", r.since().Seconds(), p)
		case <-tick.C:
		}
	}
}
