package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The charts are drawn by hand as inline SVG: a few rectangles, paths and
// labels need no library, and the output stays small, deterministic and
// free of scripts. Every chart of a report shares one horizontal scale
// (the seconds of the load) and one left margin, so that a moment lines
// up across the charts when they are read one above the other.

// Layout of every chart, in SVG user units (the viewBox scales them).
const (
	chartWidth  = 1000.0
	marginRight = 24.0
	fontSize    = 12.0
	labelRowH   = 16.0 // one row of fault labels above the plot
	axisBelow   = 44.0 // x tick labels and the axis title
	legendRowH  = 20.0
)

// frame is the geometry a chart is drawn in: the plot box in pixels and
// the data ranges it maps.
type frame struct {
	left, top, width, height float64 // the plot box
	xMax, yMax               float64 // seconds; the y unit of the chart
}

// x maps a second of the load to a pixel column.
func (f frame) x(sec float64) float64 {
	return f.left + clamp(sec, 0, f.xMax)/f.xMax*f.width
}

// y maps a value to a pixel row.
func (f frame) y(v float64) float64 {
	return f.top + f.height - clamp(v, 0, f.yMax)/f.yMax*f.height
}

func clamp(v, lo, hi float64) float64 { return math.Min(math.Max(v, lo), hi) }

