package report

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kscale/kscale/measurements/metrics"
)

func TestNiceAxis(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name   string
		lo, hi float64
		ticks  []float64
		labels []string
	}{
		{"unit range", 0, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, []string{"0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{"widened to the next round tick", 0, 97, []float64{0, 20, 40, 60, 80, 100}, nil},
		{"reversed bounds", 97, 0, []float64{0, 20, 40, 60, 80, 100}, nil},
		{"empty: zero width at zero", 0, 0, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, nil},
		{"one value", 3, 3, []float64{2.6, 2.8, 3, 3.2, 3.4}, []string{"2.6", "2.8", "3.0", "3.2", "3.4"}},
		{"one negative value", -5, -5, []float64{-5.6, -5.4, -5.2, -5, -4.8, -4.6, -4.4}, nil},
		{"negative to positive", -7, 3, []float64{-8, -6, -4, -2, 0, 2, 4}, []string{"-8", "-6", "-4", "-2", "0", "2", "4"}},
		{"small numbers", 0, 0.0042, []float64{0, 0.001, 0.002, 0.003, 0.004, 0.005}, []string{"0", "0.001", "0.002", "0.003", "0.004", "0.005"}},
		{"thousands get a suffix", 0, 150000, []float64{0, 50000, 100000, 150000}, []string{"0", "50k", "100k", "150k"}},
		{"suffix keeps the step's decimals", 10000, 11000, []float64{10000, 10200, 10400, 10600, 10800, 11000}, []string{"10.0k", "10.2k", "10.4k", "10.6k", "10.8k", "11.0k"}},
		{"under ten thousand, no suffix", 0, 5000, []float64{0, 1000, 2000, 3000, 4000, 5000}, []string{"0", "1000", "2000", "3000", "4000", "5000"}},
		{"NaN bound", nan, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, nil},
		{"infinite bound", 0, math.Inf(1), []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := niceAxis(tc.lo, tc.hi, 5)
			if !equalFloats(a.ticks, tc.ticks) {
				t.Fatalf("ticks %v, want %v", a.ticks, tc.ticks)
			}
			if a.min != tc.ticks[0] || a.max != tc.ticks[len(tc.ticks)-1] {
				t.Errorf("axis %v..%v, want the outer ticks", a.min, a.max)
			}
			if tc.labels != nil {
				var got []string
				for _, v := range a.ticks {
					got = append(got, a.label(v))
				}
				if strings.Join(got, " ") != strings.Join(tc.labels, " ") {
					t.Errorf("labels %q, want %q", got, tc.labels)
				}
			}
		})
	}
}

// equalFloats compares exactly: ticks are built from integers and must be
// the decimal they print as.
func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestNiceAxisFarFromZero(t *testing.T) {
	a := niceAxis(1e18, 1e18+4096, 5)
	if len(a.ticks) < 2 || !(a.max > a.min) {
		t.Fatalf("axis %+v", a)
	}
	for _, v := range []float64{a.pos(a.min), a.pos(a.max)} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("pos %v on %+v", v, a)
		}
	}
}

func TestNiceStep(t *testing.T) {
	for _, tc := range []struct {
		span float64
		step float64
		exp  int
	}{
		{1, 0.2, -1}, {10, 2, 0}, {7, 2, 0}, {3, 1, 0}, {1000, 200, 2}, {5000, 1000, 3}, {0.6, 0.2, -1},
		{24, 5, 0}, {0, 1, 0}, {-3, 1, 0}, {math.NaN(), 1, 0},
	} {
		step, exp := niceStep(tc.span, 5)
		if math.Abs(step-tc.step) > 1e-12*tc.step || exp != tc.exp {
			t.Errorf("niceStep(%v) = %v, %d; want %v, %d", tc.span, step, exp, tc.step, tc.exp)
		}
	}
}

