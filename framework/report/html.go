package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kscale/kscale/measurements"
	"github.com/kscale/kscale/measurements/metrics"
)

// HTMLFile is the human-readable report of a run in its report folder.
const HTMLFile = "report.html"

// The method names and series names report.html looks for; they are the
// measurements package's, which keeps them unexported.
const (
	methodPodStartup           = "PodStartupLatency"
	methodAPIResponsiveness    = "APIResponsivenessPrometheus"
	methodAPIRespSimple        = "APIResponsivenessPrometheusSimple"
	methodSchedulingThroughput = "SchedulingThroughput"
	methodResourceUsage        = "ResourceUsageSummary"
	seriesPodStartupCDF        = "pod_startup CDF"
	seriesScheduled            = "scheduled pods/s"
	seriesCPUPrefix            = "cpu "
	seriesMemoryPrefix         = "memory "
)

// StyleSheet is shared by report.html, the compare page and history.html
// so that they read alike; it is inlined because the pages must open
// offline.
const StyleSheet = `
:root{--pass:#1a7f37;--violated:#cf222e;--failed:#a40e26;--notmeasured:#9a6700;--muted:#57606a;--line:#d0d7de}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;padding:1.5em;color:#1f2328;background:#fff;line-height:1.4}
main{max-width:1320px}
h1{margin:0 0 .2em;font-size:1.7em}
h2{margin:1.6em 0 .5em;font-size:1.3em;border-bottom:1px solid var(--line);padding-bottom:.2em}
h3{margin:1.2em 0 .4em;font-size:1.05em}
table{border-collapse:collapse;margin:.3em 0 1em;font-size:.92em}
td,th{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
ul.plain{margin:0;padding:0;list-style:none}
ul.numbers li{white-space:nowrap}
table#verdicts{width:100%}
table#verdicts td.name{max-width:26em;overflow-wrap:anywhere}
table#verdicts td.why{min-width:18em}
.muted,.nodata{color:var(--muted)}
.nodata{font-style:italic;margin:.3em 0}
.verdict{display:inline-block;white-space:nowrap;font-weight:700;text-transform:uppercase;letter-spacing:.04em}
.big{font-size:2em;padding:.1em .5em;border-radius:6px;color:#fff;margin:.2em 0}
.big.pass{background:var(--pass)}.big.violated{background:var(--violated)}.big.failed{background:var(--failed)}.big.inconclusive{background:var(--notmeasured)}
span.pass,td.pass{color:var(--pass)}span.violated,td.violated,td.failed,span.failed{color:var(--violated)}
span.notmeasured,td.notmeasured,td.skipped{color:var(--notmeasured)}
.banner{border:2px solid var(--notmeasured);background:#fff8c5;padding:.5em 1em;margin:.6em 0;font-weight:600}
.banner.error{border-color:var(--violated);background:#ffebe9}
dl.facts{display:grid;grid-template-columns:max-content auto;gap:.15em 1em;margin:.6em 0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0}
.over{color:var(--violated);font-weight:700}
.saturated{color:var(--notmeasured);font-weight:600;margin:.3em 0 0}
tr.bad td{background:#ffebe9}
.regressed{background:#ffebe9}.better{background:#dafbe1}
.plots{display:flex;flex-wrap:wrap;gap:1em}
svg.plot{max-width:100%;height:auto;font-size:12px;background:#fff;border:1px solid var(--line);border-radius:4px}
svg.plot .title{font-size:14px;font-weight:600}
svg.plot .grid{stroke:#eaeef2}
svg.plot .axis{stroke:#57606a;fill:none}
svg.plot .tick{fill:#57606a;font-size:11px}
details{margin:.4em 0}
code{font-size:.9em}
`

// ContentPolicy forbids the page every load: a report that opens offline
// and fetches nothing, and a browser that says so if anything tries.
const ContentPolicy = "default-src 'none'; style-src 'unsafe-inline'"

var htmlFuncs = template.FuncMap{
	"num":        formatNumber,
	"secs":       formatSeconds,
	"inc":        func(i int) int { return i + 1 },
	"when":       formatTime,
	"stylesheet": func() template.CSS { return template.CSS(StyleSheet) },
	"csp":        func() string { return ContentPolicy },
	"class":      verdictClass,
	"breakable":  breakable,
	"acceptHint": func() string { return AcceptHint },
}

