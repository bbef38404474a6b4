package localregion

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/clusterservice"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/frontend"
	"github.com/hcpsched/hcpsched/internal/dev/mcsim"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// barWidth is the width of a management cluster's swift-NIC bar.
const barWidth = 40

// unsettledLines is how many unsettled clusters a timeout lists.
const unsettledLines = 20

// legend says what the progress line's counters mean and which orders always hold
// between them; the README says the same.
const legend = `Each progress line is one read of the region, every counter from the same documents:
  created               clusters this run wrote (of --clusters)
  placed                created, and its ServiceProviderCluster names an MC (spec.managementClusterResourceID)
  desired version       created, and its ServiceProviderCluster has spec.control_plane_version.desired_version
  pinned in CS          placed, with a desired version, and in Cluster Service on the provision shard of its MC
  observed              pinned, and in that MC's capacity report (ready or not)
  pending reservations  pendingAssignedClusters entries of every MC: written before a cluster is placed,
                        dropped in the write that records the MC's report of it (or swept by the backend)
So always: observed <= pinned in CS <= placed <= created, and pinned in CS <= desired version <= created.
`

// mcView is one management cluster as the region sees it.
type mcView struct {
	stamp    string
	id       string
	policy   string
	shardID  string
	capacity int64
	used     int64
	// reserved is the swift-NIC cost of the clusters placed here but not reported yet.
	reserved int64
	pending  int
	placed   int
	latency  []time.Duration
}

// clusterView is one cluster of the run as one snapshot sees it: how far it went.
type clusterView struct {
	id string
	// spc: its ServiceProviderCluster exists.
	spc bool
	// versioned: the SPC has its desired control plane version.
	versioned bool
	// placedOn is the MC its SPC names (lowercased); "" while unplaced.
	placedOn string
	// condition is the SPC's CapacityAvailable condition, nil while it has none.
	condition *api.Condition
	// inCSOn is the MC whose provision shard holds it in Cluster Service; "" if none does.
	inCSOn string
	// observedOn is the MCs whose capacity report lists it.
	observedOn []string
	// reservedOn is the MCs holding a reservation for it.
	reservedOn []string
}

// pinned: Cluster Service has it where it was placed, which needs a desired version.
func (c *clusterView) pinned() bool {
	return c.placedOn != "" && c.versioned && c.inCSOn == c.placedOn
}

// observed: pinned, and the MC it was pinned to reports it.
func (c *clusterView) observed() bool {
	return c.pinned() && slices.Contains(c.observedOn, c.placedOn)
}

// through: nothing left to happen to it.
func (c *clusterView) through() bool { return c.observed() && len(c.reservedOn) == 0 }

// reservation is one pendingAssignedClusters entry of a cluster this run did not make.
type reservation struct{ id, mc string }

// snapshot is the region's progress at one moment, every counter computed from one read
// of the documents (observer.snapshot).
type snapshot struct {
	created, placed, inCS, observed, pending int
	// versioned counts the clusters whose SPC has its desired control plane version.
	versioned int
	mcs       []*mcView
	latency   []time.Duration
	// clusters are the run's clusters in numeric order.
	clusters []*clusterView
	// foreign are the reservations of clusters this run did not make.
	foreign []reservation
}

// settled reports whether every cluster went all the way through and no reservation is
// left.
func (s snapshot) settled(total int) bool {
	return s.created == total && s.placed == total && s.inCS == total && s.observed == total && s.pending == 0
}

// stamp names an MC by its stamp for the messages, its resource ID when it is unknown.
func (s snapshot) stamp(mc string) string {
	for _, v := range s.mcs {
		if v.id == mc {
			return "stamp " + v.stamp
		}
	}
	return mc
}

// createdCluster is one cluster the run wrote.
type createdCluster struct {
	id   string
	at   time.Time
	kind frontend.Kind
}

// observer reads the region's state from Cosmos and the fake Cluster Service.
type observer struct {
	store  database.Store
	csURL  string
	client *http.Client
	// created is the clusters the run wrote, by lowercased resource ID.
	created map[string]createdCluster
}

// add records a cluster the run wrote.
func (o *observer) add(id string, at time.Time, kind frontend.Kind) {
	if o.created == nil {
		o.created = map[string]createdCluster{}
	}
	o.created[strings.ToLower(id)] = createdCluster{id: id, at: at, kind: kind}
}

