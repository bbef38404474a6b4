package scenario

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// snapshot is the region as the run's own change-feed follower holds it at one moment:
// enough of every MC and cluster to say what hcpsched's decisions hold where.
type snapshot struct {
	// at is how long after the run began the snapshot was taken.
	at       time.Duration
	mcs      []mcState
	clusters map[string]clusterState
}

// mcState is one MC's scheduling document, as far as commitments go.
type mcState struct {
	// id is the MC's resource ID as stored.
	id string
	// ceiling is status.scaleCeiling.capacity; nil while the MC has none.
	ceiling      api.ResourceList
	reservations []string
}

// clusterState is one cluster, keyed in snapshot.clusters by its lowercased resource ID.
type clusterState struct {
	// intended is the SPC's spec.managementClusterResourceID, observed its status's.
	intended, observed string
	// singleReplica and nonSwift are the cluster's kind (the zero value is a SWIFT HA
	// cluster); known is whether they come from the cluster itself: an unknown cluster
	// costs as much as a SWIFT HA one, as placement counts it.
	singleReplica bool
	nonSwift      bool
	known         bool
	// ended: deleting, Failed or Canceled. It holds nothing any more, so its capacity may
	// be given to another cluster once its reservation is released.
	ended bool
	// capacity is the SPC's CapacityAvailable condition, nil while it has none.
	capacity *api.Condition
}

// placementCluster is the cluster as the engine counts it.
func (c clusterState) placementCluster(id string) placement.Cluster {
	return placement.Cluster{ResourceID: id, Swift: !c.nonSwift, SingleReplica: c.singleReplica}
}

// effective is where hcpsched counts the cluster: where Cluster Service was seen to put
// it, else where placement decided. It is PendingCleanup's rule (docs/placement.md).
func (c clusterState) effective() string {
	if c.observed != "" {
		return c.observed
	}
	return c.intended
}

// commitment is what hcpsched's own decisions hold of one counted resource on one MC.
type commitment struct {
	mc, resource string
	// committed and ceiling are in milli-units, as placement counts.
	committed, ceiling int64
	// clusters are the clusters counted, each as "name (how)", for a violation's details.
	clusters []string
	// uncounted: placement's arithmetic refused the MC, so the sample proves nothing.
	uncounted bool
}

func (c commitment) over() bool { return c.uncounted || c.committed > c.ceiling }

func (c commitment) String() string {
	if c.uncounted {
		return c.mc + ": what is committed could not be counted"
	}
	return fmt.Sprintf("%s: %s %s committed, ceiling %s", c.mc, formatMilli(c.committed), c.resource, formatMilli(c.ceiling))
}

// commitments are, per MC and counted resource, the cost of the clusters hcpsched placed
// there (intent, or the observed MC once Cluster Service is seen to have put the cluster
// elsewhere) and of its live reservations, against its scale ceiling. Observed usage is
// left out on purpose: it is what the MC runs, not what hcpsched decided, and a cluster
// placed but not yet running must count from the moment its reservation is written.
//
// A reservation is live while its cluster is alive and not counted on another MC: a
// stale one (its cluster went elsewhere, or ended) holds capacity only until PendingCleanup
// drops it, and counting it here as well would, with the two change feeds read apart,
// charge capacity that a later placement was rightly given. Ended clusters are left out
// for the same reason. Both only under-count, so neither can hide an overbooking that
// intents alone show.
//
// The arithmetic is placement's own (placement.Capacity): each cluster once, its cost
// from the configuration, an unknown one as HA, quantities parsed as placement parses them.
func commitments(s snapshot, cfg placement.Config) []commitment {
	placed := map[string][]string{}
	for key, c := range s.clusters {
		if eff := c.effective(); eff != "" && !c.ended {
			placed[strings.ToLower(eff)] = append(placed[strings.ToLower(eff)], key)
		}
	}
	lookup := func(id string) (placement.Cluster, bool) {
		c, ok := s.clusters[strings.ToLower(id)]
		return c.placementCluster(id), ok && c.known
	}
	var out []commitment
	for _, mc := range s.mcs {
		if mc.ceiling == nil {
			continue
		}
		mcKey := strings.ToLower(mc.id)
		on := slices.Sorted(slices.Values(placed[mcKey]))
		how := map[string]string{}
		for _, key := range on {
			how[key] = "spec"
			if s.clusters[key].observed != "" {
				how[key] = "status"
			}
		}
		var live []string
		for _, r := range mc.reservations {
			key := strings.ToLower(r)
			if c, ok := s.clusters[key]; ok && (c.ended || (c.effective() != "" && !strings.EqualFold(c.effective(), mc.id))) {
				continue
			}
			if _, counted := how[key]; counted {
				// Placed here and still reserved: one HCP, counted once. Placement charges
				// such a cluster twice only while the MC reports it not ready, which is
				// what the MC runs, not what hcpsched decided.
				how[key] += "+reservation"
				continue
			}
			live = append(live, r)
			how[key] = "reservation"
		}
		// Placement's capacity of an MC whose only usage is hcpsched's commitments:
		// the placed clusters stand in the not-ready list, which it charges at cost, and
		// the usage it would otherwise add is an explicit zero.
		zero := api.ResourceList{}
		for _, r := range cfg.Resources {
			zero[r.Name] = "0"
		}
		st := &api.SchedulingStatus{
			ScaleCeiling:            &api.ScaleCeiling{Capacity: mc.ceiling},
			ObservedResources:       &api.ObservedResources{Usage: zero},
			NotReadyResourceIDs:     on,
			PendingAssignedClusters: live,
		}
		available, ok := placement.NewModel(cfg, nil).NewMC(&api.ManagementCluster{ResourceID: mc.id}, &api.ManagementClusterScheduling{
			Properties: api.ManagementClusterSchedulingProperties{Status: st},
		}, lookup).Available()
		if !ok {
			if _, err := placement.ParseQuantity(mc.ceiling[cfg.Resources[0].Name]); err != nil {
				// An unparsable ceiling is NoSchedulingData to placement: nothing goes there.
				continue
			}
			// Placement refused to count what the checker built: a checker that cannot
			// count must fail, not skip.
			out = append(out, commitment{mc: mc.id, resource: cfg.Resources[0].Name, uncounted: true, clusters: []string{"placement.Capacity refused the commitments"}})
			continue
		}
		details := make([]string, 0, len(how))
		for _, key := range slices.Sorted(func(yield func(string) bool) {
			for k := range how {
				if !yield(k) {
					return
				}
			}
		}) {
			details = append(details, fmt.Sprintf("%s (%s)", path.Base(key), how[key]))
		}
		for i, r := range cfg.Resources {
			q, present := mc.ceiling[r.Name]
			if !present {
				continue
			}
			ceiling, err := placement.ParseQuantity(q)
			if err != nil {
				continue
			}
			out = append(out, commitment{
				mc: mc.id, resource: r.Name,
				ceiling: ceiling.MilliValue(), committed: ceiling.MilliValue() - available[i],
				clusters: details,
			})
		}
	}
	return out
}