// WriteHTML writes report.html into dir. The page is rendered before the
// file is touched, so a failure leaves no half-written report.
func WriteHTML(dir string, r *Run) (string, error) {
	var buf bytes.Buffer
	if err := HTML(&buf, r); err != nil {
		return "", fmt.Errorf("rendering %s: %w", HTMLFile, err)
	}
	path := filepath.Join(dir, HTMLFile)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// HTML renders the run as one self-contained page: inline CSS and SVG, no
// script, nothing fetched.
func HTML(w io.Writer, r *Run) error {
	if r == nil {
		return fmt.Errorf("no run to report")
	}
	return reportHTML.Execute(w, newPage(r))
}

// page is what the template shows, worked out in Go so that the template
// stays a layout.
type page struct {
	*Run
	// Inconclusive says why an inconclusive run is; AlsoUnmeasured names
	// the SLO measurements that measured nothing in a run that failed or
	// was violated anyway; Accepted names those of a run that allowed it
	// (--allow-not-measured).
	Inconclusive   string
	AlsoUnmeasured string
	Accepted       []string
	Hollow         *hollowView
	Params         []param
	Verdicts       []verdictRow
	PodStartup     []podStartupView
	APICalls       []apiCallTable
	Throughput     figure
	NodesReady     figure
	CPU            figure
	Memory         figure
}

type hollowView struct {
	Kind           string
	Nodes, Procs   int
	RSSMiB, CPU    float64
	HasRSS, HasCPU bool
	Restarts       []HollowRestart
}

type param struct{ Key, Value string }

// figure is a plot, or the line that says why there is none.
type figure struct {
	SVG    template.HTML
	NoData string
}

func newFigure(p Plot, noData string) figure {
	if !p.HasData() {
		return figure{NoData: noData}
	}
	return figure{SVG: p.SVG()}
}

type verdictRow struct {
	Name string
	// Entry is the config's method and identifier when Name does not
	// already say them.
	Entry      string
	Verdict    measurements.Verdict
	Numbers    []headlineNumber
	Violations []string
	Reason     string
	// Optional: not measured, as its entry accepts (failIfNotMeasured:
	// false).
	Optional bool
	// HostSaturated is the note beside a violation (Measurement's).
	HostSaturated string
}

type headlineNumber struct {
	Key   string
	Value float64
	// Limit is the threshold with its sense ("≤ 5000"); empty for none.
	Limit string
	Over  bool
}

type podStartupView struct {
	Name        string
	Transitions []transitionRow
	CDF         figure
}

type transitionRow struct {
	Metric                 string
	P50, P90, P99          float64
	HasP50, HasP90, HasP99 bool
}

type apiCallTable struct {
	Name string
	// P99Label says which p99 the summary judged: the worst window's or
	// the whole run's.
	P99Label string
	// Enforced is false when the summary lists calls over their
	// thresholds but passed (enableViolations: false).
	Enforced bool
	Rows     []apiCallRow
	// CrossCheck compares the table's numbers with the same computed
	// another way; nil when the run had no second way.
	CrossCheck *measurements.CrossCheck
}

type apiCallRow struct {
	Verb, Resource, Subresource, Scope string
	Count, SlowCount                   string
	P50, P90, P99                      float64
	Violated                           bool
}

func newPage(r *Run) page {
	p := page{Run: r}
	if h := r.Cluster.Hollow; h != nil {
		p.Hollow = &hollowView{Kind: h.Kind, Nodes: h.Nodes, Procs: h.Processes,
			RSSMiB: h.RSSBytes / (1 << 20), CPU: h.CPUCores, HasRSS: h.RSSBytes > 0, HasCPU: h.CPUCores > 0, Restarts: h.Restarts}
	}
	keys := make([]string, 0, len(r.Parameters))
	for k := range r.Parameters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p.Params = append(p.Params, param{k, fmt.Sprint(r.Parameters[k])})
	}

	var throughput, cpu, memory []Line
	var throughputMax, usageMax float64
	// Two ResourceUsageSummary entries would give two lines per component;
	// their names then say which is which.
	usagePrefix := countMethod(r.Measurements, methodResourceUsage) > 1
	if r.Verdict == RunInconclusive {
		p.Inconclusive = r.InconclusiveReason()
	} else {
		p.AlsoUnmeasured = r.InconclusiveReason()
	}
	for _, m := range r.AcceptedUnmeasured() {
		p.Accepted = append(p.Accepted, summaryName(m))
	}
	for _, m := range r.Measurements {
		p.Verdicts = append(p.Verdicts, newVerdictRow(m))
		switch m.Method {
		case methodPodStartup:
			p.PodStartup = append(p.PodStartup, newPodStartupView(m))
		case methodAPIResponsiveness, methodAPIRespSimple:
			if m.PerfData != nil && len(m.PerfData.DataItems) > 0 {
				p.APICalls = append(p.APICalls, newAPICallTable(m))
			}
		case methodSchedulingThroughput:
			if pts := m.Series[seriesScheduled]; len(pts) > 0 {
				throughput = append(throughput, Line{Name: summaryName(m), Points: pts})
				throughputMax = math.Max(throughputMax, maxX(pts))
			}
		case methodResourceUsage:
			for _, name := range slices.Sorted(maps.Keys(m.Series)) {
				pts := m.Series[name]
				var into *[]Line
				var component string
				switch {
				case strings.HasPrefix(name, seriesCPUPrefix):
					component, into = strings.TrimPrefix(name, seriesCPUPrefix), &cpu
				case strings.HasPrefix(name, seriesMemoryPrefix):
					component, into = strings.TrimPrefix(name, seriesMemoryPrefix), &memory
				default:
					continue
				}
				if len(pts) == 0 {
					continue
				}
				if usagePrefix {
					component = summaryName(m) + ": " + component
				}
				usageMax = math.Max(usageMax, maxX(pts))
				*into = append(*into, Line{Name: component, Points: pts})
			}
		}
	}

	unit, div := timeUnit(throughputMax)
	p.Throughput = newFigure(Plot{Title: "Scheduling throughput", XLabel: "time since the measurement started (" + unit + ")",
		YLabel: "pods scheduled / s", Lines: scaleX(throughput, div)}, "No scheduling throughput was measured.")
	unit, div = timeUnit(maxX(r.Cluster.NodesReady))
	p.NodesReady = newFigure(Plot{Title: "Nodes ready", XLabel: "time since the hollow nodes were started (" + unit + ")",
		YLabel: "Ready nodes", Lines: scaleX([]Line{{Name: "Ready nodes", Points: r.Cluster.NodesReady}}, div)},
		"No node readiness was recorded (the run did not provision nodes).")
	unit, div = timeUnit(usageMax)
	p.CPU = newFigure(Plot{Title: "Control-plane CPU", XLabel: "time since the measurement started (" + unit + ")",
		YLabel: "CPU (cores)", Lines: scaleX(cpu, div)}, "No control-plane CPU usage was measured.")
	p.Memory = newFigure(Plot{Title: "Control-plane memory", XLabel: "time since the measurement started (" + unit + ")",
		YLabel: "memory (MiB)", Lines: scaleX(memory, div)}, "No control-plane memory usage was measured.")
	return p
}