// num formats a coordinate: one decimal at most, never NaN or infinite
// (a browser reports those in its console as errors).
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	v = math.Round(v*10) / 10
	if v == 0 {
		v = 0 // no "-0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// esc escapes text for an SVG text node or attribute inside HTML.
func esc(s string) string { return html.EscapeString(s) }

// textWidth estimates the width of a label at size.
func textWidth(s string, size float64) float64 {
	return float64(utf8.RuneCountInString(s)) * 0.6 * size
}

// niceStep returns a step of 1, 2 or 5 times a power of ten that cuts
// max into about n intervals.
func niceStep(max float64, n int) float64 {
	if max <= 0 || n <= 0 {
		return 1
	}
	raw := max / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// niceAxis returns the step and the top of an axis that shows max.
func niceAxis(max float64, n int, integer bool) (step, top float64) {
	if max <= 0 || math.IsNaN(max) || math.IsInf(max, 0) {
		max = 1
	}
	step = niceStep(max, n)
	if integer && step < 1 {
		step = 1
	}
	top = math.Ceil(max/step-1e-9) * step
	return step, top
}

// tickLabel formats a tick value with no more decimals than its step needs.
func tickLabel(v, step float64) string {
	decimals := 0
	for s := step; s < 1 && decimals < 3; s *= 10 {
		decimals++
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// svgWriter accumulates SVG markup.
type svgWriter struct{ strings.Builder }

func (w *svgWriter) printf(format string, args ...any) { fmt.Fprintf(w, format, args...) }

// faultBand is a fault window as the charts shade it.
type faultBand struct {
	label      string
	start, end float64 // seconds
	failed     bool    // the fault could not be applied
	row        int     // the row of its label above the plot
}

// layoutFaultLabels gives each fault's label a row above the plot, so
// that labels of nearby faults do not overlap, and returns the rows used.
func layoutFaultLabels(bands []faultBand, f frame) int {
	var rowEnds []float64
	for i := range bands {
		x := f.x(bands[i].start) + 3
		w := textWidth(bands[i].label, fontSize-1)
		row := 0
		for row < len(rowEnds) && rowEnds[row] > x {
			row++
		}
		if row == len(rowEnds) {
			rowEnds = append(rowEnds, 0)
		}
		rowEnds[row] = x + w + 8
		bands[i].row = row
	}
	return len(rowEnds)
}

// drawFaultShades shades each fault window behind the data.
func drawFaultShades(w *svgWriter, f frame, bands []faultBand) {
	if len(bands) == 0 {
		return
	}
	w.printf(`<g class="fault-shades">`)
	for _, b := range bands {
		x0, x1 := f.x(b.start), f.x(b.end)
		if !b.failed && x1-x0 >= 1 {
			w.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="#7b68b5" fill-opacity="0.16"/>`,
				num(x0), num(f.top), num(x1-x0), num(f.height))
		}
	}
	w.printf(`</g>`)
}

// drawFaultEdges marks where each fault window starts and ends, over the
// data, and names the fault above the plot. A fault that could not be
// applied (or took no time) is a single dashed line.
func drawFaultEdges(w *svgWriter, f frame, bands []faultBand) {
	if len(bands) == 0 {
		return
	}
	w.printf(`<g class="fault-edges">`)
	for _, b := range bands {
		x0, x1 := f.x(b.start), f.x(b.end)
		labelY := f.top - 6 - float64(b.row)*labelRowH
		d := fmt.Sprintf("M%s %sV%s", num(x0), num(labelY+3), num(f.top+f.height))
		if !b.failed && x1-x0 >= 1 {
			d += fmt.Sprintf("M%s %sV%s", num(x1), num(f.top), num(f.top+f.height))
		}
		w.printf(`<path d="%s" stroke="#5a4a8a" stroke-width="1.2" stroke-dasharray="4 3" fill="none"/>`, d)
		w.printf(`<text x="%s" y="%s" font-size="%s" fill="#3d2f73">%s</text>`,
			num(x0+3), num(labelY), num(fontSize-1), esc(b.label))
	}
	w.printf(`</g>`)
}

// drawXAxis draws the time axis under the plot, with ticks and a title.
func drawXAxis(w *svgWriter, f frame) {
	step, _ := niceAxis(f.xMax, int(f.width/70), true)
	bottom := f.top + f.height
	w.printf(`<g class="x-axis" font-size="%s" fill="#222">`, num(fontSize))
	w.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#222"/>`, num(f.left), num(bottom), num(f.left+f.width), num(bottom))
	for v := 0.0; v <= f.xMax+1e-9; v += step {
		x := f.x(v)
		w.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#222"/>`, num(x), num(bottom), num(x), num(bottom+5))
		w.printf(`<text x="%s" y="%s" text-anchor="middle">%s</text>`, num(x), num(bottom+18), tickLabel(v, step))
	}
	w.printf(`<text x="%s" y="%s" text-anchor="middle">seconds of the load</text>`, num(f.left+f.width/2), num(bottom+36))
	w.printf(`</g>`)
}

// drawYAxis draws the value axis with grid lines, ticks and a title.
func drawYAxis(w *svgWriter, f frame, step float64, title string) {
	w.printf(`<g class="y-axis" font-size="%s" fill="#222">`, num(fontSize))
	for v := 0.0; v <= f.yMax+1e-9; v += step {
		y := f.y(v)
		if v > 0 {
			w.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e2e2e2"/>`, num(f.left), num(y), num(f.left+f.width), num(y))
		}
		w.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#222"/>`, num(f.left-5), num(y), num(f.left), num(y))
		w.printf(`<text x="%s" y="%s" text-anchor="end">%s</text>`, num(f.left-8), num(y+4), tickLabel(v, step))
	}
	w.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#222"/>`, num(f.left), num(f.top), num(f.left), num(f.top+f.height))
	cx, cy := f.left-52, f.top+f.height/2
	w.printf(`<text x="%s" y="%s" text-anchor="middle" transform="rotate(-90 %s %s)">%s</text>`,
		num(cx), num(cy), num(cx), num(cy), esc(title))
	w.printf(`</g>`)
}

// swatch is how a legend entry is drawn.
type swatch int

const (
	swatchBox  swatch = iota // a filled square (bars, bands)
	swatchLine               // a short line with the series' dash and marker
)

// legendItem is one entry of a chart's legend.
type legendItem struct {
	label  string
	kind   swatch
	fill   string // colour or url(#pattern)
	stroke string
	dash   string
	marker string
}

// legendRows returns how many rows the legend needs across width.
func legendRows(items []legendItem, width float64) int {
	rows, x := 1, 0.0
	for _, it := range items {
		w := legendItemWidth(it)
		if x > 0 && x+w > width {
			rows++
			x = 0
		}
		x += w
	}
	if len(items) == 0 {
		return 0
	}
	return rows
}

func legendItemWidth(it legendItem) float64 { return 34 + textWidth(it.label, fontSize) + 18 }

// drawLegend draws the legend from (left, top), wrapping at width.
func drawLegend(w *svgWriter, left, top, width float64, items []legendItem) {
	w.printf(`<g class="legend" font-size="%s" fill="#222">`, num(fontSize))
	x, y := 0.0, top
	for _, it := range items {
		iw := legendItemWidth(it)
		if x > 0 && x+iw > width {
			x = 0
			y += legendRowH
		}
		sx := left + x
		switch it.kind {
		case swatchBox:
			w.printf(`<rect x="%s" y="%s" width="14" height="12" fill="%s" stroke="%s"/>`, num(sx+8), num(y-10), it.fill, it.stroke)
		case swatchLine:
			w.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2.5"%s/>`,
				num(sx), num(y-4), num(sx+28), num(y-4), it.stroke, dashAttr(it.dash))
			drawMarker(w, it.marker, sx+14, y-4, it.stroke)
		}
		w.printf(`<text x="%s" y="%s">%s</text>`, num(sx+34), num(y), esc(it.label))
		x += iw
	}
	w.printf(`</g>`)
}

func dashAttr(dash string) string {
	if dash == "" {
		return ""
	}
	return ` stroke-dasharray="` + dash + `"`
}

// Marker shapes, so that series differ by more than colour.
const (
	markerCircle   = "circle"
	markerSquare   = "square"
	markerTriangle = "triangle"
)

// drawMarker draws a marker shape centred on (x, y).
func drawMarker(w *svgWriter, shape string, x, y float64, colour string) {
	switch shape {
	case markerCircle:
		w.printf(`<circle cx="%s" cy="%s" r="3.5" fill="%s"/>`, num(x), num(y), colour)
	case markerSquare:
		w.printf(`<rect x="%s" y="%s" width="7" height="7" fill="%s"/>`, num(x-3.5), num(y-3.5), colour)
	case markerTriangle:
		w.printf(`<path d="M%s %sL%s %sL%s %sZ" fill="%s"/>`,
			num(x), num(y-4.5), num(x+4.5), num(y+3.5), num(x-4.5), num(y+3.5), colour)
	}
}

// series is one line of a line chart: a value per second, drawn at the
// middle of its second; a missing value (ok false) breaks the line.
type series struct {
	label  string
	colour string
	dash   string
	marker string
	values []float64
	ok     []bool
}

// drawLine draws a series as a polyline with gaps. Markers are drawn on
// every point of a short run, and always on a point with no neighbour
// (which a line alone would not show).
func drawLine(w *svgWriter, f frame, s series) {
	var d strings.Builder
	pen := false
	for i, v := range s.values {
		if !s.ok[i] {
			pen = false
			continue
		}
		cmd := "L"
		if !pen {
			cmd = "M"
		}
		fmt.Fprintf(&d, "%s%s %s", cmd, num(f.x(float64(i)+0.5)), num(f.y(v)))
		pen = true
	}
	if d.Len() > 0 {
		w.printf(`<path d="%s" fill="none" stroke="%s" stroke-width="2.5" stroke-linejoin="round"%s/>`, d.String(), s.colour, dashAttr(s.dash))
	}
	dense := len(s.values) > 60
	for i, v := range s.values {
		if !s.ok[i] {
			continue
		}
		alone := (i == 0 || !s.ok[i-1]) && (i == len(s.values)-1 || !s.ok[i+1])
		if !dense || alone {
			drawMarker(w, s.marker, f.x(float64(i)+0.5), f.y(v), s.colour)
		}
	}
}

// openSVG starts a chart's <svg> element with its title and description,
// which screen readers announce.
func openSVG(w *svgWriter, id, title, desc string, height float64) {
	w.printf(`<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="%s" viewBox="0 0 %s %s" role="img" aria-labelledby="%s-title %s-desc" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`,
		esc(id), num(chartWidth), num(height), esc(id), esc(id))
	w.printf(`<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, esc(id), esc(title), esc(id), esc(desc))
}
