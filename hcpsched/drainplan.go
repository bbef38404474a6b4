package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

func drainPlanVerb() verb {
	return verb{
		name:    "drain-plan",
		usage:   "drain-plan MC",
		summary: "What-if, writes nothing: where placement would put each cluster intended for, observed on or reserved on the management cluster if it had to move now, with the MC treated as cordoned and each move charged to its destination before the next is planned. MC is the stamp identifier or the MC's resource ID.",
		minArgs: 1, maxArgs: 1,
		run: runDrainPlan,
	}
}

// drainOrder is the order clusters are planned in, as the output states it.
const drainOrder = "costliest first (compared resource by resource, in the order of --placement-resource-costs), then by lowercased resource ID"

// drainPlan is where an MC's clusters would go.
type drainPlan struct {
	ManagementCluster string   `json:"managementCluster"`
	Stamp             string   `json:"stamp"`
	Resources         []string `json:"resources"`
	// Order is the order the clusters were planned in, which is theirs in Clusters.
	Order    string      `json:"order"`
	Clusters []drainMove `json:"clusters"`
	// Movable clusters have a destination, Stuck ones none; LeftOut are being deleted
	// and were not planned.
	Movable      int                `json:"movable"`
	Stuck        int                `json:"stuck"`
	LeftOut      int                `json:"leftOut"`
	Destinations []drainDestination `json:"destinations"`
}

// drainMove is one cluster's planned move.
type drainMove struct {
	ResourceID string `json:"resourceID"`
	// Kind is the cluster's cost class; Cost what it costs of each counted resource.
	Kind string   `json:"kind"`
	Cost []string `json:"cost"`
	// On says why the cluster is the MC's: its SPC's intent, its observed placement, a
	// reservation on the MC's scheduling document.
	On []string `json:"on"`
	// Outcome is the engine's outcome (placed, capacity_exhausted, no_eligible,
	// stale_data), or "deleting" for a cluster not planned.
	Outcome          string `json:"outcome"`
	Destination      string `json:"destination,omitempty"`
	DestinationStamp string `json:"destinationStamp,omitempty"`
	// ReusesReservation: the cluster already holds a reservation on the destination,
	// which the engine reuses; nothing more is charged there.
	ReusesReservation bool `json:"reusesReservation,omitempty"`
	// Reason is why nothing fits: the engine's message, naming each MC's reason.
	Reason string `json:"reason,omitempty"`
}

// drainDestination counts the moves planned to one MC.
type drainDestination struct {
	ManagementCluster string `json:"managementCluster"`
	Stamp             string `json:"stamp"`
	Clusters          int    `json:"clusters"`
}

func runDrainPlan(ctx context.Context, c *command, args []string) (result, error) {
	rid, err := parseManagementClusterArg(args[0])
	if err != nil {
		return nil, err
	}
	r, err := c.loadRegion(ctx)
	if err != nil {
		return nil, err
	}
	return r.drainPlan(rid, args[0])
}

// drainee is one cluster of the drained MC.
type drainee struct {
	id       string
	key      string
	on       []string
	cluster  placement.Cluster
	known    bool
	deleting bool
	cost     []int64
}

// drainPlan plans the move of every cluster of the MC rid names, from the region's
// cached documents and with the engine the backend decides with. Nothing is written:
// each planned move is charged to its destination by parsing that MC again (NewMC) from a
// copy of its scheduling document with the cluster appended to pendingAssignedClusters,
// exactly as a reservation would charge it, so the arithmetic is the engine's own.
func (r *region) drainPlan(rid *api.ResourceID, arg string) (*drainPlan, error) {
	view := r.snapshot.Current()
	if _, err := r.managementCluster(rid, arg); err != nil {
		return nil, err
	}
	drained := slices.IndexFunc(view.MCs, func(mc *placement.MC) bool { return api.ResourceIDsEqual(mc.ID(), rid.String()) })
	lookup := r.snapshot.Lookup
	mcs := slices.Clone(view.MCs)
	source := mcs[drained]
	cordoned := source.ManagementCluster.DeepCopy()
	if cordoned.Properties.Spec == nil {
		cordoned.Properties.Spec = &api.ManagementClusterSpec{}
	}
	cordoned.Properties.Spec.SchedulingPolicy = api.Unschedulable
	mcs[drained] = view.Model.NewMC(cordoned, source.Scheduling, lookup)

	plan := &drainPlan{
		ManagementCluster: source.ID(),
		Stamp:             stampOf(source.ID()),
		Resources:         view.Model.Resources(),
		Order:             drainOrder,
		Clusters:          []drainMove{},
		Destinations:      []drainDestination{},
	}
	drainees := r.draineesOf(source, view.Model)
	perDestination := map[string]*drainDestination{}
	for _, d := range drainees {
		move := drainMove{ResourceID: d.id, Kind: drainKindText(d.cluster, d.known), On: d.on, Cost: formatMilli(d.cost)}
		if d.deleting {
			move.Outcome, move.Reason = "deleting", "the cluster is being deleted: nothing to move"
			plan.LeftOut++
			plan.Clusters = append(plan.Clusters, move)
			continue
		}
		decision := view.Model.Decide(d.cluster, mcs, r.now)
		move.Outcome = string(decision.Outcome)
		if decision.Chosen == nil {
			move.Reason = decision.Message()
			plan.Stuck++
			plan.Clusters = append(plan.Clusters, move)
			continue
		}
		chosen := decision.Chosen
		move.Destination, move.DestinationStamp, move.ReusesReservation = chosen.ID(), stampOf(chosen.ID()), decision.Reused
		plan.Movable++
		dest := perDestination[strings.ToLower(chosen.ID())]
		if dest == nil {
			dest = &drainDestination{ManagementCluster: chosen.ID(), Stamp: stampOf(chosen.ID())}
			perDestination[strings.ToLower(chosen.ID())] = dest
		}
		dest.Clusters++
		plan.Clusters = append(plan.Clusters, move)
		if !decision.Reused {
			i := slices.Index(mcs, chosen)
			mcs[i] = view.Model.NewMC(chosen.ManagementCluster, reserved(chosen.Scheduling, d.key), lookup)
		}
	}
	for _, dest := range perDestination {
		plan.Destinations = append(plan.Destinations, *dest)
	}
	slices.SortFunc(plan.Destinations, func(a, b drainDestination) int { return api.CompareNatural(a.Stamp, b.Stamp) })
	return plan, nil
}