func newVerdictRow(m Measurement) verdictRow {
	row := verdictRow{Name: summaryName(m), Verdict: m.Verdict, Violations: m.Violations, Reason: m.Reason,
		Optional: m.Optional && m.Verdict == measurements.NotMeasured}
	if m.Verdict == measurements.Violated {
		row.HostSaturated = m.HostSaturated
	}
	entry := m.Method
	if m.Identifier != "" && m.Identifier != m.Method {
		entry += " / " + m.Identifier
	}
	if row.Name != m.Method && row.Name != m.Method+"_"+m.Identifier {
		row.Entry = entry
	}
	// Judged numbers first: they are what the verdict is about.
	keys := slices.Sorted(maps.Keys(m.Headline))
	sort.SliceStable(keys, func(i, j int) bool {
		_, ti := m.Thresholds[keys[i]]
		_, tj := m.Thresholds[keys[j]]
		return ti && !tj
	})
	for _, k := range keys {
		n := headlineNumber{Key: k, Value: m.Headline[k]}
		if limit, ok := m.Thresholds[k]; ok {
			if HigherIsBetter(k) {
				n.Limit, n.Over = "≥ "+formatNumber(limit), n.Value < limit
			} else {
				n.Limit, n.Over = "≤ "+formatNumber(limit), n.Value > limit
			}
		}
		row.Numbers = append(row.Numbers, n)
	}
	return row
}