// reads are the documents of one snapshot.
type reads struct {
	schedulings []listed[api.ManagementClusterSchedulingProperties]
	mcs         []listed[api.ManagementClusterProperties]
	// onShard is the lowercased resource IDs of the clusters on each shard.
	onShard map[string][]string
	spcs    []listed[api.ServiceProviderClusterProperties]
}

// snapshot reads the region once and counts from that one read. The region moves on
// between the reads of one snapshot, so they go downstream first: the MCs' reports and
// reservations, then the MCs, then Cluster Service, then the SPCs. Each stage needs the
// one before it and none is ever undone (an MC reports only what Cluster Service has on
// its shard, which has only clusters pinned there, which needs a placed SPC with a
// desired version), so whatever a read shows downstream, the later upstream read shows
// too: the snapshot is one a single instant could have shown, and the per-cluster
// counters (summarize) lose nothing by requiring every earlier stage.
func (o *observer) snapshot(ctx context.Context) (snapshot, error) {
	var r reads
	var err error
	fleet := o.store.Container(api.FleetContainer)
	if r.schedulings, err = listDocuments[api.ManagementClusterSchedulingProperties](ctx, fleet, api.ManagementClusterSchedulingResourceType); err != nil {
		return snapshot{}, err
	}
	if r.mcs, err = listDocuments[api.ManagementClusterProperties](ctx, fleet, api.ManagementClusterResourceType); err != nil {
		return snapshot{}, err
	}
	r.onShard = map[string][]string{}
	for _, d := range r.mcs {
		shard := shardOf(d.doc)
		if shard == "" {
			continue
		}
		rids, err := mcsim.ResourceIDsOnShard(ctx, o.client, o.csURL, shard)
		if err != nil {
			return snapshot{}, err
		}
		for _, rid := range rids {
			r.onShard[shard] = append(r.onShard[shard], strings.ToLower(rid))
		}
	}
	resources := o.store.Container(api.ResourcesContainer)
	if r.spcs, err = listDocuments[api.ServiceProviderClusterProperties](ctx, resources, api.ServiceProviderClusterResourceType); err != nil {
		return snapshot{}, err
	}
	return o.summarize(r), nil
}

func shardOf(mc *api.ManagementCluster) string {
	if st := mc.Properties.Status; st != nil && st.ClusterServiceProvisionShardID != "" {
		id, _ := clusterservice.ParseShardHREF(st.ClusterServiceProvisionShardID)
		return id
	}
	return ""
}

