package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/placement"
)

func explainVerb() verb {
	return verb{
		name:    "explain",
		usage:   "explain CLUSTER",
		summary: "Why a cluster (its ARM resource ID) is placed where it is, or not: its ServiceProviderCluster's intent, observed placement and condition, its reservations and Cluster Service IDs, what the backend does with it now, and the engine's verdict on every management cluster now.",
		minArgs: 1,
		maxArgs: 1,
		run:     runExplain,
	}
}

// What the backend's placement does with a cluster now, in the order its reconcile asks
// (backend/controllers/placement_controller.go): the action of explainBackend.
const (
	// actionDeleting: the cluster is being deleted; nothing is placed or reserved.
	actionDeleting = "deleting"
	// actionWaitingForSPC: CreateServiceProviderCluster has not created its SPC yet
	// (or the cache has not seen it); placement waits for it.
	actionWaitingForSPC = "waitingForServiceProviderCluster"
	// actionPlaced: the SPC has an intent; placement never moves it.
	actionPlaced = "placed"
	// actionReplace: the intended MC is gone (or lost its provision shard) before
	// Cluster Service created the cluster; placement withdraws the intent and places
	// the cluster again (backend/controllers/placement_replacement.go).
	actionReplace = "replace"
	// actionAdoption: Cluster Service already has the cluster; ClusterServiceAdoption,
	// not placement, sets its intent to where Cluster Service put it.
	actionAdoption = "adoption"
	// actionUnmappable: its clusterServiceID does not resolve in Cluster Service;
	// hcpsched neither places nor adopts it.
	actionUnmappable = "unmappable"
	// actionTerminal: a Failed or Canceled cluster has no control plane to place.
	actionTerminal = "terminal"
	// actionPlace: placement places it on the chosen MC.
	actionPlace = "place"
	// actionWait: it fits nowhere; placement records why and waits for capacity.
	actionWait = "wait"
)

// explainReport is one cluster as the backend's placement sees it now.
type explainReport struct {
	ResourceID string `json:"resourceID"`
	// Kind is "SWIFT HA", "SWIFT single-replica", "non-SWIFT HA" or "non-SWIFT
	// single-replica"; Cost is what its control plane costs of each of Resources, as
	// the engine's model counts it.
	Kind              string   `json:"kind"`
	Resources         []string `json:"resources"`
	Cost              []string `json:"cost"`
	ProvisioningState string   `json:"provisioningState"`
	Deleting          bool     `json:"deleting"`
	// ServiceProviderCluster is absent while the cluster has none.
	ServiceProviderCluster *explainSPC `json:"serviceProviderCluster,omitempty"`
	// Reservations are the MCs whose status.pendingAssignedClusters list the cluster.
	Reservations            []explainReservation `json:"reservations"`
	PendingClusterServiceID string               `json:"pendingClusterServiceID,omitempty"`
	ClusterServiceID        string               `json:"clusterServiceID,omitempty"`
	Backend                 explainBackend       `json:"backend"`
	Decision                explainDecision      `json:"decision"`
}

// explainSPC is what the SPC says of the cluster's placement.
type explainSPC struct {
	// Intent is spec.managementClusterResourceID (placement's choice) and PlacementTime
	// spec.managementClusterPlacementTime; Observed is status.managementClusterResourceID
	// (where Cluster Service put it). Mismatch: both set and different.
	Intent        string     `json:"intent,omitempty"`
	PlacementTime *time.Time `json:"placementTime,omitempty"`
	Observed      string     `json:"observed,omitempty"`
	Mismatch      bool       `json:"mismatch"`
	// CapacityAvailable is status.placement.conditions[CapacityAvailable] as stored.
	CapacityAvailable *explainCondition `json:"capacityAvailable,omitempty"`
}

