package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hcpsched/hcpsched/backend/controllers"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/informers"
	"github.com/hcpsched/hcpsched/internal/placement"
)

func clustersVerb() verb {
	return verb{
		name:    "clusters",
		usage:   "clusters --management-cluster MC",
		summary: "The clusters whose intent or observed placement is management cluster MC (stamp identifier or resource ID), mismatches marked, and its reservations for clusters neither intended nor observed there.",
		flags: func(fs *flag.FlagSet, o *verbOptions) {
			fs.StringVar(&o.managementCluster, "management-cluster", o.managementCluster, `The management cluster: its stamp identifier ("1") or its resource ID`)
		},
		run: runClusters,
	}
}

// Placement states of a cluster on an MC, as clusters lists them.
const (
	// statePlaced: intended and observed here.
	statePlaced = "placed"
	// stateNotYetObserved: intended here; Cluster Service has not been seen to put it
	// anywhere yet.
	stateNotYetObserved = "notYetObserved"
	// stateMismatch: intent and observed placement are both set and differ, one of them
	// here: Cluster Service did not honour the pin.
	stateMismatch = "mismatch"
	// stateObservedWithoutIntent: Cluster Service put it here and no intent is set yet
	// (ClusterServiceAdoption sets it).
	stateObservedWithoutIntent = "observedWithoutIntent"
)

// clustersReport is what an MC holds, as the SPCs and its scheduling document say.
type clustersReport struct {
	ManagementCluster string `json:"managementCluster"`
	Stamp             string `json:"stamp"`
	// Clusters are those whose intent or observed placement is the MC, in resource-ID
	// order.
	Clusters []clustersRow `json:"clusters"`
	// Mismatches counts the clusters in state mismatch.
	Mismatches int `json:"mismatches"`
	// OtherReservations are the MC's pendingAssignedClusters entries for clusters that
	// are neither intended nor observed there, with what PendingCleanup does with each.
	OtherReservations []clustersReservation `json:"otherReservations"`
}

type clustersRow struct {
	ResourceID string `json:"resourceID"`
	// Kind is empty when the cluster document is not in the region.
	Kind     string `json:"kind,omitempty"`
	Intent   string `json:"intent,omitempty"`
	Observed string `json:"observed,omitempty"`
	// State is placed, notYetObserved, mismatch or observedWithoutIntent.
	State string `json:"state"`
	// ReservedHere: the MC's pendingAssignedClusters list the cluster.
	ReservedHere            bool   `json:"reservedHere"`
	ClusterServiceID        string `json:"clusterServiceID,omitempty"`
	PendingClusterServiceID string `json:"pendingClusterServiceID,omitempty"`
	ProvisioningState       string `json:"provisioningState,omitempty"`
}

type clustersReservation struct {
	// Cluster is the entry as stored.
	Cluster  string `json:"cluster"`
	Intent   string `json:"intent,omitempty"`
	Observed string `json:"observed,omitempty"`
	// Kept says whether PendingCleanup keeps the reservation, and Why.
	Kept bool   `json:"kept"`
	Why  string `json:"why"`
}

func runClusters(ctx context.Context, c *command, _ []string) (result, error) {
	arg := c.opts.managementCluster
	if arg == "" {
		return nil, usagef("--management-cluster is required: %s", managementClusterShape)
	}
	rid, err := parseManagementClusterArg(arg)
	if err != nil {
		return nil, err
	}
	r, err := c.loadRegion(ctx)
	if err != nil {
		return nil, err
	}
	mc, err := r.managementCluster(rid, arg)
	if err != nil {
		return nil, err
	}
	return r.clusters(mc), nil
}

