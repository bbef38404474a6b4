package benchreport

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Chart geometry, in SVG user units. Three panels of equal width sit side by side under
// a title and a legend shared by all of them.
const (
	chartWidth  = 1500
	chartHeight = 500
	panelWidth  = chartWidth / 3

	titleY      = 28
	legendY     = 56
	panelTitleY = 92
	plotTop     = 104
	plotBottom  = 440
	plotLeft    = 72  // from the panel's left edge; leaves room for y tick labels and the y label
	plotRight   = 480 // from the panel's left edge

	fontSize = 12
	// charWidth is a generous estimate of a sans-serif glyph's advance at fontSize; the
	// legend is laid out with it since SVG has no text measurement without a renderer.
	charWidth = 7.0

	// maxPoints bounds each line. 20,000 samples per line would make the file several
	// megabytes while a plot ~400 units wide cannot show more than a few hundred.
	maxPoints = 500
)

// guidePercentiles are the percentiles marked on the latency panel, as in the table.
var guidePercentiles = []float64{50, 90, 99}

// palette is the Tableau 10 order: distinct hues that stay distinguishable for the most
// common colour-vision deficiencies in the first four entries.
var palette = []string{
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
}

// runLabel names a run in the legend and in tooltips.
func runLabel(r Run) string {
	return fmt.Sprintf("%s, %d workers", r.Store, r.Workers)
}

func runColour(i int) string { return palette[i%len(palette)] }

// WriteChart writes a self-contained SVG to path (creating parent directories) with three
// panels: cumulative placements over time, the empirical CDF of creation-to-spec latency
// with p50/p90/p99 marked, and placements per second as bars with each store's
// many-to-few-workers ratio above its bars.
func WriteChart(path string, runs []Run) error {
	return writeFile(path, []byte(renderChart(runs)))
}

func renderChart(runs []Run) string {
	var s svg
	if len(runs) == 0 {
		s.open(600, 160)
		s.text(300, 60, "middle", `font-size="18" font-weight="bold"`, "hcpsched placement benchmark")
		s.text(300, 100, "middle", `font-size="16"`, "no runs")
		s.close()
		return s.String()
	}
	var tables []costTable
	if measuredCost(runs) {
		tables = costTables(runs)
	}
	s.open(chartWidth, chartHeight+tablesHeight(tables))
	s.text(chartWidth/2, titleY, "middle", `font-size="18" font-weight="bold"`, chartTitle(runs))
	legend(&s, runs)
	cumulativePanel(&s, runs, 0)
	latencyPanel(&s, runs, panelWidth)
	throughputPanel(&s, runs, 2*panelWidth)
	costPanels(&s, tables, chartHeight)
	s.close()
	return s.String()
}

// Geometry of the cost tables under the panels, one after the other.
const (
	tableRowHeight = 16
	tableGap       = 28 // above each table's title
	tableLeft      = 20
	tableCellPad   = 18
)

func tablesHeight(tables []costTable) int {
	h := 0
	for _, t := range tables {
		h += tableGap + tableRowHeight*(2+max(len(t.rows), 1))
	}
	return h
}

// costPanels draws each cost figure as a table below the panels, starting at top: a
// title, a header row and a row per entry, columns sized to their widest cell.
func costPanels(s *svg, tables []costTable, top int) {
	y := float64(top)
	for i, t := range tables {
		s.raw(fmt.Sprintf(`<g id="cost-%d">`, i))
		y += tableGap
		s.text(tableLeft, y, "start", `font-size="14" font-weight="bold"`, t.title)
		widths := make([]float64, len(t.header))
		for _, row := range append([][]string{t.header}, t.rows...) {
			for j, cell := range row {
				widths[j] = max(widths[j], charWidth*float64(len([]rune(cell)))+tableCellPad)
			}
		}
		rows := append([][]string{t.header}, t.rows...)
		if len(t.rows) == 0 {
			rows = append(rows, []string{"(none)"})
		}
		for r, row := range rows {
			y += tableRowHeight
			x := float64(tableLeft)
			attrs := ""
			if r == 0 {
				attrs = `font-weight="bold" fill="#444"`
			}
			for j, cell := range row {
				s.text(x, y, "start", attrs, cell)
				x += widths[j]
			}
		}
		s.raw(`</g>`)
	}
}

