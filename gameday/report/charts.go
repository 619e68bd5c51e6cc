package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// chartView is one chart as the page shows it: the drawing, a caption,
// and the same figures as a table for readers who cannot see the drawing.
type chartView struct {
	ID      string
	Title   string
	Caption string
	SVG     template.HTML
	Table   dataTable
}

// dataTable is a chart's text alternative.
type dataTable struct {
	Head []string
	Rows [][]string
}

// outcomeOrder stacks the outcomes from the ones a sale wants at the
// bottom to the ones it dreads at the top; outcomes not listed follow in
// name order.
var outcomeOrder = []string{"confirmed", "declined", "sold_out", "unavailable", "too_late", "gave_up", "error", "dropped"}

// outcomeColours are the Okabe–Ito colours, distinguishable by most
// colour-blind readers; the legend names each one as well.
var outcomeColours = map[string]string{
	"confirmed":   "#009E73",
	"declined":    "#0072B2",
	"sold_out":    "#999999",
	"unavailable": "#E69F00",
	"too_late":    "#CC79A7",
	"gave_up":     "#56B4E9",
	"error":       "#D55E00",
	"dropped":     "#000000",
}

// spareColours are for outcomes the report does not know.
var spareColours = []string{"#8C564B", "#7F7F7F", "#BCBD22", "#17BECF", "#9467BD"}

// Breaker states as the band shows them: a fill and a pattern, so that
// open and half-open differ by more than colour, and the state's name
// written in the band where it fits.
var stateStyles = map[string]struct{ fill, pattern string }{
	"closed":    {"#b9e4cf", ""},
	"half-open": {"#f5c86b", "dots"},
	"open":      {"#e8794a", "hatch"},
}

// timeScale is what every chart of one report shares.
type timeScale struct {
	xMax   float64 // seconds shown
	left   float64 // left margin
	faults []faultBand
}

func newTimeScale(r *runrecord.Record) timeScale {
	xMax := float64(r.Series.Seconds)
	xMax = math.Max(xMax, math.Ceil(float64(r.Load.DurationMS)/1000))
	for _, f := range r.Faults {
		xMax = math.Max(xMax, math.Ceil(float64(f.EndMS)/1000))
	}
	for _, b := range r.Breakers {
		for _, t := range b.Transitions {
			xMax = math.Max(xMax, math.Ceil(float64(t.AtMS)/1000))
		}
	}
	if xMax < 1 {
		xMax = 1
	}
	left := 84.0
	for name := range r.Breakers {
		left = math.Max(left, textWidth(name, fontSize)+24)
	}
	left = math.Min(left, 220)

	var bands []faultBand
	for _, f := range r.Faults {
		label := fmt.Sprintf("%s (%s %s)", f.Name, f.Target, f.Kind)
		if f.Error != "" {
			label = f.Name + " (not applied)"
		}
		bands = append(bands, faultBand{label: label, start: float64(f.StartMS) / 1000, end: float64(f.EndMS) / 1000, failed: f.Error != "" || f.LiftError != ""})
	}
	return timeScale{xMax: xMax, left: left, faults: bands}
}

// frame lays out a chart's plot of height h: fault labels above it, the
// axis and a legend of legendItems below it. It returns the frame and the
// height of the whole chart.
func (ts timeScale) frame(h, yMax float64, legend []legendItem) (frame, float64) {
	f := frame{left: ts.left, width: chartWidth - ts.left - marginRight, height: h, xMax: ts.xMax, yMax: yMax}
	bands := slices.Clone(ts.faults)
	rows := layoutFaultLabels(bands, f)
	f.top = 14 + float64(rows)*labelRowH
	total := f.top + h + axisBelow + float64(legendRows(legend, f.width))*legendRowH + 8
	return f, total
}

// get is the value of a series at i, zero past its end.
func get[T int | float64](s []T, i int) T {
	if i < 0 || i >= len(s) {
		return 0
	}
	return s[i]
}

// outcomeNames lists the outcomes of the series in stacking order.
func outcomeNames(m map[string][]int) []string {
	var known, other []string
	for _, name := range outcomeOrder {
		if _, ok := m[name]; ok {
			known = append(known, name)
		}
	}
	for name := range m {
		if !slices.Contains(outcomeOrder, name) {
			other = append(other, name)
		}
	}
	sort.Strings(other)
	return append(known, other...)
}

