// Package metrics exports the backend's view of clusters and management clusters,
// computed at scrape time from the informer caches in the style of kube-state-metrics:
// every value is a level read from the cached documents, so there is no state to keep
// in step with the caches and a deleted document simply stops being exported.
//
// Placement latency is not measured here: it is the difference between
// backend_cluster_placement_time_seconds and backend_cluster_created_time_seconds,
// computed in PromQL, like kube_pod_status_scheduled_time - kube_pod_created. The
// placement controller also observes it, once per cluster it places, in the histogram
// backend_placement_latency_seconds (backend/controllers/placement_metrics.go).
package metrics

import (
	"errors"
	"math"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hcpsched/hcpsched/backend/candidates"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// Placement states of backend_cluster_info.
const (
	// PlacementPlaced: placement chose an MC and Cluster Service either has not been
	// observed yet or put the cluster on that MC.
	PlacementPlaced = "placed"
	// PlacementUnplaced: placement has not chosen an MC yet.
	PlacementUnplaced = "unplaced"
	// PlacementMismatch: Cluster Service put the cluster somewhere else than placement
	// chose; the pin was not honoured.
	PlacementMismatch = "mismatch"
	// PlacementUnmappable: the cluster has a clusterServiceID Cluster Service does not
	// resolve; hcpsched leaves it unplaced for good, so it is not backlog.
	PlacementUnmappable = "unmappable"
)

// Metric names, also used by the alerts and the dashboard.
const (
	ClusterInfoName                = "backend_cluster_info"
	ClusterCreatedTimeName         = "backend_cluster_created_time_seconds"
	ClusterPlacementTimeName       = "backend_cluster_placement_time_seconds"
	RegionHeadroomName             = "backend_region_headroom_hcps"
	CapacityReportAgeName          = "backend_management_cluster_capacity_report_age_seconds"
	OldestReservationAgeName       = "backend_management_cluster_oldest_reservation_age_seconds"
	ScaleCeilingName               = "backend_management_cluster_scale_ceiling"
	UsageName                      = "backend_management_cluster_usage"
	labelResource                  = "resource"
	labelResourceID                = "resource_id"
	labelSubscriptionID            = "subscription_id"
	labelManagementClusterResource = "management_cluster_resource_id"
	labelPlacement                 = "placement"
)

// Collector is a prometheus.Collector over the backend's caches.
type Collector struct {
	clusters *informers.Lister[api.ClusterProperties]
	spcs     *informers.Lister[api.ServiceProviderClusterProperties]
	snapshot *candidates.Snapshot
	now      func() time.Time

	info              *prometheus.Desc
	created           *prometheus.Desc
	placed            *prometheus.Desc
	headroom          *prometheus.Desc
	reportAge         *prometheus.Desc
	oldestReservation *prometheus.Desc
	ceiling           *prometheus.Desc
	usage             *prometheus.Desc
	available         *prometheus.Desc
	pending           *prometheus.Desc
	costSource        *prometheus.Desc
}

// NewCollector reads the caches, and the MCs from the very snapshot placement decides
// from, so that headroom and the capacity gauges count what the engine counts; now is
// the clock ages are measured by (nil: time.Now). Call it before the caches start.
func NewCollector(caches informers.Caches, snapshot *candidates.Snapshot, now func() time.Time) *Collector {
	if now == nil {
		now = time.Now
	}
	mc := []string{labelManagementClusterResource}
	return &Collector{
		clusters: caches.Clusters().Lister(),
		spcs:     caches.ServiceProviderClusters().Lister(),
		snapshot: snapshot,
		now:      now,
		info: prometheus.NewDesc(ClusterInfoName,
			"One series per cluster in the backend's cache that is not being deleted: placement is placed (spec.managementClusterResourceID set, status unset or equal), unplaced (spec unset), unmappable (spec unset and its clusterServiceID does not resolve in Cluster Service: never placed) or mismatch (spec and status both set and different). IDs are lowercased.",
			[]string{labelResourceID, labelSubscriptionID, labelManagementClusterResource, labelPlacement}, nil),
		created: prometheus.NewDesc(ClusterCreatedTimeName,
			"Unix time the cluster was created (properties.systemData.createdAt); absent when the document has none.",
			[]string{labelResourceID}, nil),
		placed: prometheus.NewDesc(ClusterPlacementTimeName,
			"Unix time placement chose the cluster's management cluster (ServiceProviderCluster spec.managementClusterPlacementTime); absent until placed.",
			[]string{labelResourceID}, nil),
		headroom: prometheus.NewDesc(RegionHeadroomName,
			"How many more highly available SWIFT HCPs (VNet-integrated, 3 swift NICs each: the costliest kind) fit now across the management clusters the placement engine would consider apart from capacity (schedulable, ready, with fresh scheduling data).",
			nil, nil),
		reportAge: prometheus.NewDesc(CapacityReportAgeName,
			"Seconds since the management cluster's capacity was last reported (scheduling status.observedResources.lastReportedAt); absent when it never was. Never negative: a report dated ahead by up to the clock-skew allowance reads 0, one dated further ahead +Inf, as placement does not believe it (StaleCapacityData).",
			mc, nil),
		oldestReservation: prometheus.NewDesc(OldestReservationAgeName,
			"Age in seconds of the oldest reservation (status.pendingAssignedClusters) the management cluster holds, from the reserved cluster's spec.managementClusterPlacementTime, else its systemData.createdAt; absent without reservations of known age.",
			mc, nil),
		ceiling: prometheus.NewDesc(ScaleCeilingName,
			"The most of a counted resource the management cluster may hold (scheduling status.scaleCeiling.capacity), in units of the resource.",
			[]string{labelManagementClusterResource, labelResource}, nil),
		usage: prometheus.NewDesc(UsageName,
			"What the management cluster last reported using of a counted resource (scheduling status.observedResources.usage), in units of the resource.",
			[]string{labelManagementClusterResource, labelResource}, nil),
		available: prometheus.NewDesc(AvailableCapacityName,
			"What a management cluster has left of a counted resource for new HCPs: scale ceiling minus the larger of usage and requests, minus the cost of each not-ready HCP and reservation (can be negative).",
			[]string{labelManagementClusterResource, labelResource}, nil),
		pending: prometheus.NewDesc(PendingReservationsName,
			"Reservations (pendingAssignedClusters) a management cluster holds for placed HCPs it has not reported yet.",
			mc, nil),
		costSource: prometheus.NewDesc(CostSourceName,
			"Where placement's per-HCP costs come from: 1 for the source in use (flags or hcpresourcerequirements), with the reason the HCPResourceRequirements document was not used when the configuration asked for it (fallback_reason, empty otherwise).",
			[]string{"source", "fallback_reason"}, nil),
	}
}

func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.info, c.created, c.placed, c.headroom, c.reportAge, c.oldestReservation, c.ceiling, c.usage, c.available, c.pending, c.costSource} {
		ch <- d
	}
}