func TestAxisPos(t *testing.T) {
	a := niceAxis(0, 100, 5)
	for _, tc := range []struct{ v, want float64 }{{0, 0}, {50, 0.5}, {100, 1}, {-20, -0.2}} {
		if got := a.pos(tc.v); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("pos(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
	if got := (axis{min: 3, max: 3}).pos(3); got != 0.5 {
		t.Errorf("zero-width axis: pos %v, want the middle", got)
	}
}

var svgNumber = regexp.MustCompile(` (?:x|y|x1|y1|x2|y2|cx|cy)="([^"]*)"`)

// checkSVG asserts that every coordinate of an SVG is a finite number
// inside the picture.
func checkSVG(t *testing.T, svg string) {
	t.Helper()
	if !strings.HasPrefix(svg, `<svg class="plot"`) || !strings.HasSuffix(svg, "</svg>") {
		t.Fatalf("not a plot: %.80s", svg)
	}
	if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
		t.Fatalf("NaN or Inf in:\n%s", svg)
	}
	for _, m := range svgNumber.FindAllStringSubmatch(svg, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil || v < 0 || v > plotWidth {
			t.Fatalf("coordinate %s out of the picture", m[0])
		}
	}
	for _, m := range regexp.MustCompile(`points="([^"]*)"`).FindAllStringSubmatch(svg, -1) {
		for _, xy := range strings.Fields(m[1]) {
			x, y, _ := strings.Cut(xy, ",")
			for _, s := range []string{x, y} {
				if v, err := strconv.ParseFloat(s, 64); err != nil || v < 0 || v > plotWidth {
					t.Fatalf("polyline point %q out of the picture", xy)
				}
			}
		}
	}
}

func TestPlotSVGEdgeCases(t *testing.T) {
	pts := func(xy ...float64) []metrics.Point {
		var out []metrics.Point
		for i := 0; i+1 < len(xy); i += 2 {
			out = append(out, metrics.Point{X: xy[i], Y: xy[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		lines     []Line
		hasData   bool
		polylines int
		circles   int
		contains  []string
	}{
		{"no lines", nil, false, 0, 0, []string{">0</text>", ">1.0</text>"}},
		{"a line without points", []Line{{Name: "etcd"}}, false, 0, 0, []string{">etcd</text>"}},
		{"one point", []Line{{Name: "a", Points: pts(30, 7)}}, true, 0, 1, []string{">30</text>", ">8</text>"}},
		{"all Y equal", []Line{{Name: "flat", Points: pts(0, 5, 10, 5, 20, 5)}}, true, 1, 3, []string{">5</text>", ">0</text>"}},
		{"all Y zero", []Line{{Name: "idle", Points: pts(0, 0, 10, 0)}}, true, 1, 2, []string{">1.0</text>"}},
		{"negative values", []Line{{Name: "delta", Points: pts(-10, -3, 0, 2, 10, -8)}}, true, 1, 3, []string{">-8</text>", ">-10</text>"}},
		{"NaN and Inf points are left out", []Line{{Name: "n", Points: []metrics.Point{{X: 0, Y: 1}, {X: math.NaN(), Y: 2}, {X: 2, Y: math.Inf(1)}, {X: 3, Y: 4}}}}, true, 1, 2, nil},
		{"long series get no markers", []Line{{Name: "cdf", Points: func() []metrics.Point {
			var p []metrics.Point
			for i := 0; i < 200; i++ {
				p = append(p, metrics.Point{X: float64(i), Y: float64(i) / 200})
			}
			return p
		}()}}, true, 1, 0, nil},
		{"names are escaped and cut", []Line{{Name: "<kube-apiserver> & a name far longer than the legend has room for", Points: pts(0, 1, 1, 2)}}, true, 1, 2,
			[]string{"&lt;kube-apiserver&gt; &amp; a na…", "<title>&lt;kube-apiserver&gt; &amp; a name far longer than the legend has room for</title>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Plot{Title: "T", XLabel: "x", YLabel: "y", Lines: tc.lines}
			if p.HasData() != tc.hasData {
				t.Errorf("HasData %v", p.HasData())
			}
			svg := string(p.SVG())
			checkSVG(t, svg)
			if n := strings.Count(svg, "<polyline"); n != tc.polylines {
				t.Errorf("%d polylines, want %d", n, tc.polylines)
			}
			if n := strings.Count(svg, "<circle"); n != tc.circles {
				t.Errorf("%d markers, want %d", n, tc.circles)
			}
			for _, want := range tc.contains {
				if !strings.Contains(svg, want) {
					t.Errorf("lacks %q:\n%s", want, svg)
				}
			}
		})
	}
}

func TestPlotLegendAndPalette(t *testing.T) {
	var lines []Line
	for i := 0; i < len(palette)+2; i++ {
		lines = append(lines, Line{Name: "c" + strconv.Itoa(i), Points: []metrics.Point{{X: 0, Y: float64(i)}, {X: 1, Y: float64(i + 1)}}})
	}
	svg := string(Plot{Title: "many", Lines: lines}.SVG())
	checkSVG(t, svg)
	if n := strings.Count(svg, `<g class="legend">`); n != len(lines) {
		t.Errorf("%d legend entries, want %d", n, len(lines))
	}
	// Colours repeat past the palette, dashed so the lines stay apart.
	if n := strings.Count(svg, `stroke-dasharray`); n != 2*2 {
		t.Errorf("%d dashed line or legend marks, want 4", n)
	}
	// The picture grows with the legend's rows: 10 names, 3 a row.
	if !strings.Contains(svg, `viewBox="0 0 580 374"`) {
		t.Errorf("unexpected size: %.120s", svg)
	}
}