type explainCondition struct {
	Status             string    `json:"status"`
	Reason             string    `json:"reason"`
	Message            string    `json:"message"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
}

// explainReservation is one MC holding a reservation for the cluster, and whether
// PendingCleanup keeps it, and why (its rules, judged from the caches).
type explainReservation struct {
	ManagementCluster string `json:"managementCluster"`
	Stamp             string `json:"stamp"`
	Kept              bool   `json:"kept"`
	Why               string `json:"why"`
}

// explainBackend is what the backend does with the cluster now: Action is one of the
// action constants, Summary says it in a sentence.
type explainBackend struct {
	Action  string `json:"action"`
	Summary string `json:"summary"`
}

// explainDecision is the engine's decision for the cluster now, from the backend's
// snapshot with the backend's configuration. WhatIf: the backend does not act on it
// (Backend says why).
type explainDecision struct {
	WhatIf   bool             `json:"whatIf"`
	Outcome  string           `json:"outcome"`
	Chosen   string           `json:"chosen,omitempty"`
	Reused   bool             `json:"reusedReservation"`
	Message  string           `json:"message"`
	Verdicts []explainVerdict `json:"verdicts"`
}

// Verdicts of explainVerdict.
const (
	verdictChosen   = "chosen"
	verdictFeasible = "feasible"
	verdictRejected = "rejected"
)

// explainVerdict is one MC's judgement.
type explainVerdict struct {
	ResourceID string `json:"resourceID"`
	Stamp      string `json:"stamp"`
	// Verdict is chosen, feasible or rejected; Score ranks the first two (higher is
	// better), Reason and Detail say why an MC was rejected.
	Verdict string   `json:"verdict"`
	Score   *float64 `json:"score,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Detail  string   `json:"detail,omitempty"`
	// Available is what the MC has left of each counted resource before this cluster,
	// empty when it cannot be counted; Reservations how many reservations it holds, and
	// HoldsThisCluster whether one of them is this cluster's.
	Available        []string `json:"available"`
	Reservations     int      `json:"reservations"`
	HoldsThisCluster bool     `json:"holdsThisCluster"`
}

func runExplain(ctx context.Context, c *command, args []string) (result, error) {
	id, err := parseClusterArg(args[0])
	if err != nil {
		return nil, err
	}
	r, err := c.loadRegion(ctx)
	if err != nil {
		return nil, err
	}
	return r.explain(id)
}

// parseClusterArg checks that arg is a cluster's ARM resource ID before anything is read.
func parseClusterArg(arg string) (*api.ResourceID, error) {
	const shape = "/subscriptions/{subscription}/resourceGroups/{group}/providers/" + api.ClusterResourceType + "/{name}"
	rid, err := api.ParseResourceID(arg)
	if err != nil {
		return nil, usagef("CLUSTER must be a cluster's ARM resource ID, %s: %v", shape, err)
	}
	if rid.SubscriptionID != "" && rid.ResourceGroup != "" && strings.EqualFold(rid.ResourceType(), api.ClusterResourceType) {
		return rid, nil
	}
	if cluster, ok := rid.Ancestor(api.ClusterResourceType); ok && cluster.SubscriptionID != "" && cluster.ResourceGroup != "" {
		return nil, usagef("%q is a %s, not a cluster; its cluster is %s", arg, rid.ResourceType(), cluster)
	}
	return nil, usagef("%q is a %s, not a cluster: CLUSTER must be %s", arg, rid.ResourceType(), shape)
}