func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	now := c.now()
	c.collectClusters(ch)
	// One view per scrape, shared by every MC-level metric.
	view := c.snapshot.Current()
	c.collectHeadroom(ch, view, now)
	c.collectManagementClusters(ch, view, now)
	c.collectCapacity(ch, view)
	c.collectCostSource(ch, view)
}

func (c *Collector) collectClusters(ch chan<- prometheus.Metric) {
	for _, cluster := range c.clusters.List() {
		if api.ClusterDeleting(cluster) {
			continue
		}
		rid, err := cluster.ParsedResourceID()
		if err != nil {
			continue
		}
		id := rid.Key()
		var intended, observed string
		var placedAt time.Time
		var unmappable bool
		if spc, err := c.spcs.Get(api.ServiceProviderClusterID(rid)); err == nil {
			intended = spc.Properties.IntendedManagementCluster()
			observed = spc.Properties.ObservedManagementCluster()
			if spc.Properties.Spec != nil {
				placedAt = spc.Properties.Spec.ManagementClusterPlacementTime
			}
			unmappable = placement.UnmappableRecorded(cluster, spc)
		}
		state := placementState(intended, observed)
		if state == PlacementUnplaced && unmappable {
			state = PlacementUnmappable
		}
		ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1,
			id, strings.ToLower(rid.SubscriptionID), strings.ToLower(intended), state)
		if sd := cluster.Properties.SystemData; sd != nil && !sd.CreatedAt.IsZero() {
			ch <- prometheus.MustNewConstMetric(c.created, prometheus.GaugeValue, unixSeconds(sd.CreatedAt), id)
		}
		if intended != "" && !placedAt.IsZero() {
			ch <- prometheus.MustNewConstMetric(c.placed, prometheus.GaugeValue, unixSeconds(placedAt), id)
		}
	}
}

// placementState compares placement's intent with what Cluster Service was observed to
// do, ignoring case: resource IDs are case-insensitive.
func placementState(intended, observed string) string {
	switch {
	case intended == "":
		return PlacementUnplaced
	case observed == "" || strings.EqualFold(intended, observed):
		return PlacementPlaced
	default:
		return PlacementMismatch
	}
}

// headroomCluster is the hypothetical cluster headroom is counted in: a SWIFT HA one,
// the costliest kind.
var headroomCluster = placement.Cluster{Swift: true}

// collectHeadroom exports the region's headroom: the sum of every MC's Headroom.
func (c *Collector) collectHeadroom(ch chan<- prometheus.Metric, view *candidates.View, now time.Time) {
	var total int64
	for _, n := range Headroom(view, now) {
		total += n
	}
	ch <- prometheus.MustNewConstMetric(c.headroom, prometheus.GaugeValue, float64(total))
}

