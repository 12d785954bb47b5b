package fidelity

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
)

// Targets of likeness: what "behaves like the oracle" means, figure by
// figure.
const (
	// A latency percentile is within 20 % or 200 ms of the oracle's.
	latencyRatio  = 0.20
	latencyMargin = 200 // ms
	// Calls and events per pod are within 10 % of the oracle's, or one per
	// ten pods: below that a count is one call more or less in a workload,
	// which the timing of two races decides (two pods arriving together
	// both pull an image the node lacks, or only one).
	countRatio  = 0.10
	countMargin = 0.10
	// Pods per node, at the most and least loaded node, within one pod.
	placementMargin = 1
	// A pod is Ready again within 20 s of its node.
	readyAfterNodeLimit = 20.0
	// A status written by someone else is written back within the
	// kubelet's status sync period (10 s) and a margin.
	writtenBackLimit = 12.0
)

// Figure is one number of a comparison: the oracle's, the other kind's, and
// whether it meets its target.
type Figure struct {
	Workload string  `json:"workload"`
	Name     string  `json:"name"`
	Oracle   float64 `json:"oracle"`
	Other    float64 `json:"other"`
	Target   string  `json:"target"`
	Met      bool    `json:"met"`
	// Varies marks figures that vary from run to run on a loaded machine
	// or with the scheduler's ties: latencies, placement, and the counts of
	// the workloads whose calls depend on how fast the node keeps up. The
	// others — limits, and counts the node's logic alone decides — hold in
	// every run.
	Varies bool `json:"varies"`
	kind   int
}

func (f Figure) String() string {
	mark := "ok"
	if !f.Met {
		mark = "MISSED"
	}
	return fmt.Sprintf("%-6s %-15s %-40s oracle %10.2f  other %10.2f  (%s)", mark, f.Workload, f.Name, f.Oracle, f.Other, f.Target)
}

// StatusDifference is a stage at which the statuses two kinds wrote differ.
type StatusDifference struct {
	Stage string `json:"stage"`
	// Oracle and Other are the normalized statuses only one kind wrote.
	Oracle []string `json:"oracle"`
	Other  []string `json:"other"`
}

// Report is a comparison of a kind of hollow node with the oracle.
type Report struct {
	Oracle  string             `json:"oracle"`
	Other   string             `json:"other"`
	Figures []Figure           `json:"figures"`
	Status  []StatusDifference `json:"statusDifferences"`
	// Observations are the raw observations, the oracle's first.
	Observations []*Observation `json:"observations"`
}

// Missed returns the figures that miss their target; varying says whether
// figures that vary from run to run count.
func (r *Report) Missed(varying bool) []Figure {
	var out []Figure
	for _, f := range r.Figures {
		if !f.Met && (varying || !f.Varies) {
			out = append(out, f)
		}
	}
	return out
}

// String is the report as a table, then every status difference.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s nodes against %s nodes (the oracle)\n", r.Other, r.Oracle)
	for _, f := range r.Figures {
		fmt.Fprintln(&b, f)
	}
	if len(r.Observations) > 1 {
		oracle, other := r.Observations[0], r.Observations[1]
		for _, m := range []struct {
			name          string
			oracle, other map[string]map[string]float64
		}{
			{"binding to first read p50 / p90 ms", oracle.FirstRead, other.FirstRead},
			{"binding to token request p50 / p90 ms", oracle.TokenRequest, other.TokenRequest},
		} {
			for _, w := range slices.Sorted(maps.Keys(m.oracle)) {
				o, f := m.oracle[w], m.other[w]
				fmt.Fprintf(&b, "%-6s %-15s %-40s oracle %5.1f / %5.1f  other %5.1f / %5.1f  (reported)\n", "", w,
					m.name, o["p50"], o["p90"], f["p50"], f["p90"])
			}
		}
	}
	for _, ob := range r.Observations {
		for _, p := range ob.Slowest {
			fmt.Fprintf(&b, "%-6s %-15s slowest on %-7s %-10s %-11s %6.0f ms from binding to Running", "", WorkloadStream, ob.Kind, p.Pod, p.Node, p.Ms)
			if p.TokenMs != 0 {
				fmt.Fprintf(&b, "; token asked at %.0f ms", p.TokenMs)
			}
			if len(p.Refused) > 0 {
				fmt.Fprintf(&b, "; refused: %s", strings.Join(p.Refused, ", "))
			}
			b.WriteString("\n")
		}
	}
	for _, d := range r.Status {
		fmt.Fprintf(&b, "status at %q differs:\n", d.Stage)
		for i := range max(len(d.Oracle), len(d.Other)) {
			var o, f string
			if i < len(d.Oracle) {
				o = d.Oracle[i]
			}
			if i < len(d.Other) {
				f = d.Other[i]
			}
			fmt.Fprintf(&b, "  --- %s\n  +++ %s\n%s", r.Oracle, r.Other, lineDiff(o, f))
		}
	}
	return b.String()
}

