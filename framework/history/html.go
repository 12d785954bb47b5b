package history

import (
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kscale/kscale/framework/report"
)

// historyStyle adds the trends' marks to the report's style sheet.
const historyStyle = `
svg.trend .values{fill:none;stroke:#0072b2;stroke-width:1.5}
svg.trend circle.run{fill:#0072b2}
svg.trend circle.run.inconclusive{fill:#fff;stroke:#9a6700;stroke-width:1.5}
svg.trend circle.run.violated{fill:#cf222e}
svg.trend text.run.failed{fill:#a40e26;font-weight:700}
svg.trend .threshold line{stroke:#cf222e;stroke-dasharray:6 3}
svg.trend .threshold text{fill:#cf222e;font-size:11px}
svg.trend .mean{stroke:#57606a;stroke-width:1;stroke-dasharray:2 2}
svg.trend .change line{stroke-width:2}
svg.trend .change.worse line{stroke:#cf222e}
svg.trend .change.better line{stroke:#1a7f37}
.filters{margin:.6em 0}
.filters label{margin-right:.8em;white-space:nowrap;cursor:pointer;text-decoration:underline}
section.series{display:inline-block;vertical-align:top;margin:0 1em 1em 0}
`

// filterStyle hides every series but the chosen measurement's, in CSS
// alone: the page runs no script.
func filterStyle(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "#m%d:checked~main section.series:not(.m%d){display:none}\n", i, i)
	}
	return b.String()
}

type historyPage struct {
	H            *History
	Regressions  []Regression
	Measurements []string
	Groups       []groupView
	Style        template.CSS
}

type groupView struct {
	Key    Key
	Runs   []runView
	Trends []trendView
	Others []*Series // series drawn in a table only: PerfData items that did not change
}

type runView struct {
	Name, Link, Verdict, Failed string
}

type trendView struct {
	Series      *Series
	Measurement int
	SVG         template.HTML
}