// Headroom is how many more SWIFT HA HCPs each of view's MCs holds, in view.MCs' order.
// It asks the engine to place a hypothetical SWIFT HA cluster: every MC it rejects only
// for capacity, or accepts, is eligible, and holds as many such HCPs as its scarcest
// counted resource allows; every other MC holds none. The backend's headroom gauge and
// `hcpsched capacity` both count with it.
func Headroom(view *candidates.View, now time.Time) []int64 {
	d := view.Model.Decide(headroomCluster, view.MCs, now)
	cost := view.Model.Cost(headroomCluster)
	out := make([]int64, d.Len())
	for i, v := range d.Verdicts() {
		if v.Reason != "" && v.Reason != placement.ReasonInsufficientCapacity {
			continue
		}
		if available, ok := v.MC.Available(); ok {
			out[i] = fits(available, cost)
		}
	}
	return out
}

// fits is how many HCPs of the given cost the available milli-units hold, never
// negative.
func fits(available, cost []int64) int64 {
	n := int64(-1)
	for i, need := range cost {
		if need <= 0 {
			continue
		}
		k := max(available[i]/need, 0)
		if n < 0 || k < n {
			n = k
		}
	}
	return max(n, 0)
}

func (c *Collector) collectManagementClusters(ch chan<- prometheus.Metric, view *candidates.View, now time.Time) {
	for _, mc := range view.MCs {
		if mc.Scheduling == nil || mc.Scheduling.Properties.Status == nil {
			continue
		}
		st := mc.Scheduling.Properties.Status
		id := strings.ToLower(mc.ID())
		if or := st.ObservedResources; or != nil && !or.LastReportedAt.IsZero() {
			ch <- prometheus.MustNewConstMetric(c.reportAge, prometheus.GaugeValue, ReportAge(or.LastReportedAt, now), id)
		}
		for _, name := range view.Model.Resources() {
			if st.ScaleCeiling != nil {
				c.quantity(ch, c.ceiling, st.ScaleCeiling.Capacity, name, id)
			}
			if st.ObservedResources != nil {
				c.quantity(ch, c.usage, st.ObservedResources.Usage, name, id)
			}
		}
		if oldest, ok := c.OldestReservedAt(st.PendingAssignedClusters); ok {
			ch <- prometheus.MustNewConstMetric(c.oldestReservation, prometheus.GaugeValue, now.Sub(oldest).Seconds(), id)
		}
	}
}

// ReportAge is how old a capacity report is, in seconds, never negative: a negative age
// would keep CapacityReportStale quiet for ever. A report dated within the clock-skew
// allowance ahead is as fresh as one taken now. One dated further ahead cannot be dated
// at all; placement rejects it as stale, so its age is +Inf, past every threshold, and
// the alert fires for it as for any MC placement no longer considers.
func ReportAge(reported, now time.Time) float64 {
	if placement.ReportedInFuture(reported, now) {
		return math.Inf(1)
	}
	return max(now.Sub(reported).Seconds(), 0)
}

// quantity exports one resource of a reported list; an absent quantity, or one placement
// cannot count, exports nothing rather than a misleading figure. Parsing as placement
// does also keeps MilliValue from wrapping on a huge quantity.
func (c *Collector) quantity(ch chan<- prometheus.Metric, desc *prometheus.Desc, list api.ResourceList, name, mc string) {
	raw, ok := list[name]
	if !ok {
		return
	}
	q, err := placement.ParseQuantity(raw)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(q.MilliValue())/1000, mc, name)
}

// OldestReservedAt is when the oldest of the reservations was taken. Placement stamps
// the SPC right after reserving; a reservation whose SPC has no stamp (a crash between
// the two writes) is dated by its cluster's creation, which is earlier, so the age errs
// towards alerting.
func (c *Collector) OldestReservedAt(pending []string) (time.Time, bool) {
	var oldest time.Time
	for _, entry := range pending {
		at, ok := c.reservedAt(entry)
		if ok && (oldest.IsZero() || at.Before(oldest)) {
			oldest = at
		}
	}
	return oldest, !oldest.IsZero()
}

func (c *Collector) reservedAt(clusterID string) (time.Time, bool) {
	rid, err := api.ParseResourceID(clusterID)
	if err != nil {
		return time.Time{}, false
	}
	spc, err := c.spcs.Get(api.ServiceProviderClusterID(rid))
	if err == nil && spc.Properties.Spec != nil && !spc.Properties.Spec.ManagementClusterPlacementTime.IsZero() {
		return spc.Properties.Spec.ManagementClusterPlacementTime, true
	}
	if err != nil && !errors.Is(err, database.ErrNotFound) {
		return time.Time{}, false
	}
	cluster, err := c.clusters.Get(rid.String())
	if err != nil || cluster.Properties.SystemData == nil || cluster.Properties.SystemData.CreatedAt.IsZero() {
		return time.Time{}, false
	}
	return cluster.Properties.SystemData.CreatedAt, true
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
