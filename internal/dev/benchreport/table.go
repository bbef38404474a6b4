package benchreport

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

const mib = 1 << 20

// WriteTable writes an aligned human table to w: one row per run, in the order given,
// then one line per store comparing its largest and smallest worker counts.
func WriteTable(w io.Writer, runs []Run) error {
	if len(runs) == 0 {
		if _, err := io.WriteString(w, "no runs\n"); err != nil {
			return fmt.Errorf("writing benchmark table: %w", err)
		}
		return nil
	}

	// Right alignment lines the digits of each column up; every cell, the last one
	// included, is tab-terminated because tabwriter only aligns terminated cells.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{
		"STORE", "WORKERS", "MCS", "CLUSTERS", "PLACED", "ELAPSED", "PLACEMENTS/S",
		"P50", "P90", "P99", "REQ/PLACEMENT", "RU/PLACEMENT", "412/PLACEMENT", "PEAK RSS",
	}
	if _, err := fmt.Fprintln(tw, strings.Join(header, "\t")+"\t"); err != nil {
		return fmt.Errorf("writing benchmark table: %w", err)
	}
	for _, r := range runs {
		s := r.Stats()
		row := []string{
			r.Store,
			fmt.Sprint(r.Workers),
			fmt.Sprint(r.ManagementClusters),
			fmt.Sprint(r.Clusters),
			fmt.Sprint(r.Placements),
			formatDuration(r.Elapsed),
			fmt.Sprintf("%.1f", s.PlacementsPerSecond),
			formatSeconds(s.LatencyP50Seconds),
			formatSeconds(s.LatencyP90Seconds),
			formatSeconds(s.LatencyP99Seconds),
			fmt.Sprintf("%.2f", s.CosmosRequestsPerPlacement),
			fmt.Sprintf("%.2f", s.RequestChargePerPlacement),
			fmt.Sprintf("%.3f", s.ConflictsPerPlacement),
			fmt.Sprintf("%.1f MiB", float64(s.PeakRSSBytes)/mib),
		}
		if _, err := fmt.Fprintln(tw, strings.Join(row, "\t")+"\t"); err != nil {
			return fmt.Errorf("writing benchmark table: %w", err)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing benchmark table: %w", err)
	}

	for _, g := range byStore(runs) {
		if _, err := io.WriteString(w, comparisonLine(g)+"\n"); err != nil {
			return fmt.Errorf("writing benchmark table: %w", err)
		}
	}
	return nil
}

func comparisonLine(g storeRuns) string {
	c := g.compare()
	if !c.hasComparison {
		return fmt.Sprintf("%s: only %d workers measured, no ratio", g.store, g.runs[0].Workers)
	}
	return fmt.Sprintf(
		"%s: throughput ratio %d/%d workers = %.2fx (%.1f vs %.1f placements/s); "+
			"p50 latency ratio = %.2fx (%s vs %s); p99 latency ratio = %.2fx (%s vs %s)",
		g.store, c.most, c.fewest, c.throughput,
		c.mostStats.PlacementsPerSecond, c.fewestStats.PlacementsPerSecond,
		c.latencyP50, formatSeconds(c.mostStats.LatencyP50Seconds), formatSeconds(c.fewestStats.LatencyP50Seconds),
		c.latencyP99, formatSeconds(c.mostStats.LatencyP99Seconds), formatSeconds(c.fewestStats.LatencyP99Seconds),
	)
}

// formatDuration keeps three significant figures or so: milliseconds below a second
// (placement latencies usually are), seconds above.
func formatDuration(d time.Duration) string {
	return formatSeconds(d.Seconds())
}

func formatSeconds(s float64) string {
	switch {
	case s == 0:
		return "0"
	case s < 0.001:
		return fmt.Sprintf("%.0fµs", s*1e6)
	case s < 0.01:
		return fmt.Sprintf("%.2fms", s*1e3)
	case s < 1:
		return fmt.Sprintf("%.1fms", s*1e3)
	case s < 100:
		return fmt.Sprintf("%.2fs", s)
	default:
		return fmt.Sprintf("%.0fs", s)
	}
}