func outcomeColour(name string, names []string) string {
	if c, ok := outcomeColours[name]; ok {
		return c
	}
	i := 0
	for _, n := range names {
		if n == name {
			break
		}
		if _, ok := outcomeColours[n]; !ok {
			i++
		}
	}
	return spareColours[i%len(spareColours)]
}

// faultSentence describes the fault windows for a chart's description.
func faultSentence(r *runrecord.Record) string {
	if len(r.Faults) == 0 {
		return "No fault was injected."
	}
	var parts []string
	for _, f := range r.Faults {
		if f.Error != "" {
			parts = append(parts, fmt.Sprintf("%s on %s could not be applied at %s", f.Name, f.Target, seconds(f.StartMS)))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%s %s) from %s to %s", f.Name, f.Target, f.Kind, seconds(f.StartMS), seconds(f.EndMS)))
	}
	return "Shaded fault windows: " + strings.Join(parts, "; ") + "."
}

// seconds formats milliseconds of the load as seconds.
func seconds(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + " s"
}

// trafficChart is arrivals per second as a line over the outcomes per
// second as stacked bars.
func trafficChart(r *runrecord.Record, ts timeScale) chartView {
	return trafficChartOf(r, ts, r.Series, "chart-traffic", "Arrivals and outcomes per second", 0)
}