var historyHTML = template.Must(template.New("history").Funcs(template.FuncMap{
	"csp":    func() string { return report.ContentPolicy },
	"change": formatChange,
	"value":  formatValue,
	"last":   func(s *Series) float64 { return s.Points[len(s.Points)-1].Value },
	"mul100": func(v float64) float64 { return 100 * v },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{csp}}">
<title>kscale history</title>
<style>{{.Style}}</style></head><body>
<input type="radio" name="m" id="mall" checked hidden>{{range $i, $m := .Measurements}}<input type="radio" name="m" id="m{{$i}}" hidden>{{end}}
<main>
<h1>kscale history</h1>
<p>{{len .H.Runs}} runs of {{len .H.Groups}} kinds. Change points: E-Divisive means candidates, Student's t-test at p ≤ {{.H.Options.PValue}} (times the splits a candidate was the best of), a change of {{printf "%.0f" (mul100 .H.Options.MinMagnitude)}} % or more, {{.H.Options.MinSegment}} runs a side at least.</p>
{{if .Regressions}}<div class="banner error" id="verdict">Regressed in the newest runs:<ul>{{range .Regressions}}<li>{{.Series.Figure}} ({{.Key}}): {{change .Change.Change}}, {{value .Change.Before.Mean .Series.Unit}} → {{value .Change.After.Mean .Series.Unit}}, from {{index .Change.AfterRuns 0}}</li>{{end}}</ul></div>
{{else}}<div class="banner" id="verdict">No gated figure regressed in the newest runs.</div>{{end}}
<div class="filters">Show: <label for="mall">everything</label>{{range $i, $m := .Measurements}}<label for="m{{$i}}">{{$m}}</label>{{end}}</div>
{{range .Groups}}<h2>{{.Key}}</h2>
<details><summary>{{len .Runs}} runs</summary><table class="runs"><tr><th>run</th><th>verdict</th></tr>
{{range .Runs}}<tr><td><a href="{{.Link}}">{{.Name}}</a></td><td class="{{.Verdict}}">{{.Verdict}}{{if .Failed}}: {{.Failed}}{{end}}</td></tr>
{{end}}</table></details>
{{range .Trends}}<section class="series m{{.Measurement}}">{{.SVG}}
{{range .Series.ChangePoints}}<p class="{{if .Regression}}regressed{{else if .Worse}}muted{{else}}better{{end}}">{{change .Change}} from {{index .AfterRuns 0}} (p={{printf "%.2g" .PValue}}, {{len .BeforeRuns}} runs before, {{len .AfterRuns}} after){{if .Regression}} — regression{{end}}</p>{{end}}
{{with .Series.Missing}}<p class="muted">{{len .}} runs left out (failed or not measured).</p>{{end}}
</section>
{{end}}{{with .Others}}<details><summary>{{len .}} more figures without a change point</summary><table><tr><th>figure</th><th class="num">newest</th></tr>
{{range .}}<tr><td>{{.Figure}}</td><td class="num">{{value (last .) .Unit}}</td></tr>
{{end}}</table></details>{{end}}
{{end}}
{{with .H.Skipped}}<h2>Skipped</h2><ul>{{range .}}<li>{{.Dir}}: {{.Reason}}</li>{{end}}</ul>{{end}}
</main></body></html>
`))

// WriteHTML renders history.html for a page written into dir: trends of
// every headline figure and every figure that changed, linked to the
// runs' reports.
func (h *History) WriteHTML(w io.Writer, dir string) error {
	page := historyPage{H: h, Regressions: h.Regressions()}
	measurementIndex := map[string]int{}
	for _, g := range h.Groups {
		for _, s := range g.Series {
			if _, ok := measurementIndex[s.Measurement]; !ok {
				measurementIndex[s.Measurement] = len(page.Measurements)
				page.Measurements = append(page.Measurements, s.Measurement)
			}
		}
	}
	page.Style = template.CSS(report.StyleSheet + historyStyle + filterStyle(len(page.Measurements)))
	link := func(r *Run) string {
		rel, err := filepath.Rel(dir, filepath.Join(r.Dir, report.HTMLFile))
		if err != nil {
			rel = filepath.Join(r.Dir, report.HTMLFile)
		}
		return filepath.ToSlash(rel)
	}
	for _, g := range h.Groups {
		gv := groupView{Key: g.Key}
		for _, ri := range g.Runs {
			r := h.Runs[ri]
			gv.Runs = append(gv.Runs, runView{Name: r.Name, Link: link(r), Verdict: string(r.Verdict), Failed: r.Failed})
		}
		series := slices.Clone(g.Series)
		// Gated figures first, then those that changed, then the rest.
		rank := func(s *Series) int {
			switch {
			case s.Gated:
				return 0
			case len(s.ChangePoints) > 0:
				return 1
			case !strings.Contains(s.Number, "Perc") && !strings.Contains(s.Number, "="):
				return 2
			}
			return 3
		}
		slices.SortStableFunc(series, func(a, b *Series) int { return rank(a) - rank(b) })
		for _, s := range series {
			if rank(s) == 3 {
				gv.Others = append(gv.Others, s)
				continue
			}
			pts, index := trendPoints(h, g, s, link)
			gv.Trends = append(gv.Trends, trendView{Series: s, Measurement: measurementIndex[s.Measurement],
				SVG: trendSVG(s.Figure, s.Unit, pts, s.Threshold, s.ChangePoints, index)})
		}
		page.Groups = append(page.Groups, gv)
	}
	return historyHTML.Execute(w, page)
}

// trendPoints places a series on its group's runs; index maps each of the
// series' points to its place.
func trendPoints(h *History, g *Group, s *Series, link func(*Run) string) ([]trendPoint, []int) {
	value := map[int]float64{}
	for _, p := range s.Points {
		value[p.Run] = p.Value
	}
	var pts []trendPoint
	var index []int
	for _, ri := range g.Runs {
		r := h.Runs[ri]
		p := trendPoint{run: ri, name: r.Name, link: link(r)}
		switch r.Verdict {
		case report.RunFailed:
			p.state = "failed"
		case report.RunInconclusive:
			p.state = "inconclusive"
		case report.RunViolated:
			p.state = "violated"
		}
		if v, ok := value[ri]; ok {
			p.value, p.has = v, true
			index = append(index, len(pts))
		}
		pts = append(pts, p)
	}
	return pts, index
}