// reserved is a copy of a scheduling document with one more reservation, as placement's
// reservation write would store it (the lowercased cluster resource ID appended).
func reserved(sched *api.ManagementClusterScheduling, key string) *api.ManagementClusterScheduling {
	out := sched.DeepCopy()
	if out.Properties.Status == nil {
		out.Properties.Status = &api.SchedulingStatus{}
	}
	st := out.Properties.Status
	st.PendingAssignedClusters = append(slices.Clone(st.PendingAssignedClusters), key)
	return out
}

// draineesOf are the clusters whose SPC intent or observed placement is mc, or that hold
// a reservation on it, in planning order.
func (r *region) draineesOf(mc *placement.MC, model *placement.Model) []*drainee {
	byKey := map[string]*drainee{}
	add := func(id, why string) {
		key := strings.ToLower(id)
		d := byKey[key]
		if d == nil {
			d = &drainee{id: id, key: key}
			byKey[key] = d
		}
		if !slices.Contains(d.on, why) {
			d.on = append(d.on, why)
		}
	}
	for _, spc := range r.caches.ServiceProviderClusters().Lister().List() {
		intent := api.ResourceIDsEqual(spc.Properties.IntendedManagementCluster(), mc.ID())
		observed := api.ResourceIDsEqual(spc.Properties.ObservedManagementCluster(), mc.ID())
		if !intent && !observed {
			continue
		}
		cluster := clusterOfSPC(spc)
		if intent {
			add(cluster, "intent")
		}
		if observed {
			add(cluster, "observed")
		}
	}
	if mc.Scheduling != nil && mc.Scheduling.Properties.Status != nil {
		for _, id := range mc.Scheduling.Properties.Status.PendingAssignedClusters {
			if id != "" {
				add(id, "reserved")
			}
		}
	}
	clusters := r.caches.Clusters().Lister()
	out := make([]*drainee, 0, len(byKey))
	for _, d := range byKey {
		d.cluster = placement.Cluster{ResourceID: d.id, Swift: true}
		if c, err := clusters.Get(d.id); err == nil {
			d.id = c.ResourceID
			d.cluster, d.known, d.deleting = placement.ClusterOf(c.ResourceID, c), true, api.ClusterDeleting(c)
		}
		d.cost = model.Cost(d.cluster)
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *drainee) int {
		if c := slices.Compare(b.cost, a.cost); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	return out
}

// drainKindText names a cluster's cost class, or says it is costed as the costliest
// when the caches do not have it.
func drainKindText(c placement.Cluster, known bool) string {
	if !known {
		return "unknown (costed as SWIFT HA)"
	}
	return c.Kind()
}

func (p *drainPlan) table(w *tabwriter.Writer) {
	fmt.Fprintf(w, "drain plan for stamp %s (%s): what-if only, nothing is written\n\n", p.Stamp, p.ManagementCluster)
	row(w, "CLUSTER", "KIND", "COST("+strings.Join(p.Resources, ",")+")", "ON", "DESTINATION")
	ids := make([]string, len(p.Clusters))
	for i, m := range p.Clusters {
		ids[i] = m.ResourceID
	}
	label := clusterLabels(ids)
	for _, m := range p.Clusters {
		dest := m.DestinationStamp
		switch {
		case m.Outcome == "deleting":
			dest = "not planned: " + m.Reason
		case m.Destination == "":
			dest = "nowhere: " + m.Reason
		case m.ReusesReservation:
			dest += " (holds a reservation there)"
		}
		row(w, label(m.ResourceID), m.Kind, list(m.Cost), strings.Join(m.On, ","), dest)
	}
	_ = w.Flush()
	summary := fmt.Sprintf("\n%d clusters: %d movable, %d stuck", len(p.Clusters), p.Movable, p.Stuck)
	if p.LeftOut > 0 {
		summary += fmt.Sprintf(", %d being deleted (not planned)", p.LeftOut)
	}
	var to []string
	for _, d := range p.Destinations {
		to = append(to, fmt.Sprintf("stamp %s: %d", d.Stamp, d.Clusters))
	}
	if len(to) > 0 {
		summary += "; to " + strings.Join(to, ", ")
	}
	fmt.Fprintln(w, summary)
	fmt.Fprintf(w, "Planned %s; stamp %s counted as cordoned; each move is charged to its destination before the next is planned.\n", p.Order, p.Stamp)
}