// chartTitle names the scenario's size and the latency each store's requests carried
// (the emulator's added latency, the memory store's modelled one), the inputs a reader
// needs before comparing the panels.
func chartTitle(runs []Run) string {
	var mcs, clusters []string
	var emulator, memory []string
	for _, r := range runs {
		mcs = appendUnique(mcs, groupThousands(r.ManagementClusters))
		clusters = appendUnique(clusters, groupThousands(r.Clusters))
		switch {
		case r.Store == "emulator":
			emulator = appendUnique(emulator, r.AddedLatency.String())
		case r.AddedLatency > 0:
			memory = appendUnique(memory, r.AddedLatency.String())
		}
	}
	title := fmt.Sprintf("hcpsched placement benchmark: %s management clusters, %s clusters per run",
		strings.Join(mcs, "/"), strings.Join(clusters, "/"))
	var parts []string
	if len(memory) > 0 {
		parts = append(parts, "memory store models "+strings.Join(memory, "/")+" per request")
	}
	switch {
	case len(emulator) == 0:
	case len(emulator) == 1 && emulator[0] == time.Duration(0).String():
		parts = append(parts, "emulator adds no latency")
	default:
		parts = append(parts, "emulator adds "+strings.Join(emulator, "/")+" per request")
	}
	if len(parts) > 0 {
		title += "; " + strings.Join(parts, ", ")
	}
	return title
}

