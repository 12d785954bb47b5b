package history

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// The geometry of a trend, in SVG user units.
const (
	trendWidth      = 640
	trendHeight     = 260
	trendLeft       = 70
	trendRight      = 16
	trendTop        = 28
	trendBottom     = 44
	trendTickTarget = 5
	runTickMax      = 25 // numbered runs under the axis, at most
)

// trendPoint is one run on a trend: its value, or a mark of why it has
// none.
type trendPoint struct {
	run   int // index into History.Runs
	value float64
	has   bool
	// state is "", "inconclusive", "violated" or "failed".
	state string
	name  string
	link  string // the run's report.html, relative to the page
}

// trendSVG draws a series over its group's runs: one dot per run (hollow
// when inconclusive, red when violated, a cross at the bottom when failed),
// each a link to the run's report; the SLO threshold as a dashed red line;
// each change point as a vertical line, linked to the first run after it,
// with the segments' means drawn across.
func trendSVG(title, unit string, pts []trendPoint, threshold *float64, changes []Change, pointIndex []int) template.HTML {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		if p.has {
			lo, hi = math.Min(lo, p.value), math.Max(hi, p.value)
		}
	}
	if threshold != nil && *threshold <= 2*hi {
		hi = math.Max(hi, *threshold)
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	lo = math.Min(0, lo)
	if hi <= lo {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / trendTickTarget)
	hi = math.Ceil(hi/step) * step
	areaW := float64(trendWidth - trendLeft - trendRight)
	areaH := float64(trendHeight - trendTop - trendBottom)
	bottom := float64(trendTop) + areaH
	px := func(i int) float64 {
		if len(pts) == 1 {
			return trendLeft + areaW/2
		}
		return trendLeft + areaW*float64(i)/float64(len(pts)-1)
	}
	py := func(v float64) float64 { return bottom - (v-lo)/(hi-lo)*areaH }
	esc := template.HTMLEscapeString

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="trend plot" role="img" aria-label="%s" viewBox="0 0 %d %d" width="%d" height="%d">`, esc(title), trendWidth, trendHeight, trendWidth, trendHeight)
	fmt.Fprintf(&b, "\n<title>%s</title>\n", esc(title))
	fmt.Fprintf(&b, `<text class="title" x="%s" y="17" text-anchor="middle">%s</text>`+"\n", coord(trendLeft+areaW/2), esc(title))
	for v := lo; v <= hi+step/2; v += step {
		y := coord(py(v))
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%s" x2="%s" y2="%s"/><text class="tick" x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n",
			trendLeft, y, coord(trendLeft+areaW), y, trendLeft-6, y, esc(formatTick(v, unit)))
	}
	fmt.Fprintf(&b, `<path class="axis" d="M%d %dV%sH%s"/>`+"\n", trendLeft, trendTop, coord(bottom), coord(trendLeft+areaW))
	fmt.Fprintf(&b, `<text class="label" x="%s" y="%d" text-anchor="middle">runs, oldest first (%d)</text>`+"\n", coord(trendLeft+areaW/2), trendHeight-8, len(pts))
	// The runs' numbers under the axis, every one or every few.
	every := (len(pts) + runTickMax - 1) / runTickMax
	for i := 0; i < len(pts); i += every {
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%d</text>`+"\n", coord(px(i)), coord(bottom+16), i+1)
	}
	if threshold != nil && *threshold > hi {
		// Far above the values: named, not drawn, or the trend would be flat.
		fmt.Fprintf(&b, `<g class="threshold above"><title>SLO threshold %s, above the chart</title><text x="%s" y="%d" text-anchor="end">SLO %s ↑</text></g>`+"\n",
			esc(formatValue(*threshold, unit)), coord(trendLeft+areaW), trendTop-6, esc(formatValue(*threshold, unit)))
	}
	if threshold != nil && *threshold <= hi {
		y := coord(py(*threshold))
		fmt.Fprintf(&b, `<g class="threshold"><title>SLO threshold %s</title><line x1="%d" y1="%s" x2="%s" y2="%s"/><text x="%s" y="%s" text-anchor="end">SLO %s</text></g>`+"\n",
			esc(formatValue(*threshold, unit)), trendLeft, y, coord(trendLeft+areaW), y, coord(trendLeft+areaW-2), coord(py(*threshold)-4), esc(formatValue(*threshold, unit)))
	}
	// Segments' means, then the change points.
	for i, c := range changes {
		from, to := 0, len(pts)-1
		if i > 0 {
			from = pointIndex[changes[i-1].Point]
		}
		x := (px(pointIndex[c.Point]-1) + px(pointIndex[c.Point])) / 2
		mean := func(m float64, x1, x2 float64) {
			fmt.Fprintf(&b, `<line class="mean" x1="%s" y1="%s" x2="%s" y2="%s"/>`, coord(x1), coord(py(m)), coord(x2), coord(py(m)))
		}
		mean(c.Before.Mean, px(from), x)
		if i == len(changes)-1 {
			mean(c.After.Mean, x, px(to))
		}
		class := "change better"
		if c.Worse {
			class = "change worse"
		}
		first := pts[pointIndex[c.Point]]
		fmt.Fprintf(&b, `<a href="%s"><g class="%s"><title>%s %s → %s (%s), first run after: %s</title><line x1="%s" y1="%d" x2="%s" y2="%s"/></g></a>`+"\n",
			esc(first.link), class, esc(formatChange(c.Change)), esc(formatValue(c.Before.Mean, unit)), esc(formatValue(c.After.Mean, unit)),
			esc(fmt.Sprintf("p=%.2g", c.PValue)), esc(first.name), coord(x), trendTop, coord(x), coord(bottom))
	}
	var line []string
	for i, p := range pts {
		if p.has {
			line = append(line, coord(px(i))+","+coord(py(p.value)))
		}
	}
	if len(line) > 1 {
		fmt.Fprintf(&b, `<polyline class="values" points="%s"/>`+"\n", strings.Join(line, " "))
	}
	for i, p := range pts {
		x := coord(px(i))
		switch {
		case p.has:
			fmt.Fprintf(&b, `<a href="%s"><circle class="run %s" cx="%s" cy="%s" r="3.5"><title>%s: %s%s</title></circle></a>`+"\n",
				esc(p.link), p.state, x, coord(py(p.value)), esc(p.name), esc(formatValue(p.value, unit)), esc(stateNote(p.state)))
		case p.state == "failed":
			fmt.Fprintf(&b, `<a href="%s"><text class="run failed" x="%s" y="%s" text-anchor="middle">✕<title>%s: failed</title></text></a>`+"\n",
				esc(p.link), x, coord(bottom-3), esc(p.name))
		}
	}
	b.WriteString("</svg>")
	return template.HTML(b.String())
}

func stateNote(state string) string {
	if state == "" {
		return ""
	}
	return " (" + state + ")"
}

// niceStep is 1, 2 or 5 times a power of ten, near span.
func niceStep(span float64) float64 {
	if span <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(span)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= span {
			return m * p
		}
	}
	return 10 * p
}

func formatTick(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'g', 4, 64)
	if unit != "" && unit != "ms" && unit != "s" {
		return s
	}
	return s + unit
}

func coord(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