func newPodStartupView(m Measurement) podStartupView {
	v := podStartupView{Name: summaryName(m)}
	if m.PerfData != nil {
		for _, it := range m.PerfData.DataItems {
			row := transitionRow{Metric: it.Labels["Metric"]}
			row.P50, row.HasP50 = it.Data["Perc50"]
			row.P90, row.HasP90 = it.Data["Perc90"]
			row.P99, row.HasP99 = it.Data["Perc99"]
			v.Transitions = append(v.Transitions, row)
		}
	}
	cdf := m.Series[seriesPodStartupCDF]
	// Startup latencies are milliseconds; past 10 s seconds read better.
	unit, div := "ms", 1.0
	if maxX(cdf) >= 10000 {
		unit, div = "s", 1000
	}
	v.CDF = newFigure(Plot{Title: "Pod startup latency CDF: " + v.Name, XLabel: "pod startup latency (" + unit + ")",
		YLabel: "fraction of pods", Lines: scaleX([]Line{{Name: "pod_startup", Points: cdf}}, div)},
		"No pod startup CDF: no pod was measured.")
	return v
}

func newAPICallTable(m Measurement) apiCallTable {
	t := apiCallTable{Name: summaryName(m), P99Label: "p99 (worst 5-min window)", Enforced: m.Verdict == measurements.Violated, CrossCheck: m.CrossCheck}
	if m.Method == methodAPIRespSimple {
		t.P99Label = "p99 (whole run)"
	}
	for _, it := range m.PerfData.DataItems {
		l := it.Labels
		row := apiCallRow{Verb: l["Verb"], Resource: l["Resource"], Subresource: l["Subresource"], Scope: l["Scope"],
			Count: l["Count"], SlowCount: l["SlowCount"],
			P50: it.Data["Perc50"], P90: it.Data["Perc90"], P99: it.Data["Perc99"]}
		// The measurement names an item in its violations as
		// "VERB resource[/subresource] scope=SCOPE: ...".
		name := row.Verb + " " + row.Resource
		if row.Subresource != "" {
			name += "/" + row.Subresource
		}
		name += " scope=" + row.Scope + ":"
		for _, v := range m.Violations {
			if strings.HasPrefix(v, name) {
				row.Violated = true
			}
		}
		t.Rows = append(t.Rows, row)
	}
	sort.SliceStable(t.Rows, func(i, j int) bool {
		a, b := t.Rows[i], t.Rows[j]
		if a.Violated != b.Violated {
			return a.Violated
		}
		return a.P99 > b.P99
	})
	return t
}

// summaryName is the summary's name as its PerfData file has it, the
// clusterloader2 default when the measurement gave none.
func summaryName(m Measurement) string {
	if m.Name != "" {
		return m.Name
	}
	return m.Method + "_" + m.Identifier
}

func countMethod(ms []Measurement, method string) int {
	n := 0
	for _, m := range ms {
		if m.Method == method {
			n++
		}
	}
	return n
}

func maxX(pts []metrics.Point) float64 {
	m := 0.0
	for _, p := range pts {
		if finite(p.X) {
			m = math.Max(m, p.X)
		}
	}
	return m
}

// timeUnit picks the unit a time axis of up to maxSeconds reads best in.
func timeUnit(maxSeconds float64) (unit string, seconds float64) {
	switch {
	case maxSeconds > 3*3600:
		return "h", 3600
	case maxSeconds > 15*60:
		return "min", 60
	default:
		return "s", 1
	}
}

// scaleX divides every line's X by div, leaving the run's data untouched.
func scaleX(lines []Line, div float64) []Line {
	out := make([]Line, len(lines))
	for i, l := range lines {
		out[i] = Line{Name: l.Name, Points: make([]metrics.Point, len(l.Points))}
		for j, p := range l.Points {
			out[i].Points[j] = metrics.Point{X: p.X / div, Y: p.Y}
		}
	}
	return out
}

// formatNumber prints a measured number with the digits that matter:
// whole numbers whole, large ones without decimals, small ones to three
// significant digits.
func formatNumber(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "-∞"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// formatSeconds prints a duration rounded to what a reader cares about at
// its size.
func formatSeconds(s float64) string {
	if !finite(s) || s < 0 {
		return "n/a"
	}
	d := time.Duration(s * float64(time.Second))
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "n/a"
	}
	return t.Format("2006-01-02 15:04:05 MST")
}

// breakable lets a browser wrap a long summary name
// (WaitForControlledPodsRunning_WaitForRunningSaturationRCs) after its
// underscores rather than inside a word.
func breakable(name string) template.HTML {
	parts := strings.Split(name, "_")
	for i, p := range parts {
		parts[i] = template.HTMLEscapeString(p)
	}
	return template.HTML(strings.Join(parts, "_<wbr>"))
}

// verdictClass is the CSS class of a verdict or a step status.
func verdictClass(v any) string {
	return strings.ReplaceAll(fmt.Sprint(v), " ", "")
}