func (r *region) explain(id *api.ResourceID) (*explainReport, error) {
	cluster, err := r.caches.Clusters().Lister().Get(id.String())
	if errors.Is(err, database.ErrNotFound) {
		return nil, fmt.Errorf("cluster %s: %w (the region has %d clusters)", id, errNotFound, len(r.caches.Clusters().Lister().List()))
	}
	if err != nil {
		return nil, err
	}
	rid, err := cluster.ParsedResourceID()
	if err != nil {
		return nil, fmt.Errorf("cached cluster %s: %w", id, err)
	}
	spc, err := r.caches.ServiceProviderClusters().Lister().Get(api.ServiceProviderClusterID(rid))
	switch {
	case errors.Is(err, database.ErrNotFound):
		spc = nil
	case err != nil:
		return nil, err
	}
	view := r.snapshot.Current()
	want := placement.ClusterOf(rid.String(), cluster)
	sp := cluster.Properties.ServiceProvider()
	out := &explainReport{
		ResourceID:              cluster.ResourceID,
		Kind:                    want.Kind(),
		Resources:               view.Model.Resources(),
		Cost:                    formatMilli(view.Model.Cost(want)),
		ProvisioningState:       sp.ProvisioningState,
		Deleting:                api.ClusterDeleting(cluster),
		Reservations:            []explainReservation{},
		PendingClusterServiceID: sp.PendingClusterServiceID,
		ClusterServiceID:        sp.ClusterServiceID,
	}
	if spc != nil {
		out.ServiceProviderCluster = explainServiceProviderCluster(spc)
	}
	holders, err := r.reservationHolders(rid)
	if err != nil {
		return nil, err
	}
	for _, mc := range holders {
		kept, why := reservationFate(cluster, spc, mc)
		out.Reservations = append(out.Reservations, explainReservation{ManagementCluster: mc, Stamp: stampOf(mc), Kept: kept, Why: why})
	}

	// Exactly the backend's decision (placement_controller.go's reconcile).
	decision := view.Model.Decide(want, view.MCs, r.now)
	out.Backend = backendAction(cluster, spc, decision, r.hasProvisionShard)
	out.Decision = explainDecision{
		WhatIf:   out.Backend.Action != actionPlace && out.Backend.Action != actionWait,
		Outcome:  string(decision.Outcome),
		Reused:   decision.Reused,
		Message:  decision.Message(),
		Verdicts: explainVerdicts(decision, want),
	}
	if decision.Chosen != nil {
		out.Decision.Chosen = decision.Chosen.ID()
	}
	return out, nil
}

func explainServiceProviderCluster(spc *api.ServiceProviderCluster) *explainSPC {
	p := spc.Properties
	out := &explainSPC{Intent: p.IntendedManagementCluster(), Observed: p.ObservedManagementCluster()}
	out.Mismatch = out.Intent != "" && out.Observed != "" && !api.ResourceIDsEqual(out.Intent, out.Observed)
	if p.Spec != nil && !p.Spec.ManagementClusterPlacementTime.IsZero() {
		t := p.Spec.ManagementClusterPlacementTime
		out.PlacementTime = &t
	}
	if p.Status != nil && p.Status.Placement != nil {
		if c := api.FindCondition(p.Status.Placement.Conditions, placement.ConditionCapacityAvailable); c != nil {
			out.CapacityAvailable = &explainCondition{Status: c.Status, Reason: c.Reason, Message: c.Message, LastTransitionTime: c.LastTransitionTime}
		}
	}
	return out
}

// backendAction is what placement's reconcile does with the cluster now, asked in its
// order: a deleting cluster or one without an SPC gets nothing, an intent is never
// moved (unless its MC vanished before Cluster Service got the cluster), a cluster
// Cluster Service has is adopted, a terminal one is left, and the rest is placed by
// the decision or waits. hasShard says whether the cache has an MC with its provision
// shard, as the replacement check first asks.
func backendAction(cluster *api.Cluster, spc *api.ServiceProviderCluster, d placement.Decision, hasShard func(mcID string) bool) explainBackend {
	sp := cluster.Properties.ServiceProvider()
	switch {
	case api.ClusterDeleting(cluster):
		return explainBackend{actionDeleting, "nothing: the cluster is being deleted, so nothing is placed or reserved for it"}
	case spc == nil:
		return explainBackend{actionWaitingForSPC, "waiting for its ServiceProviderCluster (CreateServiceProviderCluster creates it); placement starts once it exists"}
	}
	if intent := spc.Properties.IntendedManagementCluster(); intent != "" {
		if sp.ClusterServiceID == "" && spc.Properties.ObservedManagementCluster() == "" && !hasShard(intent) {
			return explainBackend{actionReplace, fmt.Sprintf("placed on %s, which is not in the region or has no provision shard, before Cluster Service created the cluster: "+
				"placement withdraws the intent and places it again once the store confirms it and Cluster Service does not have the cluster", shortMC(intent))}
		}
		return explainBackend{actionPlaced, fmt.Sprintf("placed on %s; placement does not move it", shortMC(intent))}
	}
	switch {
	case sp.ClusterServiceID != "" && placement.UnmappableRecorded(cluster, spc):
		return explainBackend{actionUnmappable, fmt.Sprintf("nothing: clusterServiceID %s does not resolve in Cluster Service; hcpsched neither places nor adopts it", sp.ClusterServiceID)}
	case sp.ClusterServiceID != "":
		return explainBackend{actionAdoption, fmt.Sprintf("adoption: Cluster Service already has it (clusterServiceID %s); ClusterServiceAdoption sets its intent to where Cluster Service put it, placement does not place it", sp.ClusterServiceID)}
	case api.ClusterEnded(cluster):
		return explainBackend{actionTerminal, fmt.Sprintf("nothing: provisioning state %s ends its life without a control plane to place", sp.ProvisioningState)}
	case d.Chosen != nil && d.Reused:
		return explainBackend{actionPlace, fmt.Sprintf("place on %s, reusing the reservation it holds there, then record the intent", shortMC(d.Chosen.ID()))}
	case d.Chosen != nil:
		return explainBackend{actionPlace, fmt.Sprintf("place on %s: reserve there, then record the intent", shortMC(d.Chosen.ID()))}
	}
	return explainBackend{actionWait, "fits nowhere: " + d.Message() + "; it waits until a management cluster changes so that it fits"}
}