// summarize places every cluster of the run at its stage and counts the stages: a
// cluster counts at a stage only with every stage before it, so that the counters of
// one line cannot contradict each other.
func (o *observer) summarize(r reads) snapshot {
	var s snapshot
	byID := map[string]*mcView{}
	shardMC := map[string]string{}
	for _, d := range r.mcs {
		v := &mcView{id: d.rid.Key(), shardID: shardOf(d.doc)}
		v.stamp, _ = api.FleetPartitionKey(d.rid)
		if d.doc.Properties.Spec != nil {
			v.policy = d.doc.Properties.Spec.SchedulingPolicy
		}
		byID[v.id] = v
		if v.shardID != "" {
			shardMC[v.shardID] = v.id
		}
		s.mcs = append(s.mcs, v)
	}
	slices.SortFunc(s.mcs, func(a, b *mcView) int { return api.CompareNatural(a.stamp, b.stamp) })

	clusters := map[string]*clusterView{}
	for key, c := range o.created {
		clusters[key] = &clusterView{id: c.id}
	}
	for _, d := range r.schedulings {
		mc, st := d.rid.Parent().Key(), d.doc.Properties.Status
		if st == nil {
			continue
		}
		v := byID[mc]
		if v != nil && st.ObservedResources != nil {
			obs := st.ObservedResources
			v.capacity, v.used = quantity(obs.Capacity[api.SwiftNIC]), quantity(obs.Usage[api.SwiftNIC])
		}
		for _, id := range slices.Concat(st.ReadyResourceIDs, st.NotReadyResourceIDs) {
			if c := clusters[strings.ToLower(id)]; c != nil && !slices.Contains(c.observedOn, mc) {
				c.observedOn = append(c.observedOn, mc)
			}
		}
		for _, id := range st.PendingAssignedClusters {
			s.pending++
			if c := clusters[strings.ToLower(id)]; c != nil {
				c.reservedOn = append(c.reservedOn, mc)
			} else {
				s.foreign = append(s.foreign, reservation{id: id, mc: mc})
			}
			if v != nil {
				v.pending++
				v.reserved += o.cost(id)
			}
		}
	}
	for shard, ids := range r.onShard {
		for _, id := range ids {
			if c := clusters[id]; c != nil {
				c.inCSOn = shardMC[shard]
			}
		}
	}
	for _, d := range r.spcs {
		key := d.rid.Parent().Key()
		c := clusters[key]
		if c == nil {
			continue
		}
		c.spc = true
		p := d.doc.Properties
		c.versioned = p.DesiredControlPlaneVersion() != ""
		c.placedOn = strings.ToLower(p.IntendedManagementCluster())
		if p.Status != nil && p.Status.Placement != nil {
			c.condition = api.FindCondition(p.Status.Placement.Conditions, placement.ConditionCapacityAvailable)
		}
		if c.placedOn == "" {
			continue
		}
		latency := p.Spec.ManagementClusterPlacementTime.Sub(o.created[key].at)
		s.latency = append(s.latency, latency)
		if v := byID[c.placedOn]; v != nil {
			v.placed++
			v.latency = append(v.latency, latency)
		}
	}

	s.created = len(clusters)
	for _, c := range clusters {
		s.clusters = append(s.clusters, c)
		if c.placedOn != "" {
			s.placed++
		}
		if c.versioned {
			s.versioned++
		}
		if c.pinned() {
			s.inCS++
		}
		if c.observed() {
			s.observed++
		}
	}
	slices.SortFunc(s.clusters, func(a, b *clusterView) int { return api.CompareNatural(strings.ToLower(a.id), strings.ToLower(b.id)) })
	return s
}

// listed is one listed document and its parsed resource ID.
type listed[P any] struct {
	doc *api.Document[P]
	rid *api.ResourceID
}

// listDocuments lists and decodes every document of a resource type in a container.
func listDocuments[P any](ctx context.Context, c database.Container, resourceType string) ([]listed[P], error) {
	docs, err := database.ListDecoded[P](ctx, c, resourceType)
	if err != nil {
		return nil, err
	}
	out := make([]listed[P], 0, len(docs))
	for _, doc := range docs {
		rid, err := doc.ParsedResourceID()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", resourceType, doc.ID, err)
		}
		out = append(out, listed[P]{doc: doc, rid: rid})
	}
	return out, nil
}

// cost is the swift NICs a generated cluster's reservation holds, as placement counts
// it: none for a cluster without VNet integration, as much as a SWIFT HA one for a
// cluster the run did not make.
func (o *observer) cost(resourceID string) int64 {
	c, ours := o.created[strings.ToLower(resourceID)]
	if !ours {
		c.kind = frontend.Kind{Swift: true}
	}
	return c.kind.SwiftNICs()
}

func quantity(s string) int64 {
	q, err := placement.ParseQuantity(s)
	if err != nil {
		return 0
	}
	return q.Value()
}

// render writes the progress block: the pipeline counters, then one swift-NIC bar per
// management cluster (# used, + reserved, . free). It returns the lines written.
func render(w io.Writer, s snapshot, total int, elapsed time.Duration) int {
	fmt.Fprintf(w, "[%5.1fs] created %d/%d  placed %d  desired version %d  pinned in CS %d  observed %d  pending reservations %d\n",
		elapsed.Seconds(), s.created, total, s.placed, s.versioned, s.inCS, s.observed, s.pending)
	for _, v := range s.mcs {
		fmt.Fprintf(w, "  stamp %-3s %-13s %s %3d used + %2d reserved / %3d swift NICs\n",
			v.stamp, v.policy, bar(v.used, v.reserved, v.capacity), v.used, v.reserved, v.capacity)
	}
	return 1 + len(s.mcs)
}

