package measurements

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kscale/kscale/measurements/metrics"
)

// Verdict is what a summary says about its SLO.
type Verdict string

const (
	// Pass: measured, and within every threshold.
	Pass Verdict = "pass"
	// Violated: measured, and at least one item over its threshold.
	Violated Verdict = "violated"
	// NotMeasured: the measurement could not measure (metrics unreachable,
	// no pods matched, an unsupported method); Reason says why.
	NotMeasured Verdict = "not measured"
	// Failed: the measurement itself went wrong (bad params, a wait that
	// timed out).
	Failed Verdict = "failed"
)

// Summary is one result of a measurement: what the reports show for it.
// A measurement may produce several (PodStartupLatency: one per pod kind).
type Summary struct {
	// Method and Identifier name the measurement entry; the Manager fills
	// them in.
	Method     string `json:"method"`
	Identifier string `json:"identifier"`
	// Name is the summary's name in file names, as clusterloader2 names it
	// ("PodStartupLatency_PodStartupLatency", "APIResponsivenessPrometheus").
	// Empty means Method_Identifier.
	Name    string  `json:"name"`
	Verdict Verdict `json:"verdict"`
	// Violations name every item over its threshold, one line each.
	Violations []string `json:"violations,omitempty"`
	// Reason says why the summary is NotMeasured or Failed.
	Reason string `json:"reason,omitempty"`
	// SLO marks a summary that judges an SLO: one of a method registered
	// as SLO (the Manager sets it), or a bundle's part of such a method.
	// Left NotMeasured, it leaves that SLO unjudged, and the run is
	// inconclusive unless the user accepted that (Optional, or the run's
	// --allow-not-measured).
	SLO bool `json:"slo,omitempty"`
	// Empty marks a NotMeasured summary whose group held nothing to
	// measure (PodStartupLatency's stateful split in a run of stateless
	// pods): reported, but no SLO went unjudged, so it is never SLO.
	Empty bool `json:"empty,omitempty"`
	// Optional: the entry sets failIfNotMeasured: false, so its being not
	// measured does not make the run inconclusive. The Manager sets it.
	Optional bool `json:"optional,omitempty"`
	// Window is the span the verdict is about: for a violation, the
	// violating window when the measurement knows it (the worst 5-minute
	// window of an API call), else the span from the measurement's start
	// to its gather. Nil when unknown (a method without a start).
	Window *TimeRange `json:"window,omitempty"`
	// HostSaturated, on a violated summary, says that the machine running
	// the cluster was saturated over Window ("host saturated: 98% of 2
	// cores busy over ..."), so that a violation on an overloaded host is
	// not read as a Kubernetes regression. Information beside the
	// violation: the verdict stays violated. Empty otherwise.
	HostSaturated string `json:"hostSaturated,omitempty"`
	// Headline holds the few numbers a verdict table shows, by name
	// ("pod_startup p99 ms": 1830).
	Headline map[string]float64 `json:"headline,omitempty"`
	// Thresholds are the limits the verdict was judged against, by the same
	// names as Headline.
	Thresholds map[string]float64 `json:"thresholds,omitempty"`
	// CrossCheck, when set, compares the summary's numbers with the same
	// numbers computed another way (kscale's scrapes against Prometheus).
	// Information beside the verdict, which it does not change.
	CrossCheck *CrossCheck `json:"crossCheck,omitempty"`
	// PerfData is the summary in the format perfdash reads; nil when there
	// is nothing to plot.
	PerfData *metrics.PerfData `json:"-"`
	// Output, when set, is what the summary's report file holds in place
	// of PerfData: clusterloader2 writes some summaries in a shape of their
	// own (SchedulingThroughput, ResourceUsageSummary, EtcdMetrics, ...),
	// and perfdash parses those files by that shape. PerfData still feeds
	// summary.json and the HTML report.
	Output any `json:"-"`
	// Series are time series for the report's plots, by name (x in seconds
	// since the run started, y in the series' unit).
	Series map[string][]metrics.Point `json:"-"`
	// Files are extra raw files to save next to the summary (name → body):
	// the slowest pods' timings, the failed pods' list.
	Files map[string][]byte `json:"-"`
}

// ReportFile is the body of the summary's report file, as clusterloader2
// would write it: Output when set, else PerfData. ok is false when the
// summary has neither (a "not measured" one), and no file is written.
func (s *Summary) ReportFile() (body []byte, ok bool, err error) {
	var v any
	switch {
	case s.Output != nil:
		v = s.Output
	case s.PerfData != nil:
		v = s.PerfData
	default:
		return nil, false, nil
	}
	body, err = json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, false, fmt.Errorf("encoding %s: %w", s.FileName(), err)
	}
	return append(body, '\n'), true, nil
}

// TimeRange is a span of time.
type TimeRange struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// UnmeasuredSLO reports whether the summary leaves an SLO unjudged that
// the entry did not accept leaving so: what makes a run inconclusive,
// unless the run allows it (--allow-not-measured).
func (s *Summary) UnmeasuredSLO() bool {
	return s.Verdict == NotMeasured && s.SLO && !s.Empty && !s.Optional
}

// FileName is the summary's name as clusterloader2 writes it.
func (s *Summary) FileName() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Method + "_" + s.Identifier
}

// ViolationError reports that a measurement measured and found items over
// their thresholds. A measurement returns it with its summaries.
type ViolationError struct{ Items []string }

func (e *ViolationError) Error() string {
	return fmt.Sprintf("SLO violated by %d item(s): %s", len(e.Items), strings.Join(e.Items, "; "))
}

// NotMeasuredError reports that a measurement could not measure, and why.
type NotMeasuredError struct{ Reason string }

func (e *NotMeasuredError) Error() string { return "not measured: " + e.Reason }

// notMeasuredf is a NotMeasuredError with a formatted reason.
func notMeasuredf(format string, args ...any) error {
	return &NotMeasuredError{Reason: fmt.Sprintf(format, args...)}
}

// violations returns a ViolationError for items, or nil when there are none.
func violations(items []string) error {
	if len(items) == 0 {
		return nil
	}
	return &ViolationError{Items: items}
}

// judge sets the verdict of each summary from the error its measurement
// returned, so every summary says pass, violated, not measured or failed.
// A call that produced no summary but did not pass gets one, so that it is
// never missing from a report.
func judge(method, identifier string, summaries []Summary, err error) []Summary {
	var v *ViolationError
	var nm *NotMeasuredError
	verdict, reason := Pass, ""
	switch {
	case err == nil:
	case errors.As(err, &v):
		verdict = Violated
	case errors.As(err, &nm):
		verdict, reason = NotMeasured, nm.Reason
	default:
		verdict, reason = Failed, err.Error()
	}
	if len(summaries) == 0 && err != nil {
		summaries = []Summary{{}}
	}
	for i := range summaries {
		s := &summaries[i]
		s.Method, s.Identifier = method, identifier
		if s.Verdict == "" {
			s.Verdict = verdict
		}
		if s.Reason == "" {
			s.Reason = reason
		}
		if s.Verdict == Violated && len(s.Violations) == 0 && v != nil {
			s.Violations = v.Items
		}
	}
	return summaries
}