// hasProvisionShard says whether the cache has the MC with a provision shard, as
// placement's replacement check first asks.
func (r *region) hasProvisionShard(mcID string) bool {
	mc, err := r.caches.ManagementClusters().Lister().Get(mcID)
	return err == nil && mc.Properties.Status != nil && mc.Properties.Status.ClusterServiceProvisionShardID != ""
}

// explainVerdicts is every MC's verdict: the chosen MC first, then the feasible by
// score (best first), then the rejected, each in stamp order.
func explainVerdicts(d placement.Decision, c placement.Cluster) []explainVerdict {
	out := make([]explainVerdict, 0, d.Len())
	for _, v := range d.Verdicts() {
		ev := explainVerdict{
			ResourceID:       v.ManagementCluster(),
			Stamp:            stampOf(v.ManagementCluster()),
			Reservations:     v.MC.Reservations(),
			HoldsThisCluster: v.MC.Holds(c.ResourceID),
			Available:        []string{},
		}
		if available, ok := v.MC.Available(); ok {
			ev.Available = formatMilli(available)
		}
		switch {
		case v.Reason != "":
			ev.Verdict, ev.Reason, ev.Detail = verdictRejected, string(v.Reason), v.Detail()
		case d.Chosen == v.MC:
			ev.Verdict = verdictChosen
		default:
			ev.Verdict = verdictFeasible
		}
		if v.Reason == "" {
			score := v.Score
			ev.Score = &score
		}
		out = append(out, ev)
	}
	rank := map[string]int{verdictChosen: 0, verdictFeasible: 1, verdictRejected: 2}
	slices.SortStableFunc(out, func(a, b explainVerdict) int {
		if n := cmp.Compare(rank[a.Verdict], rank[b.Verdict]); n != 0 {
			return n
		}
		if a.Score != nil && b.Score != nil {
			if n := cmp.Compare(*b.Score, *a.Score); n != 0 {
				return n
			}
		}
		return api.CompareNatural(a.Stamp, b.Stamp)
	})
	return out
}