func appendUnique(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

func groupThousands(n int) string {
	digits := strconv.Itoa(n)
	sign := ""
	if n < 0 {
		sign, digits = "-", digits[1:]
	}
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return sign + b.String()
}

func legend(s *svg, runs []Run) {
	widths := make([]float64, len(runs))
	total := 0.0
	for i, r := range runs {
		widths[i] = 28 + charWidth*float64(len([]rune(runLabel(r)))) + 24
		total += widths[i]
	}
	x := max(10, (chartWidth-total)/2)
	s.raw(`<g id="legend">`)
	for i, r := range runs {
		s.raw(fmt.Sprintf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="3"/>`,
			x, legendY-4, x+22, legendY-4, runColour(i)))
		s.text(x+28, legendY, "start", "", runLabel(r))
		x += widths[i]
	}
	s.raw(`</g>`)
}

// cumulativePanel shows how placements accumulated: a straight line is a steady rate, a
// flattening one a slowdown (capacity, conflicts, a stuck worker).
func cumulativePanel(s *svg, runs []Run, px float64) {
	maxT, maxN := 0.0, 0.0
	for _, r := range runs {
		maxT = max(maxT, r.Elapsed.Seconds())
		for _, t := range r.PlacedAt {
			maxT = max(maxT, t.Seconds())
		}
		maxN = max(maxN, float64(len(r.PlacedAt)), float64(r.Placements))
	}
	x := linearAxis(maxT, px+plotLeft, px+plotRight)
	y := linearAxis(maxN, plotBottom, plotTop)

	s.raw(`<g id="panel-cumulative">`)
	frame(s, px, "Cumulative placements", x, y, "seconds since start", "clusters placed")
	for i, r := range runs {
		placed := sortedCopy(r.PlacedAt)
		// A step per placement: the count is j until the j+1th placement's instant.
		pts := make([]point, 0, 2*len(placed)+1)
		pts = append(pts, point{x.px(0), y.px(0)})
		for j, t := range placed {
			tx := x.px(t.Seconds())
			pts = append(pts, point{tx, y.px(float64(j))}, point{tx, y.px(float64(j + 1))})
		}
		if len(placed) == 0 {
			// Nothing was placed: a flat line along zero says so rather than nothing at all.
			pts = append(pts, point{x.px(maxT), y.px(0)})
		}
		s.polyline(thin(pts, maxPoints), runColour(i), runLabel(r))
	}
	s.raw(`</g>`)
}

// latencyPanel draws each run's empirical CDF. Latencies under contention span orders of
// magnitude, so a wide spread gets a log axis, or the fast majority would be a vertical
// line against the y axis.
func latencyPanel(s *svg, runs []Run, px float64) {
	lo, hi := math.Inf(1), 0.0
	for _, r := range runs {
		for _, l := range r.Latencies {
			if v := l.Seconds(); v > 0 {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	var x axis
	xLabel := "creation→spec latency, seconds"
	if hi > 0 && hi/lo > 50 {
		x = logAxis(lo, hi, px+plotLeft, px+plotRight)
		xLabel += " (log10 scale)"
	} else {
		x = linearAxis(hi, px+plotLeft, px+plotRight)
	}
	y := fixedAxis(1, 0.25, plotBottom, plotTop)

	s.raw(`<g id="panel-latency">`)
	frame(s, px, "Latency distribution (empirical CDF)", x, y, xLabel, "fraction of placed clusters")
	for _, p := range guidePercentiles {
		yy := y.px(p / 100)
		s.raw(fmt.Sprintf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="2,3"/>`,
			x.lo, yy, x.hi, yy))
	}
	// The guides are labelled in the margin right of the frame: inside it the labels
	// would sit where the slowest run's tail ends.
	for _, p := range guidePercentiles {
		s.text(x.hi+4, y.px(p/100)+4, "start", `fill="#666"`, fmt.Sprintf("p%g", p))
	}
	for i, r := range runs {
		sorted := sortedCopy(r.Latencies)
		n := float64(len(sorted))
		// The empirical CDF is a step function; drawn as one, the percentile marks (which
		// are sample values) sit on the line even for a handful of samples.
		pts := make([]point, 0, 2*len(sorted))
		for j, l := range sorted {
			lx := x.px(l.Seconds())
			pts = append(pts, point{lx, y.px(float64(j) / n)}, point{lx, y.px(float64(j+1) / n)})
		}
		s.polyline(thin(pts, maxPoints), runColour(i), runLabel(r))
	}
	for i, r := range runs {
		if len(r.Latencies) == 0 {
			continue
		}
		sorted := sortedCopy(r.Latencies)
		for _, p := range guidePercentiles {
			v := percentileSorted(sorted, p)
			s.raw(fmt.Sprintf(
				`<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s" stroke="#fff" stroke-width="1"><title>%s p%g: %s</title></circle>`,
				x.px(v.Seconds()), y.px(p/100), runColour(i), escape(runLabel(r)), p, formatDuration(v)))
		}
	}
	s.raw(`</g>`)
}

// throughputPanel shows placements per second as one bar per run, grouped by store in
// order of first appearance, with the store's many-to-few-workers ratio above its group.
func throughputPanel(s *svg, runs []Run, px float64) {
	type bar struct {
		run    Run
		colour string
		pps    float64
	}
	var stores []string
	groups := map[string][]bar{}
	maxPPS := 0.0
	for i, r := range runs {
		if _, ok := groups[r.Store]; !ok {
			stores = append(stores, r.Store)
		}
		pps := r.Stats().PlacementsPerSecond
		groups[r.Store] = append(groups[r.Store], bar{run: r, colour: runColour(i), pps: pps})
		maxPPS = max(maxPPS, pps)
	}
	// Head-room above the tallest bar for its value and the ratio written over it.
	y := linearAxis(maxPPS*1.2, plotBottom, plotTop)
	x := axis{lo: px + plotLeft, hi: px + plotRight}

	s.raw(`<g id="panel-throughput">`)
	frame(s, px, "Throughput", x, y, "", "placements per second")

	const gap, pad = 0.6, 0.4 // in bar slots
	slots := float64(len(runs)) + gap*float64(len(stores)-1) + 2*pad
	slot := (x.hi - x.lo) / slots
	barWidth := slot * 0.75
	left := x.lo + pad*slot
	ratios := map[string]comparison{}
	for _, g := range byStore(runs) {
		ratios[g.store] = g.compare()
	}
	for _, store := range stores {
		groupLeft := left
		top := float64(plotBottom)
		for _, b := range groups[store] {
			bx := left + (slot-barWidth)/2
			by := y.px(b.pps)
			top = min(top, by)
			s.raw(fmt.Sprintf(
				`<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %.1f placements/s</title></rect>`,
				bx, by, barWidth, plotBottom-by, b.colour, escape(runLabel(b.run)), b.pps))
			s.text(left+slot/2, by-5, "middle", "", fmt.Sprintf("%.1f", b.pps))
			s.text(left+slot/2, plotBottom+16, "middle", "", fmt.Sprintf("%d w", b.run.Workers))
			left += slot
		}
		centre := (groupLeft + left) / 2
		s.text(centre, plotBottom+34, "middle", `font-weight="bold"`, store)
		if c := ratios[store]; c.hasComparison {
			s.text(centre, top-22, "middle", `font-weight="bold"`,
				fmt.Sprintf("%d/%d workers: %.2f×", c.most, c.fewest, c.throughput))
		}
		left += gap * slot
	}
	s.raw(`</g>`)
}