// trafficChartOf draws series s (the run's, or one pod's) under id and
// title, its y axis reaching at least yAtLeast (so that pods side by
// side share a scale).
func trafficChartOf(r *runrecord.Record, ts timeScale, s runrecord.Series, id, title string, yAtLeast float64) chartView {
	names := outcomeNames(s.Outcomes)
	yMaxData, peak, peakAt := yAtLeast, 0, 0
	for i := 0; i < s.Seconds; i++ {
		a := get(s.Arrivals, i)
		if a > peak {
			peak, peakAt = a, i
		}
		sum := 0
		for _, n := range names {
			sum += get(s.Outcomes[n], i)
		}
		yMaxData = math.Max(yMaxData, math.Max(float64(a), float64(sum)))
		if i < len(s.Planned) {
			yMaxData = math.Max(yMaxData, s.Planned[i])
		}
	}
	step, yMax := niceAxis(yMaxData, 5, true)

	legend := []legendItem{{label: "arrivals (line)", kind: swatchLine, stroke: "#222222", marker: markerCircle}}
	// A replay's plan, the recording × the rate scale, beside what was
	// sent.
	planned := series{label: "planned", colour: "#0072B2", dash: "6 3", marker: markerSquare}
	if len(s.Planned) > 0 {
		legend = append(legend, legendItem{label: "the recording × scale (dashed)", kind: swatchLine, stroke: planned.colour, dash: planned.dash, marker: planned.marker})
	}
	for _, n := range names {
		c := outcomeColour(n, names)
		legend = append(legend, legendItem{label: n, kind: swatchBox, fill: c, stroke: c})
	}
	f, height := ts.frame(240, yMax, legend)

	var totals []string
	for _, n := range names {
		sum := 0
		for _, v := range s.Outcomes[n] {
			sum += v
		}
		totals = append(totals, fmt.Sprintf("%s %d", n, sum))
	}
	desc := fmt.Sprintf("Over %d seconds, arrivals peaked at %d per second (second %d). Outcomes in total: %s. %s",
		s.Seconds, peak, peakAt, orNone(strings.Join(totals, ", ")), faultSentence(r))

	var w svgWriter
	openSVG(&w, id, title, desc, height)
	bands := slices.Clone(ts.faults)
	layoutFaultLabels(bands, f)
	drawFaultShades(&w, f, bands)
	drawYAxis(&w, f, step, "shoppers per second")
	w.printf(`<g class="outcomes">`)
	barW := f.width / f.xMax
	gap := math.Min(2, barW*0.15)
	for i := 0; i < s.Seconds; i++ {
		base := 0
		for _, n := range names {
			v := get(s.Outcomes[n], i)
			if v <= 0 {
				continue
			}
			y0, y1 := f.y(float64(base)), f.y(float64(base+v))
			w.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`,
				num(f.x(float64(i))+gap), num(y1), num(barW-2*gap), num(y0-y1), outcomeColour(n, names))
			base += v
		}
	}
	w.printf(`</g>`)
	arr := series{label: "arrivals", colour: "#222222", marker: markerCircle}
	for i := 0; i < s.Seconds; i++ {
		arr.values = append(arr.values, float64(get(s.Arrivals, i)))
		arr.ok = append(arr.ok, true)
	}
	drawLine(&w, f, arr)
	if len(s.Planned) > 0 {
		for i := 0; i < s.Seconds; i++ {
			planned.values = append(planned.values, get(s.Planned, i))
			planned.ok = append(planned.ok, i < len(s.Planned))
		}
		drawLine(&w, f, planned)
	}
	drawFaultEdges(&w, f, bands)
	drawXAxis(&w, f)
	drawLegend(&w, f.left, f.top+f.height+axisBelow+12, f.width, legend)
	w.printf(`</svg>`)

	head := []string{"second", "arrivals"}
	if len(s.Planned) > 0 {
		head = append(head, "the recording × scale")
	}
	table := dataTable{Head: append(head, names...)}
	for i := 0; i < s.Seconds; i++ {
		row := []string{strconv.Itoa(i), strconv.Itoa(get(s.Arrivals, i))}
		if len(s.Planned) > 0 {
			row = append(row, strconv.FormatFloat(get(s.Planned, i), 'f', 1, 64))
		}
		for _, n := range names {
			row = append(row, strconv.Itoa(get(s.Outcomes[n], i)))
		}
		table.Rows = append(table.Rows, row)
	}
	caption := "Arrivals by the second they were scheduled (line); final outcomes by the second they were reached (stacked bars)."
	if len(s.Planned) > 0 {
		caption += " The dashed line is the replayed recording's arrivals a second times the rate scale: what the drill was to send."
	}
	return chartView{
		ID: id, Title: title, SVG: template.HTML(w.String()), Table: table,
		Caption: caption,
	}
}

// latencyChart is the checkout latency percentiles per second.
func latencyChart(r *runrecord.Record, ts timeScale) chartView {
	return latencyChartOf(r, ts, r.Series, "chart-latency", "Checkout latency per second", 0)
}

// latencyChartOf draws series s's percentiles under id and title, its y
// axis reaching at least yAtLeast.
func latencyChartOf(r *runrecord.Record, ts timeScale, s runrecord.Series, id, title string, yAtLeast float64) chartView {
	lines := []series{
		{label: "p50", colour: "#0072B2", marker: markerCircle, values: padded(s.P50MS, s.Seconds)},
		{label: "p95", colour: "#E69F00", dash: "7 4", marker: markerSquare, values: padded(s.P95MS, s.Seconds)},
		{label: "p99", colour: "#B8400A", dash: "2 3", marker: markerTriangle, values: padded(s.P99MS, s.Seconds)},
	}
	yMaxData, worst, worstAt := yAtLeast, 0.0, -1
	for li := range lines {
		for i, v := range lines[li].values {
			// A second with no request has no percentile: the record
			// holds 0 there, which no real request takes.
			ok := v > 0 && !math.IsNaN(v) && !math.IsInf(v, 0)
			lines[li].ok = append(lines[li].ok, ok)
			if ok {
				yMaxData = math.Max(yMaxData, v)
				if lines[li].label == "p99" && v > worst {
					worst, worstAt = v, i
				}
			}
		}
	}
	step, yMax := niceAxis(yMaxData, 5, false)
	var legend []legendItem
	for _, l := range lines {
		legend = append(legend, legendItem{label: l.label + " latency", kind: swatchLine, stroke: l.colour, dash: l.dash, marker: l.marker})
	}
	f, height := ts.frame(240, yMax, legend)

	desc := "No checkout request was sent."
	if worstAt >= 0 {
		desc = fmt.Sprintf("Checkout latency from the scheduled start, per second of sending. The worst p99 was %s ms in second %d; the p95 of the whole run was %s ms.",
			ms(worst), worstAt, ms(r.Load.CheckoutP95MS))
	}
	desc += " " + faultSentence(r)

	var w svgWriter
	openSVG(&w, id, title+" (p50, p95, p99)", desc, height)
	bands := slices.Clone(ts.faults)
	layoutFaultLabels(bands, f)
	drawFaultShades(&w, f, bands)
	drawYAxis(&w, f, step, "latency (ms)")
	for _, l := range lines {
		drawLine(&w, f, l)
	}
	drawFaultEdges(&w, f, bands)
	drawXAxis(&w, f)
	drawLegend(&w, f.left, f.top+f.height+axisBelow+12, f.width, legend)
	w.printf(`</svg>`)

	table := dataTable{Head: []string{"second", "p50 (ms)", "p95 (ms)", "p99 (ms)"}}
	for i := 0; i < s.Seconds; i++ {
		row := []string{strconv.Itoa(i)}
		for _, l := range lines {
			cell := "–"
			if l.ok[i] {
				cell = ms(l.values[i])
			}
			row = append(row, cell)
		}
		table.Rows = append(table.Rows, row)
	}
	return chartView{
		ID: id, Title: title, SVG: template.HTML(w.String()), Table: table,
		Caption: "Percentiles of the checkout requests sent in each second, measured from their scheduled start; a gap is a second with no request.",
	}
}

// padded returns s cut or extended with zeros to n values.
func padded(s []float64, n int) []float64 {
	out := make([]float64, n)
	copy(out, s)
	return out
}

// ms formats milliseconds for a reader.
func ms(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// stateSpan is a breaker in one state from one second to another.
type stateSpan struct {
	state    string
	from, to float64
}

// breakerSpans turns transitions into the states between them, starting
// closed at 0 and lasting to end.
func breakerSpans(tr []runrecord.Transition, end float64) []stateSpan {
	tr = slices.Clone(tr)
	sort.SliceStable(tr, func(i, j int) bool { return tr[i].AtMS < tr[j].AtMS })
	var out []stateSpan
	cur := stateSpan{state: "closed", from: 0}
	for _, t := range tr {
		at := clamp(float64(t.AtMS)/1000, 0, end)
		if at > cur.from {
			cur.to = at
			out = append(out, cur)
		}
		cur = stateSpan{state: t.State, from: at}
	}
	if end > cur.from {
		cur.to = end
		out = append(out, cur)
	}
	return out
}

// breakerChart is one band per dependency, coloured and patterned by the
// breaker's state over the run.
func breakerChart(r *runrecord.Record, ts timeScale) chartView {
	deps := make([]string, 0, len(r.Breakers))
	for d := range r.Breakers {
		deps = append(deps, d)
	}
	sort.Strings(deps)

	legend := []legendItem{
		{label: "closed", kind: swatchBox, fill: stateStyles["closed"].fill, stroke: "#555"},
		{label: "half-open (dots)", kind: swatchBox, fill: "url(#pat-dots)", stroke: "#555"},
		{label: "open (hatched)", kind: swatchBox, fill: "url(#pat-hatch)", stroke: "#555"},
	}
	const rowH, bandH = 34.0, 24.0
	plotH := math.Max(1, float64(len(deps))) * rowH
	f, height := ts.frame(plotH, 1, legend)

	var sentences []string
	table := dataTable{Head: []string{"dependency", "state", "from", "to"}}
	for _, d := range deps {
		spans := breakerSpans(r.Breakers[d].Transitions, ts.xMax)
		if len(r.Breakers[d].Transitions) == 0 {
			sentences = append(sentences, d+" stayed closed")
		} else {
			var parts []string
			for _, t := range r.Breakers[d].Transitions {
				parts = append(parts, fmt.Sprintf("%s at %s", t.State, seconds(t.AtMS)))
			}
			sentences = append(sentences, d+": "+strings.Join(parts, ", "))
		}
		for _, sp := range spans {
			table.Rows = append(table.Rows, []string{d, sp.state, secondsF(sp.from), secondsF(sp.to)})
		}
	}
	desc := "Breaker state per dependency, starting closed. "
	if len(deps) == 0 {
		desc = "No breaker was watched. "
	} else {
		desc += strings.Join(sentences, "; ") + ". "
	}
	desc += faultSentence(r)

	var w svgWriter
	openSVG(&w, "chart-breakers", "Breaker state per dependency", desc, height)
	w.printf(`<defs>`)
	w.printf(`<pattern id="pat-hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="%s"/><line x1="0" y1="0" x2="0" y2="8" stroke="#7a2500" stroke-width="3"/></pattern>`, stateStyles["open"].fill)
	w.printf(`<pattern id="pat-dots" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="%s"/><circle cx="3" cy="3" r="1.3" fill="#6b4a00"/></pattern>`, stateStyles["half-open"].fill)
	w.printf(`</defs>`)
	bands := slices.Clone(ts.faults)
	layoutFaultLabels(bands, f)
	drawFaultShades(&w, f, bands)
	w.printf(`<g class="bands" font-size="%s">`, num(fontSize))
	for i, d := range deps {
		top := f.top + float64(i)*rowH + (rowH-bandH)/2
		w.printf(`<text x="%s" y="%s" text-anchor="end" fill="#222"><title>%s</title>%s</text>`,
			num(f.left-8), num(top+bandH/2+4), esc(d), esc(fitText(d, f.left-16, fontSize)))
		for _, sp := range breakerSpans(r.Breakers[d].Transitions, ts.xMax) {
			x0, x1 := f.x(sp.from), f.x(sp.to)
			fill := "#bbbbbb"
			if st, ok := stateStyles[sp.state]; ok {
				fill = st.fill
				if st.pattern != "" {
					fill = "url(#pat-" + st.pattern + ")"
				}
			}
			w.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s" stroke="#555" stroke-width="0.5"><title>%s: %s from %s to %s</title></rect>`,
				num(x0), num(top), num(x1-x0), num(bandH), fill, esc(d), esc(sp.state), secondsF(sp.from), secondsF(sp.to))
			if label := sp.state; x1-x0 >= textWidth(label, fontSize)+8 {
				w.printf(`<text x="%s" y="%s" text-anchor="middle" fill="#111" stroke="#fff" stroke-width="3" paint-order="stroke">%s</text>`,
					num((x0+x1)/2), num(top+bandH/2+4), esc(label))
			}
		}
	}
	w.printf(`</g>`)
	drawFaultEdges(&w, f, bands)
	drawXAxis(&w, f)
	drawLegend(&w, f.left, f.top+f.height+axisBelow+12, f.width, legend)
	w.printf(`</svg>`)
	return chartView{
		ID: "chart-breakers", Title: "Breaker state per dependency", SVG: template.HTML(w.String()), Table: table,
		Caption: "Each dependency's circuit breaker from its recorded transitions: closed (plain), half-open (dotted), open (hatched).",
	}
}

// fitText shortens s with an ellipsis to fit width at size.
func fitText(s string, width, size float64) string {
	if textWidth(s, size) <= width {
		return s
	}
	r := []rune(s)
	n := max(int(width/(0.6*size))-1, 1)
	return string(r[:min(n, len(r))]) + "…"
}

// secondsF formats seconds for a reader, to the millisecond.
func secondsF(s float64) string {
	return strconv.FormatFloat(math.Round(s*1000)/1000, 'f', -1, 64) + " s"
}

// podView is one pod's charts, shown beside the others'.
type podView struct {
	Name   string
	Shops  string
	Charts []chartView
}

// podViews draws each pod's traffic and latency on the same scales, so
// that a pod in trouble stands out beside the others.
func podViews(r *runrecord.Record, ts timeScale) []podView {
	traffic, latency := 0.0, 0.0
	for _, p := range r.Pods {
		for i := 0; i < p.Series.Seconds; i++ {
			sum := 0
			for _, v := range p.Series.Outcomes {
				sum += get(v, i)
			}
			traffic = math.Max(traffic, math.Max(float64(get(p.Series.Arrivals, i)), float64(sum)))
			latency = math.Max(latency, get(p.Series.P99MS, i))
		}
	}
	var out []podView
	for _, p := range r.Pods {
		out = append(out, podView{Name: p.Name, Shops: orNone(strings.Join(p.Shops, ", ")), Charts: []chartView{
			trafficChartOf(r, ts, p.Series, "chart-"+p.Name+"-traffic", p.Name+": arrivals and outcomes per second", traffic),
			latencyChartOf(r, ts, p.Series, "chart-"+p.Name+"-latency", p.Name+": checkout latency per second", latency),
		}})
	}
	return out
}