func (e *explainReport) table(w *tabwriter.Writer) {
	deleting := yesNo(e.Deleting)
	row(w, "cluster:", e.ResourceID)
	row(w, "kind:", e.Kind+" ("+costText(e.Resources, e.Cost)+" per control plane)")
	row(w, "provisioning state:", dash(e.ProvisioningState))
	row(w, "deleting:", deleting)
	fmt.Fprintln(w)

	if s := e.ServiceProviderCluster; s == nil {
		fmt.Fprintln(w, "ServiceProviderCluster: none yet")
	} else {
		fmt.Fprintln(w, "ServiceProviderCluster:")
		intent := "none (not placed)"
		if s.Intent != "" {
			intent = shortMC(s.Intent) + " (" + s.Intent + ")"
			if s.PlacementTime != nil {
				intent += ", placed " + timeText(*s.PlacementTime)
			}
		}
		row(w, "  intent:", intent)
		observed := "not yet observed"
		if s.Observed != "" {
			observed = shortMC(s.Observed) + " (" + s.Observed + ")"
		}
		if s.Mismatch {
			observed += "  MISMATCH: Cluster Service put it elsewhere than placement chose"
		}
		row(w, "  observed:", observed)
		if c := s.CapacityAvailable; c == nil {
			row(w, "  CapacityAvailable:", "not set")
		} else {
			row(w, "  CapacityAvailable:", fmt.Sprintf("%s, reason %s, lastTransitionTime %s", c.Status, c.Reason, timeText(c.LastTransitionTime)))
			row(w, "  message:", c.Message)
		}
	}
	fmt.Fprintln(w)

	switch len(e.Reservations) {
	case 0:
		row(w, "reservations:", "none")
	default:
		for i, res := range e.Reservations {
			label := ""
			if i == 0 {
				label = "reservations:"
			}
			fate := "PendingCleanup keeps it: " + res.Why
			if !res.Kept {
				fate = "PendingCleanup releases it: " + res.Why
			}
			row(w, label, shortMC(res.ManagementCluster)+" ("+fate+")")
		}
	}
	if len(e.Reservations) > 1 {
		row(w, "", fmt.Sprintf("WARNING: %d management clusters hold a reservation for this cluster; each holds its capacity until released", len(e.Reservations)))
	}
	row(w, "pendingClusterServiceID:", dash(e.PendingClusterServiceID))
	row(w, "clusterServiceID:", dash(e.ClusterServiceID))
	fmt.Fprintln(w)

	fmt.Fprintln(w, "backend now: "+e.Backend.Summary)
	fmt.Fprintln(w)
	d := e.Decision
	choice := "fits nowhere (" + d.Outcome + ")"
	if d.Chosen != "" {
		choice = "would choose " + shortMC(d.Chosen)
		if d.Reused {
			choice += ", reusing its reservation there"
		}
	}
	if d.WhatIf {
		fmt.Fprintf(w, "engine now (what-if: the backend does not act on it): %s\n", choice)
	} else {
		fmt.Fprintf(w, "engine now: %s\n", choice)
	}
	if len(d.Verdicts) == 0 {
		fmt.Fprintln(w, d.Message)
		return
	}
	row(w, "STAMP", "AVAILABLE("+strings.Join(e.Resources, ",")+")", "RESERVATIONS", "VERDICT")
	for _, v := range d.Verdicts {
		reservations := strconv.Itoa(v.Reservations)
		if v.HoldsThisCluster {
			reservations += " (one is this cluster's)"
		}
		row(w, v.Stamp, list(v.Available), reservations, verdictCell(v))
	}
}

func verdictCell(v explainVerdict) string {
	switch v.Verdict {
	case verdictRejected:
		if v.Detail != "" {
			return v.Reason + ": " + v.Detail
		}
		return v.Reason
	case verdictChosen, verdictFeasible:
		return fmt.Sprintf("%s, score %s", v.Verdict, scoreText(*v.Score))
	}
	return v.Verdict
}

// costText pairs each counted resource with its quantity: "aro.openshift.io/swift-nic=3".
func costText(resources, quantities []string) string {
	parts := make([]string, len(resources))
	for i, name := range resources {
		q := "?"
		if i < len(quantities) {
			q = quantities[i]
		}
		parts[i] = name + "=" + q
	}
	return strings.Join(parts, ", ")
}

func formatMilli(values []int64) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = placement.FormatMilli(v)
	}
	return out
}

// scoreText is a score to a thousandth, without trailing zeros.
func scoreText(s float64) string {
	return strconv.FormatFloat(math.Round(s*1000)/1000, 'f', -1, 64)
}

// shortMC is "stamp N" for a stamp's MC, the ID itself otherwise.
func shortMC(id string) string {
	if s := stampOf(id); s != id {
		return "stamp " + s
	}
	return id
}

func timeText(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
