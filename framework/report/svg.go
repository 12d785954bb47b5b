package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/kscale/kscale/measurements/metrics"
)

// Plot is one line chart of report.html, drawn as inline SVG so that the
// page needs nothing but itself.
type Plot struct {
	Title, XLabel, YLabel string
	Lines                 []Line
}

// Line is one named series of a Plot.
type Line struct {
	Name   string
	Points []metrics.Point
}

// The geometry of a plot in SVG user units; CSS scales the whole picture
// down on narrow screens.
const (
	plotWidth       = 580
	plotMarginLeft  = 64
	plotMarginRight = 20
	plotMarginTop   = 30
	plotAreaHeight  = 220
	plotBelowArea   = 46 // x tick labels and the x label
	legendColumns   = 3
	legendRow       = 18
	legendNameMax   = 24 // characters; longer names are cut, the full one is its tooltip
	plotTickTarget  = 5
	markerMaxPoints = 24 // lines this short get a dot per point
)

// palette is a colour-blind-safe set (Okabe–Ito, yellow swapped for brown
// because it vanishes on white); lines past its end reuse it dashed.
var palette = []string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#8c564b", "#555555"}

// HasData says whether any line has a point worth drawing.
func (p Plot) HasData() bool {
	for _, l := range p.Lines {
		for _, pt := range l.Points {
			if finite(pt.X) && finite(pt.Y) {
				return true
			}
		}
	}
	return false
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// axis maps data values onto [0, 1] and knows its ticks.
type axis struct {
	min, max float64
	ticks    []float64
	// exp is the decimal exponent of the tick step, for labels that show
	// as many decimals as the step needs and no more.
	exp int
}

// niceStep returns a step of 1, 2 or 5 times a power of ten, its exponent,
// close to span/target.
func niceStep(span float64, target int) (step float64, exp int) {
	if !(span > 0) || !finite(span) || target < 1 {
		return 1, 0
	}
	raw := span / float64(target)
	exp = int(math.Floor(math.Log10(raw)))
	f := raw / math.Pow(10, float64(exp))
	var m float64
	switch {
	case f <= 1:
		m = 1
	case f <= 2:
		m = 2
	case f <= 5:
		m = 5
	default:
		m, exp = 1, exp+1
	}
	return m * math.Pow(10, float64(exp)), exp
}

// tickValue is k steps of m×10^exp, computed from integers so that 0.1
// steps give 0.3 and not 0.30000000000000004.
func tickValue(k int64, m float64, exp int) float64 {
	v := float64(k) * m
	if exp < 0 {
		return v / math.Pow(10, float64(-exp))
	}
	return v * math.Pow(10, float64(exp))
}

// niceAxis spans lo..hi with round ticks, widening the range to the ticks
// just outside it. An empty or zero-width range still gets a usable axis:
// a plot must never divide by zero or print NaN.
func niceAxis(lo, hi float64, target int) axis {
	if !finite(lo) || !finite(hi) {
		lo, hi = 0, 1
	}
	if lo > hi {
		lo, hi = hi, lo
	}
	if lo == hi {
		pad := math.Abs(lo) * 0.1
		if pad == 0 {
			pad = 1
		}
		// A single value at zero stays the axis' bottom, as counts and
		// rates read best from zero.
		if lo == 0 {
			hi = 1
		} else {
			lo, hi = lo-pad, hi+pad
		}
	}
	step, exp := niceStep(hi-lo, target)
	m := math.Round(step / math.Pow(10, float64(exp)))
	first, last := math.Floor(lo/step+1e-9), math.Ceil(hi/step-1e-9)
	if !(last-first >= 1 && last-first <= 4*float64(target)) || math.Abs(first) > 1<<52 || math.Abs(last) > 1<<52 {
		// A range far from zero relative to its width (1e18 ± 1) has no
		// round ticks a float can hold; its ends will do.
		return axis{min: lo, max: hi, ticks: []float64{lo, hi}, exp: int(math.Floor(math.Log10(hi - lo)))}
	}
	a := axis{min: tickValue(int64(first), m, exp), max: tickValue(int64(last), m, exp), exp: exp}
	for k := int64(first); k <= int64(last); k++ {
		a.ticks = append(a.ticks, tickValue(k, m, exp))
	}
	if a.max <= a.min { // float trouble at extreme magnitudes
		a.max = a.min + 1
	}
	return a
}

// pos is v's place on the axis, 0 at min and 1 at max.
func (a axis) pos(v float64) float64 {
	if !(a.max > a.min) {
		return 0.5
	}
	return (v - a.min) / (a.max - a.min)
}

// label formats a tick: with a k/M/G suffix when the axis reaches 10 000,
// with the decimals the step needs.
func (a axis) label(v float64) string {
	if v == 0 {
		return "0" // not "-0"
	}
	big := math.Max(math.Abs(a.min), math.Abs(a.max))
	suffix, exp := "", a.exp
	for _, u := range []struct {
		s string
		e int
	}{{"G", 9}, {"M", 6}, {"k", 3}} {
		if big >= 10*math.Pow(10, float64(u.e)) {
			suffix, exp = u.s, exp-u.e
			v /= math.Pow(10, float64(u.e))
			break
		}
	}
	decimals := 0
	if exp < 0 {
		decimals = -exp
	}
	return strconv.FormatFloat(v, 'f', decimals, 64) + suffix
}

// bounds are the smallest and largest finite X and Y of the lines; ok is
// false when there is none.
func bounds(lines []Line) (xlo, xhi, ylo, yhi float64, ok bool) {
	xlo, ylo = math.Inf(1), math.Inf(1)
	xhi, yhi = math.Inf(-1), math.Inf(-1)
	for _, l := range lines {
		for _, p := range l.Points {
			if !finite(p.X) || !finite(p.Y) {
				continue
			}
			ok = true
			xlo, xhi = math.Min(xlo, p.X), math.Max(xhi, p.X)
			ylo, yhi = math.Min(ylo, p.Y), math.Max(yhi, p.Y)
		}
	}
	if !ok {
		return 0, 1, 0, 1, false
	}
	return xlo, xhi, ylo, yhi, true
}

// SVG draws the plot. The Y axis always includes zero: every quantity the
// report plots (rates, cores, MiB, nodes, fractions) is read against it.
func (p Plot) SVG() template.HTML {
	xlo, xhi, ylo, yhi, _ := bounds(p.Lines)
	xa := niceAxis(xlo, xhi, plotTickTarget)
	ya := niceAxis(math.Min(0, ylo), math.Max(0, yhi), plotTickTarget)

	areaW := float64(plotWidth - plotMarginLeft - plotMarginRight)
	areaH := float64(plotAreaHeight)
	left, top := float64(plotMarginLeft), float64(plotMarginTop)
	bottom := top + areaH
	px := func(v float64) float64 { return left + xa.pos(v)*areaW }
	py := func(v float64) float64 { return bottom - ya.pos(v)*areaH }

	named := 0
	for _, l := range p.Lines {
		if l.Name != "" {
			named++
		}
	}
	legendRows := (named + legendColumns - 1) / legendColumns
	height := plotMarginTop + plotAreaHeight + plotBelowArea + legendRows*legendRow + 6

	var b strings.Builder
	esc := template.HTMLEscapeString
	fmt.Fprintf(&b, `<svg class="plot" role="img" aria-label="%s" viewBox="0 0 %d %d" width="%d" height="%d">`,
		esc(p.Title), plotWidth, height, plotWidth, height)
	fmt.Fprintf(&b, "\n<title>%s</title>\n", esc(p.Title))
	fmt.Fprintf(&b, `<text class="title" x="%s" y="18" text-anchor="middle">%s</text>`+"\n", coord(left+areaW/2), esc(p.Title))

	// Grid and Y ticks.
	for _, t := range ya.ticks {
		y := coord(py(t))
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, coord(left), y, coord(left+areaW), y)
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n",
			coord(left-6), y, esc(ya.label(t)))
	}
	// X ticks.
	for _, t := range xa.ticks {
		x := coord(px(t))
		fmt.Fprintf(&b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, x, coord(bottom), x, coord(bottom+4))
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", x, coord(bottom+16), esc(xa.label(t)))
	}
	fmt.Fprintf(&b, `<path class="axis" d="M%s %sV%sH%s"/>`+"\n", coord(left), coord(top), coord(bottom), coord(left+areaW))
	fmt.Fprintf(&b, `<text class="label" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", coord(left+areaW/2), coord(bottom+36), esc(p.XLabel))
	fmt.Fprintf(&b, `<text class="label" transform="translate(14 %s) rotate(-90)" text-anchor="middle">%s</text>`+"\n", coord(top+areaH/2), esc(p.YLabel))

	// Lines, then the legend, in the same colour order.
	for i, l := range p.Lines {
		colour, dash := lineStyle(i)
		var pts []string
		for _, pt := range l.Points {
			if finite(pt.X) && finite(pt.Y) {
				pts = append(pts, coord(px(pt.X))+","+coord(py(pt.Y)))
			}
		}
		if len(pts) == 0 {
			continue
		}
		fmt.Fprintf(&b, `<g class="line" stroke="%s" fill="%s"><title>%s</title>`, colour, colour, esc(l.Name))
		if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline fill="none" stroke-width="1.8"%s points="%s"/>`, dash, strings.Join(pts, " "))
		}
		if len(pts) <= markerMaxPoints {
			for _, xy := range pts {
				x, y, _ := strings.Cut(xy, ",")
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2.5"/>`, x, y)
			}
		}
		b.WriteString("</g>\n")
	}
	n := 0
	for i, l := range p.Lines {
		if l.Name == "" {
			continue
		}
		colour, dash := lineStyle(i)
		x := left + float64(n%legendColumns)*(areaW/legendColumns)
		y := bottom + float64(plotBelowArea) + float64(n/legendColumns)*legendRow + 4
		name := l.Name
		if r := []rune(name); len(r) > legendNameMax {
			name = string(r[:legendNameMax-1]) + "…"
		}
		fmt.Fprintf(&b, `<g class="legend"><title>%s</title><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="3"%s/><text x="%s" y="%s" dominant-baseline="middle">%s</text></g>`+"\n",
			esc(l.Name), coord(x), coord(y), coord(x+22), coord(y), colour, dash, coord(x+28), coord(y), esc(name))
		n++
	}
	b.WriteString("</svg>")
	return template.HTML(b.String())
}

// lineStyle is the i-th line's colour and dash attribute.
func lineStyle(i int) (colour, dash string) {
	colour = palette[i%len(palette)]
	if i >= len(palette) {
		dash = ` stroke-dasharray="6 3"`
	}
	return colour, dash
}

// coord prints an SVG coordinate: a tenth of a unit is finer than a pixel,
// and fixed precision keeps the golden file stable.
func coord(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	if s == "-0" {
		s = "0"
	}
	return s
}