var reportHTML = template.Must(template.New("report").Funcs(htmlFuncs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{csp}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kscale: {{.Config}} — {{.Verdict}}</title>
<style>{{stylesheet}}</style></head><body><main>
<header>
<h1>kscale: {{.Config}}</h1>
<div class="verdict big {{class .Verdict}}" id="run-verdict">{{if .Verdict}}{{.Verdict}}{{else}}no verdict{{end}}</div>
{{- with .Inconclusive}}
<div class="banner" id="inconclusive">inconclusive: {{.}}. An SLO left unmeasured makes the run inconclusive; {{acceptHint}}.</div>
{{- end}}
{{- with .AlsoUnmeasured}}
<div class="banner" id="unmeasured">also {{.}}</div>
{{- end}}
{{- if .Accepted}}
<div class="banner" id="accepted">not measured, accepted by --allow-not-measured: {{range $i, $n := .Accepted}}{{if $i}}, {{end}}{{$n}}{{end}}</div>
{{- end}}
{{- if .Incomplete}}
<div class="banner" id="incomplete">interrupted: reports cover what was measured</div>
{{- end}}
{{- if .CleanupError}}
<div class="banner error">cleanup failed: {{.CleanupError}}</div>
{{- end}}
<dl class="facts">
<dt>config</dt><dd>{{.Config}}{{if .ConfigFile}} <span class="muted">({{.ConfigFile}})</span>{{end}}</dd>
<dt>cluster</dt><dd>{{if .Cluster.Version}}{{.Cluster.Version}}{{else}}version unknown{{end}}, {{.Cluster.Nodes}} nodes{{if .Cluster.Provider}}, provider {{.Cluster.Provider}}{{end}}{{if .Cluster.Server}} <span class="muted">({{.Cluster.Server}})</span>{{end}}</dd>
{{- with .Hollow}}
<dt>hollow nodes</dt><dd>{{.Nodes}} {{.Kind}} nodes in {{.Procs}} processes{{if .HasRSS}}, {{num .RSSMiB}} MiB RSS{{end}}{{if .HasCPU}}, {{num .CPU}} CPU cores{{end}}</dd>
{{- range .Restarts}}
<dt>restarted</dt><dd class="hollow-restart">{{.Pod}} ({{.Container}}) at {{when .At}}{{if .Reason}}: {{.Reason}}{{end}}; {{if .NodesBackSeconds}}its {{.Nodes}} nodes heartbeating again after {{secs .NodesBackSeconds}}{{else}}its {{.Nodes}} nodes not all back{{end}}</dd>
{{- end}}
{{- end}}
{{- if .Cluster.ProvisionSeconds}}
<dt>provisioning</dt><dd>{{secs .Cluster.ProvisionSeconds}}</dd>
{{- end}}
<dt>started</dt><dd>{{when .Started}}</dd>
<dt>duration</dt><dd>{{secs .DurationSeconds}}</dd>
</dl>
{{- if .Params}}
<details><summary>parameters ({{len .Params}})</summary>
<table id="parameters"><tr><th>name</th><th>value</th></tr>
{{- range .Params}}
<tr><td><code>{{.Key}}</code></td><td><code>{{.Value}}</code></td></tr>
{{- end}}
</table></details>
{{- end}}
</header>

<section><h2>Verdicts</h2>
{{- if .Verdicts}}
<table id="verdicts"><tr><th>measurement</th><th>verdict</th><th>numbers</th><th>violations / reason</th></tr>
{{- range .Verdicts}}
<tr><td class="name">{{breakable .Name}}{{if .Entry}}<br><span class="muted">{{.Entry}}</span>{{end}}</td>
<td class="{{class .Verdict}}"><span class="verdict">{{.Verdict}}</span>{{if .Optional}}<br><span class="muted">accepted (failIfNotMeasured: false)</span>{{end}}</td>
<td><ul class="plain numbers">{{range .Numbers}}<li>{{.Key}}: <b{{if .Over}} class="over"{{end}}>{{num .Value}}</b>{{if .Limit}} <span class="muted">({{.Limit}})</span>{{end}}</li>{{end}}</ul></td>
<td class="why">{{if .Violations}}<ul class="plain">{{range .Violations}}<li>{{.}}</li>{{end}}</ul>{{end}}{{if .HostSaturated}}<p class="saturated">{{.HostSaturated}}</p>{{end}}{{if .Reason}}{{.Reason}}{{end}}</td></tr>
{{- end}}
</table>
{{- else}}
<table id="verdicts"><tr><th>measurement</th><th>verdict</th></tr></table>
<p class="nodata">No measurement reported a summary.</p>
{{- end}}
</section>

<section><h2>Steps</h2>
{{- if .Steps}}
<table id="steps"><tr><th class="num">#</th><th>step</th><th>status</th><th class="num">duration</th><th>errors</th></tr>
{{- range .Steps}}
<tr><td class="num">{{printf "%02d" (inc .Index)}}</td><td>{{.Name}}</td><td class="{{class .Status}}">{{.Status}}</td><td class="num">{{secs .DurationSeconds}}</td><td>{{if .Errors}}<ul class="plain">{{range .Errors}}<li>{{.}}</li>{{end}}</ul>{{end}}</td></tr>
{{- end}}
</table>
{{- else}}
<p class="nodata">No step ran.</p>
{{- end}}
</section>

<section><h2>Pod startup latency</h2>
{{- range .PodStartup}}
<h3>{{.Name}}</h3>
{{- if .Transitions}}
<table class="podstartup"><tr><th>transition</th><th class="num">p50 ms</th><th class="num">p90 ms</th><th class="num">p99 ms</th></tr>
{{- range .Transitions}}
<tr><td>{{.Metric}}</td><td class="num">{{if .HasP50}}{{num .P50}}{{end}}</td><td class="num">{{if .HasP90}}{{num .P90}}{{end}}</td><td class="num">{{if .HasP99}}{{num .P99}}{{end}}</td></tr>
{{- end}}
</table>
{{- else}}
<p class="nodata">No pod startup latency was measured.</p>
{{- end}}
{{- with .CDF}}{{if .SVG}}
<div class="plots">{{.SVG}}</div>
{{- else}}
<p class="nodata">{{.NoData}}</p>
{{- end}}{{end}}
{{- else}}
<p class="nodata">No PodStartupLatency measurement in this run.</p>
{{- end}}
</section>

<section><h2>API call latency</h2>
{{- range $table := .APICalls}}
<h3>{{.Name}}</h3>
<table class="apicalls"><tr><th>verb</th><th>resource</th><th>subresource</th><th>scope</th><th class="num">calls</th><th class="num">slow calls</th><th class="num">p50 ms</th><th class="num">p90 ms</th><th class="num">{{.P99Label}} ms</th><th>SLO</th></tr>
{{- range .Rows}}
<tr{{if .Violated}} class="bad"{{end}}><td>{{.Verb}}</td><td>{{.Resource}}</td><td>{{.Subresource}}</td><td>{{.Scope}}</td><td class="num">{{.Count}}</td><td class="num">{{.SlowCount}}</td><td class="num">{{num .P50}}</td><td class="num">{{num .P90}}</td><td class="num">{{num .P99}}</td><td>{{if .Violated}}<span class="violated">{{if $table.Enforced}}violated{{else}}over (not enforced){{end}}</span>{{else}}<span class="pass">ok</span>{{end}}</td></tr>
{{- end}}
</table>
{{- with .CrossCheck}}
<details class="crosscheck"><summary>{{.String}}</summary>
<p class="muted">numbers from {{.Source}}, compared with {{.Other}}</p>
{{- if .Rows}}
<table class="crosscheck"><tr><th>call</th><th>number</th><th class="num">this table (ms)</th><th class="num">other (ms)</th><th>agree</th></tr>
{{- range .Rows}}
<tr{{if not .Agree}} class="bad"{{end}}><td>{{.Item}}</td><td>{{.What}}</td><td class="num">{{num .Value}}</td><td class="num">{{num .Other}}</td><td>{{if .Agree}}<span class="pass">yes</span>{{else}}<span class="violated">no</span>{{end}}</td></tr>
{{- end}}
</table>
{{- end}}
{{- if .Missing}}<ul class="plain">{{range .Missing}}<li>{{.}}</li>{{end}}</ul>{{end}}
</details>
{{- end}}
{{- else}}
<p class="nodata">No API call latency was measured.</p>
{{- end}}
</section>

<section><h2>Over time</h2>
<div class="plots">
{{- range .Figures}}{{if .SVG}}
{{.SVG}}
{{- end}}{{end}}
</div>
{{- range .Figures}}{{if not .SVG}}
<p class="nodata">{{.NoData}}</p>
{{- end}}{{end}}
</section>
</main></body></html>
`))

// Figures are the over-time plots in report order.
func (p page) Figures() []figure {
	return []figure{p.Throughput, p.NodesReady, p.CPU, p.Memory}
}