// frame draws a panel's title, plot border, grid, ticks and axis labels. An axis without
// ticks (the bar panel's x) gets only its line.
func frame(s *svg, px float64, title string, x, y axis, xLabel, yLabel string) {
	s.text(px+(plotLeft+plotRight)/2, panelTitleY, "middle", `font-size="14" font-weight="bold"`, title)
	for _, t := range x.ticks {
		xx := x.px(t.v)
		if t.label != "" {
			s.raw(fmt.Sprintf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eee"/>`, xx, plotTop, xx, plotBottom))
			s.raw(fmt.Sprintf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>`, xx, plotBottom, xx, plotBottom+5))
			s.text(xx, plotBottom+18, "middle", "", t.label)
		} else {
			s.raw(fmt.Sprintf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>`, xx, plotBottom, xx, plotBottom+3))
		}
	}
	for _, t := range y.ticks {
		yy := y.px(t.v)
		s.raw(fmt.Sprintf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`, x.lo, yy, x.hi, yy))
		s.raw(fmt.Sprintf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`, x.lo-5, yy, x.lo, yy))
		s.text(x.lo-8, yy+4, "end", "", t.label)
	}
	s.raw(fmt.Sprintf(`<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="none" stroke="#333"/>`,
		x.lo, plotTop, x.hi-x.lo, plotBottom-plotTop))
	if xLabel != "" {
		s.text((x.lo+x.hi)/2, plotBottom+40, "middle", "", xLabel)
	}
	ly := float64(plotTop+plotBottom) / 2
	lx := px + 18
	s.raw(fmt.Sprintf(`<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">%s</text>`,
		lx, ly, lx, ly, escape(yLabel)))
}

type tick struct {
	v     float64
	label string // empty for a minor tick
}

// axis maps data values in [min, max] onto user units [lo, hi]; hi may be below lo (y
// grows downwards in SVG).
type axis struct {
	min, max float64
	lo, hi   float64
	log      bool
	ticks    []tick
}

func (a axis) px(v float64) float64 {
	if a.log {
		v = math.Log10(max(v, a.min))
		return a.lo + (v-math.Log10(a.min))/(math.Log10(a.max)-math.Log10(a.min))*(a.hi-a.lo)
	}
	if a.max == a.min {
		return a.lo
	}
	return a.lo + (v-a.min)/(a.max-a.min)*(a.hi-a.lo)
}

// linearAxis runs from 0 to maxV rounded up to a tick, with about five ticks at 1, 2, 2.5
// or 5 times a power of ten. A maxV of zero (nothing measured) gets a unit axis.
func linearAxis(maxV, lo, hi float64) axis {
	if !(maxV > 0) || math.IsInf(maxV, 0) {
		maxV = 1
	}
	step := niceStep(maxV / 5)
	top := math.Ceil(maxV/step-1e-9) * step
	return fixedAxis(top, step, lo, hi)
}