// lineDiff shows a and b line by line, by longest common subsequence:
// "-" only in a, "+" only in b.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			fmt.Fprintf(&out, "      %s\n", x[i])
			i, j = i+1, j+1
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			fmt.Fprintf(&out, "    + %s\n", y[j])
			j++
		default:
			fmt.Fprintf(&out, "    - %s\n", x[i])
			i++
		}
	}
	return out.String()
}

// compare holds another kind's observation against the oracle's.
func compare(oracle *Observation, others ...*Observation) *Report {
	other := others[0]
	r := &Report{Oracle: oracle.Kind, Other: other.Kind, Observations: append([]*Observation{oracle}, others...)}
	for _, w := range slices.Sorted(maps.Keys(oracle.Startup)) {
		for _, name := range slices.Sorted(maps.Keys(oracle.Startup[w])) {
			k, f := oracle.Startup[w][name], other.Startup[w][name]
			r.Figures = append(r.Figures, latencyFigure(w, name+" ms", k, f))
		}
	}
	r.Figures = append(r.Figures, placementFigures(oracle.PodsPerNode, other.PodsPerNode)...)
	r.Figures = append(r.Figures, afterRefusal(countFigures("calls per pod", oracle.Calls, other.Calls, true), oracle.Refused, other.Refused)...)
	r.Figures = append(r.Figures, afterRefusal(countFigures("events per pod", oracle.Events, other.Events, true), oracle.Refused, other.Refused)...)
	// A 403 is a race with the Node authorizer learning of a new pod,
	// which either kind may lose in a run.
	r.Figures = append(r.Figures, countFigures("refused (403) per pod", oracle.Refused, other.Refused, false)...)
	for _, name := range slices.Sorted(maps.Keys(oracle.Seconds)) {
		k, f := quantile(oracle.Seconds[name], 1), quantile(other.Seconds[name], 1)
		// The two limits are the kubelet's own periods, not performance:
		// they hold on a loaded machine too.
		fig := Figure{Workload: secondsWorkload[name], Name: name + " max s", Oracle: k, Other: f}
		switch name {
		case "ready after node":
			fig.Target, fig.kind = fmt.Sprintf("≤ %.0f s", readyAfterNodeLimit), readyAfterNodeTarget
		case "status written back":
			fig.Target, fig.kind = fmt.Sprintf("≤ %.0f s", writtenBackLimit), writtenBackTarget
		default:
			fig = latencyFigure(fig.Workload, name+" max ms", k*1000, f*1000)
		}
		fig.Met = judge(fig)
		r.Figures = append(r.Figures, fig)
	}
	stages := map[string]bool{}
	for s := range oracle.Statuses {
		stages[s] = true
	}
	for s := range other.Statuses {
		stages[s] = true
	}
	for _, stage := range slices.Sorted(maps.Keys(stages)) {
		onlyOracle := missingFrom(oracle.Statuses[stage], other.Statuses[stage])
		onlyOther := missingFrom(other.Statuses[stage], oracle.Statuses[stage])
		if len(onlyOracle)+len(onlyOther) > 0 {
			r.Status = append(r.Status, StatusDifference{Stage: stage, Oracle: onlyOracle, Other: onlyOther})
		}
	}
	return r
}

// afterRefusal takes back the difference of kind of a call or event that
// only one kind made where that kind lost a race with the Node authorizer
// in that workload (a 403 on one of the calls refusedBefore names): a
// kubelet's reflector lists after its watch is refused, and a volume whose
// object the list could not fetch either fails its mount (FailedMount)
// after the manager's one-second wait. Either kind may lose the race in a
// run, so such a figure varies as the refusals do.
func afterRefusal(figs []Figure, oracleRefused, otherRefused map[string]map[string]float64) []Figure {
	for i := range figs {
		f := &figs[i]
		if f.kind != oneKindOnly {
			continue
		}
		name := strings.TrimSuffix(f.Name, " (made by one kind only)")
		refused := oracleRefused[f.Workload]
		if f.Oracle == 0 {
			refused = otherRefused[f.Workload]
		}
		for _, before := range refusedBefore(name) {
			if refused[before] == 0 {
				continue
			}
			f.Name = name + " (after a refused " + strings.Fields(before)[0] + ")"
			f.Varies, f.kind = true, countTarget
			f.Met = judge(*f)
			break
		}
	}
	return figs
}

// refusedBefore names the refused calls that lead a node to the call or
// event a figure counts. A refused watch is itself a call only the kind
// that lost the race made in the window: the audit log has a watch when it
// ends, and watches that were let through are still open.
func refusedBefore(figure string) []string {
	if resource, ok := strings.CutPrefix(figure, "calls per pod: list "); ok {
		return []string{"watch " + resource}
	}
	if call, ok := strings.CutPrefix(figure, "calls per pod: "); ok && strings.HasPrefix(call, "watch ") {
		return []string{call}
	}
	if figure == "events per pod: FailedMount" {
		return []string{"list configmaps", "list secrets"}
	}
	return nil
}

// varyingCounts are the workloads whose calls per pod depend on timing: a
// node whose writes fall behind its pods' changes writes fewer statuses,
// as the kubelet's status manager does.
var varyingCounts = map[string]bool{WorkloadBurst: true, WorkloadStream: true, WorkloadDeletion: true}