func (r *region) clusters(mc *placement.MC) *clustersReport {
	mcID := mc.ID()
	out := &clustersReport{
		ManagementCluster: mcID,
		Stamp:             stampOf(mcID),
		Clusters:          []clustersRow{},
		OtherReservations: []clustersReservation{},
	}
	var pending []string
	if mc.Scheduling != nil && mc.Scheduling.Properties.Status != nil {
		pending = mc.Scheduling.Properties.Status.PendingAssignedClusters
	}
	clusters := r.caches.Clusters().Lister()
	here := map[string]bool{}
	for _, spc := range r.caches.ServiceProviderClusters().Lister().List() {
		intent, observed := spc.Properties.IntendedManagementCluster(), spc.Properties.ObservedManagementCluster()
		if !api.ResourceIDsEqual(intent, mcID) && !api.ResourceIDsEqual(observed, mcID) {
			continue
		}
		clusterID := clusterOfSPC(spc)
		here[strings.ToLower(clusterID)] = true
		row := clustersRow{
			ResourceID:   clusterID,
			Intent:       intent,
			Observed:     observed,
			State:        stateOn(intent, observed),
			ReservedHere: mc.Holds(clusterID),
		}
		if cluster, err := clusters.Get(clusterID); err == nil {
			rid, err := cluster.ParsedResourceID()
			if err == nil {
				row.ResourceID = rid.String()
				row.Kind = placement.ClusterOf(rid.String(), cluster).Kind()
			}
			sp := cluster.Properties.ServiceProvider()
			row.ClusterServiceID, row.PendingClusterServiceID, row.ProvisioningState = sp.ClusterServiceID, sp.PendingClusterServiceID, sp.ProvisioningState
		}
		if row.State == stateMismatch {
			out.Mismatches++
		}
		out.Clusters = append(out.Clusters, row)
	}
	slices.SortStableFunc(out.Clusters, func(a, b clustersRow) int {
		return strings.Compare(strings.ToLower(a.ResourceID), strings.ToLower(b.ResourceID))
	})

	for _, entry := range pending {
		if here[strings.ToLower(entry)] {
			continue
		}
		out.OtherReservations = append(out.OtherReservations, r.otherReservation(entry, mcID))
	}
	return out
}

// clusterOfSPC is the cluster an SPC belongs to: its resource ID's parent.
func clusterOfSPC(spc *api.ServiceProviderCluster) string {
	rid, err := spc.ParsedResourceID()
	if err != nil {
		return spc.ResourceID
	}
	if cluster, ok := rid.Ancestor(api.ClusterResourceType); ok {
		return cluster.String()
	}
	return spc.ResourceID
}

// stateOn is the placement state of a cluster listed on an MC: its intent or observed
// placement is that MC.
func stateOn(intent, observed string) string {
	switch {
	case intent == "":
		return stateObservedWithoutIntent
	case observed == "":
		return stateNotYetObserved
	case api.ResourceIDsEqual(intent, observed):
		return statePlaced
	}
	return stateMismatch
}

// otherReservation is a reservation on mcID for a cluster neither intended nor
// observed there.
func (r *region) otherReservation(entry, mcID string) clustersReservation {
	out := clustersReservation{Cluster: entry}
	rid, err := api.ParseResourceID(entry)
	switch {
	case strings.TrimSpace(entry) == "":
		out.Why = "an empty entry"
		return out
	case err != nil:
		out.Why = "not a resource ID"
		return out
	}
	cluster, err := r.caches.Clusters().Lister().Get(rid.String())
	if err != nil {
		cluster = nil
	}
	spc, err := r.caches.ServiceProviderClusters().Lister().Get(api.ServiceProviderClusterID(rid))
	if err != nil {
		spc = nil
	}
	if spc != nil {
		out.Intent, out.Observed = spc.Properties.IntendedManagementCluster(), spc.Properties.ObservedManagementCluster()
	}
	out.Kept, out.Why = reservationFate(cluster, spc, mcID)
	return out
}

// reservationHolders are the MCs whose scheduling documents hold a reservation for the
// cluster, in stamp order.
func (r *region) reservationHolders(cluster *api.ResourceID) ([]string, error) {
	docs, err := r.caches.ManagementClusterSchedulings().Lister().ByIndex(informers.IndexByPendingCluster, informers.KeyOf(cluster.String()))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range docs {
		rid, err := d.ParsedResourceID()
		if err != nil {
			continue
		}
		if mc, ok := rid.Ancestor(api.ManagementClusterResourceType); ok {
			out = append(out, mc.String())
		}
	}
	slices.SortFunc(out, func(a, b string) int { return api.CompareNatural(stampOf(a), stampOf(b)) })
	return out, nil
}

// reservationFate is what PendingCleanup does with a reservation on mcID for a cluster,
// by its own rule (controllers.JudgeReservation), judged from the caches; cluster and spc
// are nil when the caches have none. PendingCleanup confirms a missing SPC with a point
// read before it releases. Where the cluster went instead is added to the reason.
func reservationFate(cluster *api.Cluster, spc *api.ServiceProviderCluster, mcID string) (kept bool, why string) {
	kept, why = controllers.JudgeReservation(cluster, spc, mcID)
	if spc == nil || kept {
		return kept, why
	}
	effective := spc.Properties.ObservedManagementCluster()
	if effective == "" {
		effective = spc.Properties.IntendedManagementCluster()
	}
	if effective != "" && !api.ResourceIDsEqual(effective, mcID) {
		why += ": " + shortMC(effective)
	}
	return kept, why
}

