package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hcpsched/hcpsched/backend/metrics"
	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

func capacityVerb() verb {
	return verb{
		name:    "capacity",
		usage:   "capacity",
		summary: "One row per management cluster: policy, Ready, ceiling, usage, requests, not-ready and reserved HCPs, what placement counts as available, headroom in SWIFT HA HCPs, report and oldest reservation ages.",
		run:     runCapacity,
	}
}

// capacityReport is the region's capacity as the backend's placement counts it.
type capacityReport struct {
	// Resources are the counted resources, in the order of every per-resource list.
	Resources []string `json:"resources"`
	// CostSource is where the per-HCP costs come from, and FallbackReason why the
	// HCPResourceRequirements document was not used when it was asked for.
	CostSource     string `json:"costSource"`
	FallbackReason string `json:"fallbackReason,omitempty"`
	// HeadroomHCPs is the region's room for more SWIFT HA HCPs, the backend's
	// backend_region_headroom_hcps.
	HeadroomHCPs       int64                    `json:"headroomHCPs"`
	ManagementClusters []managementClusterUsage `json:"managementClusters"`
}

// managementClusterUsage is one MC's row.
type managementClusterUsage struct {
	ResourceID       string `json:"resourceID"`
	Stamp            string `json:"stamp"`
	SchedulingPolicy string `json:"schedulingPolicy"`
	Ready            bool   `json:"ready"`
	// Ceiling, Usage, Requests and Available are per counted resource, as stored
	// (Available as placement computes it); empty when unknown.
	Ceiling   []string `json:"ceiling"`
	Usage     []string `json:"usage"`
	Requests  []string `json:"requests"`
	Available []string `json:"available"`
	// NotReady and Reserved are the notReadyResourceIDs and pendingAssignedClusters
	// entries placement charges.
	NotReady int `json:"notReady"`
	Reserved int `json:"reserved"`
	// HeadroomHCPs is how many more SWIFT HA HCPs placement would put here now (0 when
	// it would put none, whatever the reason).
	HeadroomHCPs int64 `json:"headroomHCPs"`
	// ReportAgeSeconds and OldestReservationAgeSeconds are absent when there is no
	// report or no dated reservation.
	ReportAgeSeconds            *float64 `json:"reportAgeSeconds,omitempty"`
	OldestReservationAgeSeconds *float64 `json:"oldestReservationAgeSeconds,omitempty"`
	// Placeable says whether placement would put a SWIFT HA HCP here now, and Reason
	// why not.
	Placeable bool   `json:"placeable"`
	Reason    string `json:"reason,omitempty"`
}

func runCapacity(ctx context.Context, c *command, _ []string) (result, error) {
	r, err := c.loadRegion(ctx)
	if err != nil {
		return nil, err
	}
	return r.capacity(), nil
}

func (r *region) capacity() *capacityReport {
	view := r.snapshot.Current()
	source, fallback := view.Model.Costs()
	out := &capacityReport{
		Resources:          view.Model.Resources(),
		CostSource:         source,
		FallbackReason:     string(fallback),
		ManagementClusters: []managementClusterUsage{},
	}
	headroom := metrics.Headroom(view, r.now)
	swiftHA := view.Model.Decide(placement.Cluster{Swift: true}, view.MCs, r.now)
	collector := metrics.NewCollector(r.caches, r.snapshot, func() time.Time { return r.now })
	for i, mc := range view.MCs {
		u := managementClusterUsage{
			ResourceID:   mc.ID(),
			Stamp:        stampOf(mc.ID()),
			HeadroomHCPs: headroom[i],
			Reserved:     mc.Reservations(),
			Ceiling:      []string{},
			Usage:        []string{},
			Requests:     []string{},
			Available:    []string{},
		}
		out.HeadroomHCPs += headroom[i]
		if v := swiftHA.Verdict(i); v.Reason == "" {
			u.Placeable = true
		} else {
			u.Reason = verdictText(v)
		}
		if p := mc.ManagementCluster.Properties; p.Spec != nil {
			u.SchedulingPolicy = p.Spec.SchedulingPolicy
		}
		if st := mc.ManagementCluster.Properties.Status; st != nil {
			u.Ready = api.IsConditionTrue(st.Conditions, api.ManagementClusterConditionReady)
		}
		if available, ok := mc.Available(); ok {
			u.Available = formatMilli(available)
		}
		if mc.Scheduling != nil && mc.Scheduling.Properties.Status != nil {
			st := mc.Scheduling.Properties.Status
			u.NotReady = countNonEmpty(st.NotReadyResourceIDs)
			for _, name := range out.Resources {
				if st.ScaleCeiling != nil {
					u.Ceiling = append(u.Ceiling, st.ScaleCeiling.Capacity[name])
				}
				if or := st.ObservedResources; or != nil {
					u.Usage = append(u.Usage, or.Usage[name])
					u.Requests = append(u.Requests, or.Requests[name])
				}
			}
			if or := st.ObservedResources; or != nil && !or.LastReportedAt.IsZero() {
				age := metrics.ReportAge(or.LastReportedAt, r.now)
				u.ReportAgeSeconds = &age
			}
			if oldest, ok := collector.OldestReservedAt(st.PendingAssignedClusters); ok {
				age := r.now.Sub(oldest).Seconds()
				u.OldestReservationAgeSeconds = &age
			}
		}
		out.ManagementClusters = append(out.ManagementClusters, u)
	}
	slices.SortStableFunc(out.ManagementClusters, func(a, b managementClusterUsage) int { return api.CompareNatural(a.Stamp, b.Stamp) })
	return out
}

func countNonEmpty(ids []string) int {
	n := 0
	for _, id := range ids {
		if id != "" {
			n++
		}
	}
	return n
}

func (c *capacityReport) table(w *tabwriter.Writer) {
	res := strings.Join(c.Resources, ",")
	row(w, "STAMP", "POLICY", "READY", "CEILING("+res+")", "USAGE", "REQUESTS", "NOT-READY", "RESERVED", "AVAILABLE", "HEADROOM(HCPs)", "REPORT-AGE", "OLDEST-RESERVATION", "PLACEABLE")
	for _, u := range c.ManagementClusters {
		placeable := "yes"
		if !u.Placeable {
			placeable = "no: " + u.Reason
		}
		row(w, u.Stamp, u.SchedulingPolicy, yesNo(u.Ready), list(u.Ceiling), list(u.Usage), list(u.Requests),
			u.NotReady, u.Reserved, list(u.Available), u.HeadroomHCPs, age(u.ReportAgeSeconds), age(u.OldestReservationAgeSeconds), placeable)
	}
	fmt.Fprintf(w, "\nregion headroom: %d SWIFT HA HCPs; per-HCP costs from %s%s\n", c.HeadroomHCPs, c.CostSource, fallbackText(c.FallbackReason))
}

func fallbackText(reason string) string {
	if reason == "" {
		return ""
	}
	return " (fallback: " + reason + ")"
}