func fixedAxis(top, step, lo, hi float64) axis {
	a := axis{min: 0, max: top, lo: lo, hi: hi}
	decimals := 0
	for s := step; math.Abs(s-math.Round(s)) > 1e-9 && decimals < 6; s *= 10 {
		decimals++
	}
	for i := 0; float64(i)*step <= top+step/2; i++ {
		v := float64(i) * step
		a.ticks = append(a.ticks, tick{v: v, label: strconv.FormatFloat(v, 'f', decimals, 64)})
	}
	return a
}

func niceStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5} {
		if raw <= m*mag*(1+1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// logAxis spans whole decades around [lo, hi] (both positive) with a labelled tick per
// decade and unlabelled ones at 2..9 times it.
func logAxis(lo, hi, pxLo, pxHi float64) axis {
	first := math.Floor(math.Log10(lo))
	last := math.Ceil(math.Log10(hi))
	if last == first {
		last++
	}
	a := axis{min: math.Pow(10, first), max: math.Pow(10, last), lo: pxLo, hi: pxHi, log: true}
	for e := first; e <= last; e++ {
		decade := math.Pow(10, e)
		a.ticks = append(a.ticks, tick{v: decade, label: strconv.FormatFloat(decade, 'g', -1, 64)})
		if e == last {
			break
		}
		for m := 2.0; m <= 9; m++ {
			a.ticks = append(a.ticks, tick{v: m * decade})
		}
	}
	return a
}

type point struct{ x, y float64 }

// thin drops points that would not move the line by a whole unit and then, if more than
// limit remain, keeps limit of them evenly spaced. The first and last points always stay,
// so a line still starts and ends where the data does.
func thin(pts []point, limit int) []point {
	if len(pts) <= 2 {
		return pts
	}
	kept := []point{pts[0]}
	for _, p := range pts[1 : len(pts)-1] {
		last := kept[len(kept)-1]
		if math.Abs(p.x-last.x) >= 1 || math.Abs(p.y-last.y) >= 1 {
			kept = append(kept, p)
		}
	}
	kept = append(kept, pts[len(pts)-1])
	if len(kept) <= limit {
		return kept
	}
	out := make([]point, 0, limit)
	for i := range limit {
		out = append(out, kept[i*(len(kept)-1)/(limit-1)])
	}
	return out
}

// svg accumulates the document; writing to a strings.Builder cannot fail, which keeps
// the drawing code free of error plumbing.
type svg struct{ b strings.Builder }

func (s *svg) String() string { return s.b.String() }

func (s *svg) raw(markup string) {
	s.b.WriteString(markup)
	s.b.WriteByte('\n')
}

func (s *svg) open(width, height int) {
	s.raw(`<?xml version="1.0" encoding="UTF-8"?>`)
	s.raw(fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="%d">`,
		width, height, width, height, fontSize))
	s.raw(fmt.Sprintf(`<rect width="%d" height="%d" fill="#fff"/>`, width, height))
}

func (s *svg) close() { s.raw(`</svg>`) }

// text writes a text element; attrs is extra literal markup and must already be escaped.
func (s *svg) text(x, y float64, anchor, attrs, content string) {
	s.raw(fmt.Sprintf(`<text x="%.1f" y="%.1f" text-anchor="%s" %s>%s</text>`, x, y, anchor, attrs, escape(content)))
}

func (s *svg) polyline(pts []point, colour, label string) {
	var b strings.Builder
	for i, p := range pts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatFloat(p.x, 'f', 1, 64))
		b.WriteByte(',')
		b.WriteString(strconv.FormatFloat(p.y, 'f', 1, 64))
	}
	s.raw(fmt.Sprintf(
		`<polyline class="series" data-run="%s" points="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round"><title>%s</title></polyline>`,
		escape(label), b.String(), colour, escape(label)))
}

// escape makes text safe as element content and as a double-quoted attribute value.
func escape(text string) string { return xmlEscaper.Replace(text) }

var xmlEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;",
)