// secondsWorkload names the workload each duration comes from.
var secondsWorkload = map[string]string{
	"status written back": WorkloadPatched,
	"ready after node":    WorkloadNotReady,
	"gone after delete":   WorkloadDeletion,
}

func latencyFigure(workload, name string, oracle, other float64) Figure {
	f := Figure{
		Workload: workload, Name: name, Oracle: oracle, Other: other, Varies: true, kind: latencyTarget,
		Target: fmt.Sprintf("±%.0f%% or %d ms", latencyRatio*100, latencyMargin),
	}
	f.Met = judge(f)
	return f
}

// Kinds of target a figure is judged against.
const (
	latencyTarget = iota + 1
	countTarget
	placementTarget
	readyAfterNodeTarget
	writtenBackTarget
	oneKindOnly // never met
)

// judge says whether a figure meets its target.
func judge(f Figure) bool {
	switch f.kind {
	case latencyTarget:
		return math.Abs(f.Other-f.Oracle) <= math.Max(latencyRatio*f.Oracle, latencyMargin)
	case countTarget:
		return math.Abs(f.Other-f.Oracle) <= math.Max(countRatio*f.Oracle, countMargin)+1e-9
	case placementTarget:
		return math.Abs(f.Other-f.Oracle) <= placementMargin
	case readyAfterNodeTarget:
		return f.Other <= readyAfterNodeLimit
	case writtenBackTarget:
		return f.Other <= writtenBackLimit
	}
	return false
}

// placementFigures compare how many pods the scheduler put on the most and
// the least loaded node.
func placementFigures(oracle, other map[string]int) []Figure {
	stats := func(m map[string]int) (hi, lo float64) {
		lo = math.Inf(1)
		for _, n := range m {
			hi, lo = math.Max(hi, float64(n)), math.Min(lo, float64(n))
		}
		if len(m) == 0 {
			lo = 0
		}
		return hi, lo
	}
	khi, klo := stats(oracle)
	fhi, flo := stats(other)
	target := fmt.Sprintf("±%d pod", placementMargin)
	figs := []Figure{
		{Workload: WorkloadStream, Name: "pods on the busiest node", Oracle: khi, Other: fhi, Target: target, Varies: true, kind: placementTarget},
		{Workload: WorkloadStream, Name: "pods on the idlest node", Oracle: klo, Other: flo, Target: target, Varies: true, kind: placementTarget},
	}
	for i := range figs {
		figs[i].Met = judge(figs[i])
	}
	return figs
}

// countFigures compare per-pod counts by workload and key; a key only one
// kind has counts as zero for the other, and, when sameKinds, as a
// difference that must not be.
func countFigures(what string, oracle, other map[string]map[string]float64, sameKinds bool) []Figure {
	workloads := map[string]bool{}
	for w := range oracle {
		workloads[w] = true
	}
	for w := range other {
		workloads[w] = true
	}
	var out []Figure
	for _, w := range slices.Sorted(maps.Keys(workloads)) {
		keys := map[string]bool{}
		for k := range oracle[w] {
			keys[k] = true
		}
		for k := range other[w] {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			o, f := oracle[w][k], other[w][k]
			fig := Figure{
				Workload: w, Name: what + ": " + k, Oracle: o, Other: f, kind: countTarget,
				Target: fmt.Sprintf("±%.0f%% or %.1f", countRatio*100, countMargin),
				Varies: varyingCounts[w] || !sameKinds,
			}
			fig.Met = judge(fig)
			if sameKinds && (o == 0) != (f == 0) {
				// Even where the number varies, a call or event only
				// one kind makes is a difference of kind.
				fig.Name += " (made by one kind only)"
				fig.Varies, fig.kind, fig.Met = false, oneKindOnly, false
			}
			out = append(out, fig)
		}
	}
	return out
}

// quantile is the q-quantile of xs by nearest rank (q=1: the maximum).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// missingFrom returns the items of a that b lacks.
func missingFrom(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// Merge combines the reports of several rounds of one comparison: each
// figure becomes the median over the rounds of the oracle's and the other
// kind's numbers, judged again against its target; status differences of
// any round are kept.
func Merge(reports ...*Report) *Report {
	if len(reports) == 1 {
		return reports[0]
	}
	out := &Report{Oracle: reports[0].Oracle, Other: reports[0].Other}
	type key struct{ workload, name string }
	var order []key
	oracle, other := map[key][]float64{}, map[key][]float64{}
	proto := map[key]Figure{}
	for _, r := range reports {
		for _, f := range r.Figures {
			k := key{f.Workload, f.Name}
			if _, ok := proto[k]; !ok {
				order = append(order, k)
				proto[k] = f
			}
			oracle[k] = append(oracle[k], f.Oracle)
			other[k] = append(other[k], f.Other)
		}
		out.Status = append(out.Status, r.Status...)
		out.Observations = append(out.Observations, r.Observations...)
	}
	for _, k := range order {
		f := proto[k]
		f.Oracle, f.Other = quantile(oracle[k], 0.5), quantile(other[k], 0.5)
		f.Met = judge(f)
		out.Figures = append(out.Figures, f)
	}
	return out
}
