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

// snapshot is the region's progress at one moment.
type snapshot struct {
	created, placed, inCS, observed, pending int
	// versioned counts the clusters whose SPC has its desired control plane version.
	versioned int
	mcs       []*mcView
	latency   []time.Duration
}

// settled reports whether every cluster went all the way through and no reservation is
// left.
func (s snapshot) settled(total int) bool {
	return s.created == total && s.placed == total && s.inCS == total && s.observed == total && s.pending == 0
}

// observer reads the region's state from Cosmos and the fake Cluster Service.
type observer struct {
	store  database.Store
	csURL  string
	client *http.Client
	// created is when each generated cluster was written, by lowercased resource ID.
	created map[string]time.Time
	// kinds are the generated clusters' kinds.
	kinds map[string]frontend.Kind
}

func (o *observer) snapshot(ctx context.Context) (snapshot, error) {
	var s snapshot
	s.created = len(o.created)
	byID := map[string]*mcView{}
	fleet := o.store.Container(api.FleetContainer)
	mcs, err := listDocuments[api.ManagementClusterProperties](ctx, fleet, api.ManagementClusterResourceType)
	if err != nil {
		return s, err
	}
	for _, d := range mcs {
		mc, rid := d.doc, d.rid
		v := &mcView{id: rid.Key()}
		v.stamp, _ = api.FleetPartitionKey(rid)
		if mc.Properties.Spec != nil {
			v.policy = mc.Properties.Spec.SchedulingPolicy
		}
		if st := mc.Properties.Status; st != nil && st.ClusterServiceProvisionShardID != "" {
			v.shardID, _ = clusterservice.ParseShardHREF(st.ClusterServiceProvisionShardID)
		}
		byID[v.id] = v
		s.mcs = append(s.mcs, v)
	}
	slices.SortFunc(s.mcs, func(a, b *mcView) int { return strings.Compare(a.stamp, b.stamp) })

	observed := map[string]bool{}
	schedulings, err := listDocuments[api.ManagementClusterSchedulingProperties](ctx, fleet, api.ManagementClusterSchedulingResourceType)
	if err != nil {
		return s, err
	}
	for _, d := range schedulings {
		doc, rid := d.doc, d.rid
		v := byID[rid.Parent().Key()]
		st := doc.Properties.Status
		if v == nil || st == nil {
			continue
		}
		if obs := st.ObservedResources; obs != nil {
			v.capacity, v.used = quantity(obs.Capacity[api.SwiftNIC]), quantity(obs.Usage[api.SwiftNIC])
		}
		for _, id := range append(append([]string{}, st.ReadyResourceIDs...), st.NotReadyResourceIDs...) {
			observed[strings.ToLower(id)] = true
		}
		v.pending = len(st.PendingAssignedClusters)
		for _, id := range st.PendingAssignedClusters {
			v.reserved += o.cost(id)
		}
		s.pending += v.pending
	}
	for id := range o.created {
		if observed[id] {
			s.observed++
		}
	}

	resources := o.store.Container(api.ResourcesContainer)
	spcs, err := listDocuments[api.ServiceProviderClusterProperties](ctx, resources, api.ServiceProviderClusterResourceType)
	if err != nil {
		return s, err
	}
	for _, d := range spcs {
		spc, rid := d.doc, d.rid
		createdAt, ours := o.created[rid.Parent().Key()]
		if ours && spc.Properties.DesiredControlPlaneVersion() != "" {
			s.versioned++
		}
		spec := spc.Properties.Spec
		if !ours || spec == nil || spec.ManagementClusterResourceID == "" {
			continue
		}
		s.placed++
		latency := spec.ManagementClusterPlacementTime.Sub(createdAt)
		s.latency = append(s.latency, latency)
		if v := byID[strings.ToLower(spec.ManagementClusterResourceID)]; v != nil {
			v.placed++
			v.latency = append(v.latency, latency)
		}
	}

	for _, v := range s.mcs {
		if v.shardID == "" {
			continue
		}
		clusters, err := mcsim.ClustersOnShard(ctx, o.client, o.csURL, v.shardID)
		if err != nil {
			return s, err
		}
		for _, c := range clusters {
			if rid, ok := mcsim.AzureResourceID(c); ok {
				if _, ours := o.created[strings.ToLower(rid)]; ours {
					s.inCS++
				}
			}
		}
	}
	return s, nil
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
	k, ours := o.kinds[strings.ToLower(resourceID)]
	if !ours {
		k = frontend.Kind{Swift: true}
	}
	return k.SwiftNICs()
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