// ceilingWatch checks every sample against the ceilings and remembers, per MC and
// resource, the fullest it was and the first sample that overbooked it.
type ceilingWatch struct {
	cfg     placement.Config
	samples int
	// overbooked counts the samples in which some MC was over its ceiling.
	overbooked int
	// firstOver is, per MC and resource, the first sample over its ceiling, in the
	// order they were found; overCount how many samples were over.
	firstOver []string
	overCount map[string]int
	fullest   map[string]fullest
	// counted are the clusters that some sample counted on some MC.
	counted map[string]bool
}

// fullest is an MC's highest committed/ceiling over the run.
type fullest struct {
	commitment
	sample int
	at     time.Duration
}

func newCeilingWatch(cfg placement.Config) *ceilingWatch {
	return &ceilingWatch{cfg: cfg, fullest: map[string]fullest{}, counted: map[string]bool{}, overCount: map[string]int{}}
}

// observe checks one sample.
func (w *ceilingWatch) observe(s snapshot) {
	w.samples++
	over := false
	for _, c := range commitments(s, w.cfg) {
		key := c.mc + " " + c.resource
		if f, seen := w.fullest[key]; !c.uncounted && (!seen || ratioAbove(c, f.commitment)) {
			w.fullest[key] = fullest{commitment: c, sample: w.samples, at: s.at}
		}
		for _, d := range c.clusters {
			if name, _, ok := strings.Cut(d, " ("); ok && !c.uncounted {
				w.counted[name] = true
			}
		}
		if c.over() {
			over = true
			if w.overCount[key] == 0 {
				w.firstOver = append(w.firstOver, fmt.Sprintf("sample %d at %.1fs: %s; counted %s",
					w.samples, s.at.Seconds(), c, strings.Join(c.clusters, ", ")))
			}
			w.overCount[key]++
		}
	}
	if over {
		w.overbooked++
	}
}

// ratioAbove is whether a is fuller than b, committed/ceiling compared without division.
func ratioAbove(a, b commitment) bool {
	if b.ceiling == 0 {
		return a.ceiling != 0 || a.committed > b.committed
	}
	if a.ceiling == 0 {
		return a.committed > 0
	}
	return a.committed*b.ceiling > b.committed*a.ceiling
}

// invariant is the ceiling invariant over every sample. A run without samples, or whose
// samples never counted a cluster on an MC, proves nothing and fails.
func (w *ceilingWatch) invariant() Invariant {
	inv := Invariant{Name: fmt.Sprintf("no management cluster is committed past its scale ceiling at any of %d samples taken from the change feeds", w.samples)}
	if w.overbooked > 0 {
		inv.Violations = append(inv.Violations, fmt.Sprintf("%d of %d samples had an MC over its ceiling; the first for each MC:", w.overbooked, w.samples))
		inv.Violations = append(inv.Violations, w.firstOver...)
	}
	if w.samples == 0 {
		inv.Violations = append(inv.Violations, "no sample was taken")
	}
	if len(w.fullest) == 0 {
		inv.Violations = append(inv.Violations, "no sample held an MC with a ceiling")
	}
	if len(w.counted) == 0 {
		inv.Violations = append(inv.Violations, "no sample counted a cluster on an MC")
	}
	return inv
}

// fullestLines are the maximum committed/ceiling of every MC, in resource ID order.
func (w *ceilingWatch) fullestLines() []string {
	all := make([]fullest, 0, len(w.fullest))
	for _, f := range w.fullest {
		all = append(all, f)
	}
	slices.SortFunc(all, func(a, b fullest) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a.mc), strings.ToLower(b.mc)), cmp.Compare(a.resource, b.resource))
	})
	lines := make([]string, 0, len(all))
	for _, f := range all {
		ratio := 0.0
		if f.ceiling > 0 {
			ratio = float64(f.committed) / float64(f.ceiling)
		}
		lines = append(lines, fmt.Sprintf("%s  %s/%s %s (%.2f), first at sample %d, %.1fs",
			f.mc, formatMilli(f.committed), formatMilli(f.ceiling), f.resource, ratio, f.sample, f.at.Seconds()))
	}
	return lines
}

// formatMilli writes milli-units as the whole units placement's costs are counted in.
func formatMilli(m int64) string {
	if m%1000 == 0 {
		return fmt.Sprint(m / 1000)
	}
	return fmt.Sprintf("%.3f", float64(m)/1000)
}