// renderUnsettled writes why the region has not settled: the clusters not created yet,
// then each cluster that is not through with the step it is stuck at, then the
// reservations of clusters the run did not make; at most unsettledLines of the last two.
func renderUnsettled(w io.Writer, s snapshot, total int) {
	fmt.Fprintln(w, "not settled:")
	if missing := total - s.created; missing > 0 {
		fmt.Fprintf(w, "  %d %s not created yet (%d wanted)\n", missing, plural(missing, "cluster", "clusters"), total)
	}
	var lines []string
	for _, c := range s.clusters {
		if !c.through() {
			lines = append(lines, fmt.Sprintf("%s: %s", c.id, s.stuckAt(c)))
		}
	}
	for _, r := range s.foreign {
		lines = append(lines, fmt.Sprintf("%s: not a cluster of this run, but reserved on %s", r.id, s.stamp(r.mc)))
	}
	for i, l := range lines {
		if i == unsettledLines {
			fmt.Fprintf(w, "  and %d more\n", len(lines)-unsettledLines)
			break
		}
		fmt.Fprintln(w, "  "+l)
	}
}

// stuckAt says which step of the pipeline a cluster that is not through waits for.
func (s snapshot) stuckAt(c *clusterView) string {
	switch {
	case !c.spc:
		return "no ServiceProviderCluster yet"
	case c.placedOn == "" && c.condition == nil:
		return "not placed: no " + placement.ConditionCapacityAvailable + " condition yet"
	case c.placedOn == "":
		return fmt.Sprintf("not placed: %s=%s %s: %s", placement.ConditionCapacityAvailable, c.condition.Status, c.condition.Reason, c.condition.Message)
	case c.inCSOn != "" && c.inCSOn != c.placedOn:
		return fmt.Sprintf("placed on %s, but Cluster Service has it on %s", s.stamp(c.placedOn), s.stamp(c.inCSOn))
	case !c.versioned:
		return fmt.Sprintf("placed on %s, waiting for its desired control plane version", s.stamp(c.placedOn))
	case c.inCSOn == "":
		return fmt.Sprintf("placed on %s, not created in Cluster Service", s.stamp(c.placedOn))
	case !c.observed():
		return fmt.Sprintf("created in Cluster Service on %s, not in its capacity report yet", s.stamp(c.placedOn))
	default:
		on := make([]string, len(c.reservedOn))
		for i, mc := range c.reservedOn {
			on[i] = s.stamp(mc)
		}
		return fmt.Sprintf("observed on %s, but a reservation remains on %s", s.stamp(c.placedOn), strings.Join(on, ", "))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func bar(used, reserved, capacity int64) string {
	if capacity <= 0 {
		return "[" + strings.Repeat(" ", barWidth) + "]"
	}
	cells := func(n int64) int { return int(min(n*barWidth/capacity, barWidth)) }
	u := cells(used)
	r := min(cells(used+reserved)-u, barWidth-u)
	return "[" + strings.Repeat("#", u) + strings.Repeat("+", r) + strings.Repeat(".", barWidth-u-r) + "]"
}

// renderPlacements writes the final table: where the clusters went and how long placement
// took, from the cluster's creation to spec.managementClusterPlacementTime.
func renderPlacements(w io.Writer, s snapshot) {
	fmt.Fprintln(w, "\nplacement latency, creation to spec.managementClusterPlacementTime:")
	fmt.Fprintf(w, "%-7s %-13s %5s %14s %8s %8s %8s %8s\n", "stamp", "policy", "HCPs", "swift NICs", "p50", "p90", "p99", "max")
	row := func(stamp, policy string, n int, nics string, l []time.Duration) {
		fmt.Fprintf(w, "%-7s %-13s %5d %14s %8s %8s %8s %8s\n", stamp, policy, n, nics,
			percentile(l, 50), percentile(l, 90), percentile(l, 99), percentile(l, 100))
	}
	for _, v := range s.mcs {
		row(v.stamp, v.policy, v.placed, fmt.Sprintf("%d/%d", v.used, v.capacity), v.latency)
	}
	row("all", "", s.placed, "", s.latency)
}

// percentile is the nearest-rank percentile, rounded for display.
func percentile(d []time.Duration, p int) string {
	if len(d) == 0 {
		return "-"
	}
	sorted := slices.Clone(d)
	slices.Sort(sorted)
	i := max((p*len(sorted)+99)/100-1, 0)
	return sorted[i].Round(10 * time.Millisecond).String()
}