// stateText is a state as the table shows it: mismatches in capitals, to stand out.
func stateText(state string) string {
	switch state {
	case stateMismatch:
		return "MISMATCH"
	case stateNotYetObserved:
		return "not yet observed"
	case stateObservedWithoutIntent:
		return "observed, no intent yet"
	}
	return state
}

func (c *clustersReport) table(w *tabwriter.Writer) {
	var ids []string
	for _, cl := range c.Clusters {
		ids = append(ids, cl.ResourceID)
	}
	for _, res := range c.OtherReservations {
		ids = append(ids, res.Cluster)
	}
	label := clusterLabels(ids)
	fmt.Fprintf(w, "management cluster: %s (%s)\n\n", shortMC(c.ManagementCluster), c.ManagementCluster)
	counts := map[string]int{}
	if len(c.Clusters) == 0 {
		fmt.Fprintln(w, "no cluster is intended for or observed on it")
	} else {
		row(w, "CLUSTER", "KIND", "INTENT", "OBSERVED", "STATE", "RESERVED-HERE", "CLUSTER-SERVICE-ID", "PROVISIONING")
		for _, cl := range c.Clusters {
			counts[cl.State]++
			row(w, label(cl.ResourceID), dash(cl.Kind), stampCell(cl.Intent), stampCell(cl.Observed), stateText(cl.State),
				yesNo(cl.ReservedHere), dash(cl.ClusterServiceID), dash(cl.ProvisioningState))
		}
		fmt.Fprintln(w)
		var parts []string
		for _, s := range []string{statePlaced, stateNotYetObserved, stateObservedWithoutIntent, stateMismatch} {
			if counts[s] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[s], stateText(s)))
			}
		}
		fmt.Fprintf(w, "%s: %s\n", plural(len(c.Clusters), "cluster"), strings.Join(parts, ", "))
		if c.Mismatches > 0 {
			fmt.Fprintf(w, "%d MISMATCH: Cluster Service put it elsewhere than placement's intent (the pin was not honoured); see hcpsched explain CLUSTER\n", c.Mismatches)
		}
	}
	fmt.Fprintln(w)
	if len(c.OtherReservations) == 0 {
		fmt.Fprintln(w, "other reservations: none")
		return
	}
	fmt.Fprintf(w, "other reservations: %s for clusters neither intended nor observed here (PendingCleanup's work)\n", plural(len(c.OtherReservations), "reservation"))
	row(w, "CLUSTER", "INTENT", "OBSERVED", "PENDING-CLEANUP")
	for _, res := range c.OtherReservations {
		fate := "keeps it: " + res.Why
		if !res.Kept {
			fate = "releases it: " + res.Why
		}
		row(w, label(res.Cluster), stampCell(res.Intent), stampCell(res.Observed), fate)
	}
}

// clusterLabels names the clusters ids in a table by resource group and name, or by the
// whole resource ID where that pair is ambiguous or the ID not a cluster's; -o json has
// the whole IDs.
func clusterLabels(ids []string) func(id string) string {
	short := func(id string) string {
		rid, err := api.ParseResourceID(id)
		if err != nil || rid.ResourceGroup == "" || !strings.EqualFold(rid.ResourceType(), api.ClusterResourceType) {
			return ""
		}
		return rid.ResourceGroup + "/" + rid.Name()
	}
	owners := map[string]map[string]bool{}
	count := func(id string) {
		if s := strings.ToLower(short(id)); s != "" {
			if owners[s] == nil {
				owners[s] = map[string]bool{}
			}
			owners[s][strings.ToLower(id)] = true
		}
	}
	for _, id := range ids {
		count(id)
	}
	return func(id string) string {
		s := short(id)
		if s == "" || len(owners[strings.ToLower(s)]) > 1 {
			return dash(id)
		}
		return s
	}
}

// stampCell is an MC in a table cell: its stamp, "-" when unset.
func stampCell(mcID string) string {
	if mcID == "" {
		return "-"
	}
	return stampOf(mcID)
}

// plural is "1 cluster", "2 clusters".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
