package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
)

// Delta is one headline number of one measurement in two runs.
type Delta struct {
	Measurement string  `json:"measurement"`
	Key         string  `json:"key"`
	A           float64 `json:"a"`
	B           float64 `json:"b"`
	// Change is (B - A) / A in percent; ±Inf when A is 0 and B is not.
	Change float64 `json:"changePercent"`
	// Worse says whether B is worse than A: higher for latencies, CPU,
	// memory and counts of bad things; lower for throughput and
	// availability.
	Worse bool `json:"worse"`
	// Chosen: the measure is one the comparison gates on.
	Chosen bool `json:"chosen"`
	// Regressed: chosen, worse, and beyond the tolerance.
	Regressed bool `json:"regressed"`
}

// CompareOptions say which measures gate and by how much.
type CompareOptions struct {
	// Measures are "<measurement name>:<headline key>" or just a
	// measurement name (all its headline numbers); empty means every
	// headline number that has a threshold.
	Measures []string
	// TolerancePercent is how much worse a chosen measure may get.
	TolerancePercent float64
}

// HigherIsBetter lists the headline numbers where more is better; every
// other number (latencies, usage, counts of failures) is better lower.
func HigherIsBetter(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "pods/s") || strings.Contains(k, "throughput") || strings.Contains(k, "availability")
}

// Compare pairs the headline numbers of the measurements both runs have,
// by measurement name and key, in a stable order.
func Compare(a, b *Run, opts CompareOptions) []Delta {
	bByName := map[string]Measurement{}
	for _, m := range b.Measurements {
		bByName[m.Name] = m
	}
	var out []Delta
	for _, ma := range a.Measurements {
		mb, ok := bByName[ma.Name]
		if !ok {
			continue
		}
		keys := make([]string, 0, len(ma.Headline))
		for k := range ma.Headline {
			if _, ok := mb.Headline[k]; ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			d := Delta{Measurement: ma.Name, Key: k, A: ma.Headline[k], B: mb.Headline[k]}
			switch {
			case d.A != 0:
				d.Change = 100 * (d.B - d.A) / math.Abs(d.A)
			case d.B > 0:
				d.Change = math.Inf(1)
			case d.B < 0:
				d.Change = math.Inf(-1)
			}
			d.Worse = d.B > d.A
			if HigherIsBetter(k) {
				d.Worse = d.B < d.A
			}
			d.Chosen = chosen(opts.Measures, ma, k)
			d.Regressed = d.Chosen && d.Worse && math.Abs(d.Change) > opts.TolerancePercent
			out = append(out, d)
		}
	}
	return out
}

func chosen(measures []string, m Measurement, key string) bool {
	if len(measures) == 0 {
		_, hasThreshold := m.Thresholds[key]
		return hasThreshold
	}
	for _, spec := range measures {
		name, k, hasKey := strings.Cut(spec, ":")
		if name == m.Name && (!hasKey || k == key) {
			return true
		}
	}
	return false
}

// Regressions returns the deltas that regressed.
func Regressions(deltas []Delta) []Delta {
	var out []Delta
	for _, d := range deltas {
		if d.Regressed {
			out = append(out, d)
		}
	}
	return out
}

// WriteCompareText prints the deltas as an aligned table.
func WriteCompareText(w io.Writer, a, b *Run, deltas []Delta) error {
	fmt.Fprintf(w, "A: %s (%s, %d nodes, %s) — verdict %s\nB: %s (%s, %d nodes, %s) — verdict %s\n\n",
		a.Config, a.Cluster.Version, a.Cluster.Nodes, a.Started.Format("2006-01-02 15:04"), verdictText(a),
		b.Config, b.Cluster.Version, b.Cluster.Nodes, b.Started.Format("2006-01-02 15:04"), verdictText(b))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "measurement\tnumber\tA\tB\tchange\t")
	for _, d := range deltas {
		mark := ""
		switch {
		case d.Regressed:
			mark = "REGRESSED"
		case d.Worse && d.Chosen:
			mark = "worse, within tolerance"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.4g\t%.4g\t%s\t%s\n", d.Measurement, d.Key, d.A, d.B, formatChange(d.Change), mark)
	}
	return tw.Flush()
}

// verdictText is a run's verdict for the comparison's header: an
// inconclusive run's numbers lack what it did not measure.
func verdictText(r *Run) string {
	v := string(r.Verdict)
	if v == "" {
		v = "none"
	}
	if reason := r.InconclusiveReason(); r.Verdict == RunInconclusive && reason != "" {
		v += " (" + reason + ")"
	}
	return v
}

func formatChange(c float64) string {
	if math.IsInf(c, 0) {
		return "from 0"
	}
	return fmt.Sprintf("%+.1f%%", c)
}

var compareHTML = template.Must(template.New("compare").Funcs(htmlFuncs).Funcs(template.FuncMap{"change": formatChange}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{csp}}">
<title>kscale compare: {{.A.Config}} vs {{.B.Config}}</title>
<style>{{stylesheet}}</style></head><body>
<h1>{{.A.Config}}: A vs B</h1>
<p>A: {{.A.Cluster.Version}}, {{.A.Cluster.Nodes}} nodes, {{.A.Started.Format "2006-01-02 15:04"}} — verdict {{.A.Verdict}}<br>
B: {{.B.Cluster.Version}}, {{.B.Cluster.Nodes}} nodes, {{.B.Started.Format "2006-01-02 15:04"}} — verdict {{.B.Verdict}}</p>
<table id="deltas"><tr><th>measurement</th><th>number</th><th class="num">A</th><th class="num">B</th><th class="num">change</th></tr>
{{range .Deltas}}<tr class="{{if .Regressed}}regressed{{else if not .Worse}}better{{end}}"><td>{{.Measurement}}</td><td>{{.Key}}</td><td class="num">{{printf "%.4g" .A}}</td><td class="num">{{printf "%.4g" .B}}</td><td class="num">{{change .Change}}{{if .Regressed}} regressed{{end}}</td></tr>
{{end}}</table></body></html>
`))

// WriteCompareHTML renders the deltas as one self-contained page.
func WriteCompareHTML(w io.Writer, a, b *Run, deltas []Delta) error {
	return compareHTML.Execute(w, struct {
		A, B   *Run
		Deltas []Delta
	}{a, b, deltas})
}
