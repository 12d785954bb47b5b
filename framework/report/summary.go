package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kscale/kscale/measurements"
	"github.com/kscale/kscale/measurements/metrics"
)

// SummaryFile is the machine-readable verdict of a run in its report
// folder; `kscale report` renders the HTML from it alone.
const SummaryFile = "summary.json"

// SummaryVersion is the version of the summary.json format.
const SummaryVersion = "kscale.io/v1"

// Verdict is a whole run's verdict, what the exit code says.
type Verdict string

const (
	// RunPass: every step succeeded and no measurement was violated (exit 0).
	RunPass Verdict = "pass"
	// RunViolated: a measurement found its SLO violated (exit 1).
	RunViolated Verdict = "violated"
	// RunInconclusive: nothing failed or was violated, but an SLO
	// measurement measured nothing, so the run cannot say the SLO held
	// (exit 1). See Run.UnmeasuredSLOs.
	RunInconclusive Verdict = "inconclusive"
	// RunFailed: a step, a measurement or the cleanup failed (exit 1).
	RunFailed Verdict = "failed"
)

// Run is summary.json: what was run, on what, and what it found.
type Run struct {
	Version    string `json:"version"`
	Config     string `json:"config"`
	ConfigFile string `json:"configFile"`
	// Parameters are the template mapping of the run: overrides, Nodes,
	// CL2_* variables.
	Parameters map[string]any `json:"parameters,omitempty"`
	Cluster    Cluster        `json:"cluster"`
	// Metadata makes runs comparable; nil in a summary.json of a kscale
	// that did not write it.
	Metadata *Metadata `json:"metadata,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// DurationSeconds is Finished - Started.
	DurationSeconds float64 `json:"durationSeconds"`
	Verdict         Verdict `json:"verdict"`
	// Incomplete marks a run stopped before its end (Ctrl-C): what it
	// measured is reported, but not every step ran.
	Incomplete bool `json:"incomplete,omitempty"`
	// AllowNotMeasured: the run was told (--allow-not-measured) that an
	// SLO measurement that measured nothing does not make it inconclusive.
	AllowNotMeasured bool          `json:"allowNotMeasured,omitempty"`
	Steps            []Step        `json:"steps"`
	Measurements     []Measurement `json:"measurements"`
	// CleanupError says why the run's objects could not all be removed.
	CleanupError string `json:"cleanupError,omitempty"`
}

// Cluster is what the run ran against.
type Cluster struct {
	// Version is the apiserver's gitVersion.
	Version string `json:"version,omitempty"`
	// Nodes is the node count the config was compiled for.
	Nodes int `json:"nodes"`
	// Provider is local, kubemark or existing (empty when the run did not
	// provision: `kscale run` against a given kubeconfig).
	Provider string `json:"provider,omitempty"`
	// Server is the apiserver's address.
	Server string `json:"server,omitempty"`
	// Hollow describes the hollow nodes the provider started for the run;
	// nil when it started none (the existing provider, `kscale run`).
	Hollow *Hollow `json:"hollow,omitempty"`
	// NodesReady is the count of Ready nodes over provisioning (x: seconds
	// since the hollow nodes were started).
	NodesReady []metrics.Point `json:"nodesReady,omitempty"`
	// ProvisionSeconds is how long provisioning took, cluster start to
	// every node Ready.
	ProvisionSeconds float64 `json:"provisionSeconds,omitempty"`
}

// Hollow is what the hollow nodes of a run were and cost.
type Hollow struct {
	// Kind is fleet (many nodes per process) or kubelet (one real kubelet
	// morph per node).
	Kind      string `json:"kind"`
	Nodes     int    `json:"nodes"`
	Processes int    `json:"processes"`
	// RSSBytes and CPUCores are the processes' resident memory and CPU
	// (cores, averaged over provisioning) when every node was Ready.
	RSSBytes float64 `json:"rssBytes,omitempty"`
	CPUCores float64 `json:"cpuCores,omitempty"`
	// Restarts are the hollow-node containers that restarted during the
	// run (kubemark provider).
	Restarts []HollowRestart `json:"restarts,omitempty"`
}

// HollowRestart is one restart of a hollow-node container, and how long its
// nodes took to heartbeat again.
type HollowRestart struct {
	Pod       string    `json:"pod"`
	Container string    `json:"container"`
	At        time.Time `json:"at"`
	// Reason is how the container last ended (reason and exit code).
	Reason string `json:"reason,omitempty"`
	// Nodes is the count of the pod's nodes; NodesBackSeconds the time from
	// the restart until every one renewed its Lease again, 0 while any has
	// not.
	Nodes            int     `json:"nodes"`
	NodesBackSeconds float64 `json:"nodesBackSeconds,omitempty"`
}

// Step is one step of the config.
type Step struct {
	Index           int      `json:"index"`
	Name            string   `json:"name"`
	Status          string   `json:"status"` // ok, failed, skipped
	DurationSeconds float64  `json:"durationSeconds"`
	Errors          []string `json:"errors,omitempty"`
}

// The statuses of a Step.
const (
	StepOK      = "ok"
	StepFailed  = "failed"
	StepSkipped = "skipped"
)

// Measurement is one summary of a measurement with everything the HTML
// report and `kscale compare` read: verdict, headline numbers, thresholds,
// the PerfData items and the time series.
type Measurement struct {
	Method     string               `json:"method"`
	Identifier string               `json:"identifier"`
	Name       string               `json:"name"`
	Verdict    measurements.Verdict `json:"verdict"`
	Violations []string             `json:"violations,omitempty"`
	Reason     string               `json:"reason,omitempty"`
	// SLO, Optional, Window and HostSaturated are the summary's (see
	// measurements.Summary).
	SLO           bool                    `json:"slo,omitempty"`
	Optional      bool                    `json:"optional,omitempty"`
	Window        *measurements.TimeRange `json:"window,omitempty"`
	HostSaturated string                  `json:"hostSaturated,omitempty"`
	Headline      map[string]float64      `json:"headline,omitempty"`
	Thresholds    map[string]float64      `json:"thresholds,omitempty"`
	PerfData      *metrics.PerfData       `json:"perfData,omitempty"`
	// PerfDataFile is the summary's report file written beside
	// summary.json: its PerfData, or clusterloader2's shape for it.
	PerfDataFile string                     `json:"perfDataFile,omitempty"`
	Series       map[string][]metrics.Point `json:"series,omitempty"`
	// CrossCheck is the summary's (measurements.Summary.CrossCheck).
	CrossCheck *measurements.CrossCheck `json:"crossCheck,omitempty"`
}

// FromSummary copies a measurement summary into the report's form.
func FromSummary(s measurements.Summary, perfDataFile string) Measurement {
	return Measurement{
		Method: s.Method, Identifier: s.Identifier, Name: s.FileName(), Verdict: s.Verdict,
		Violations: s.Violations, Reason: s.Reason,
		// An empty group's summary judges nothing (measurements.Summary.Empty).
		SLO: s.SLO && !s.Empty, Optional: s.Optional, Window: s.Window, HostSaturated: s.HostSaturated,
		Headline: s.Headline, Thresholds: s.Thresholds,
		PerfData: s.PerfData, PerfDataFile: perfDataFile, Series: s.Series, CrossCheck: s.CrossCheck,
	}
}

// Judge sets the run's verdict from its steps and measurements, the
// worst that applies: failed when a step failed or was skipped for a
// failure, or the cleanup failed; else violated when a measurement was;
// else inconclusive when an SLO measurement measured nothing and neither
// its entry (failIfNotMeasured: false) nor the run (AllowNotMeasured)
// accepted that; else pass. A pass says every SLO the config names was
// measured and held.
func (r *Run) Judge() {
	r.Verdict = RunPass
	if len(r.UnmeasuredSLOs()) > 0 {
		r.Verdict = RunInconclusive
	}
	for _, m := range r.Measurements {
		if m.Verdict == measurements.Violated {
			r.Verdict = RunViolated
		}
	}
	for _, s := range r.Steps {
		if s.Status == StepFailed && !r.onlyViolations(s) {
			r.Verdict = RunFailed
		}
	}
	if r.CleanupError != "" {
		r.Verdict = RunFailed
	}
}

// UnmeasuredSLO reports whether m leaves an SLO unjudged that its entry
// did not accept leaving so.
func (m *Measurement) UnmeasuredSLO() bool {
	return m.Verdict == measurements.NotMeasured && m.SLO && !m.Optional
}

// UnmeasuredSLOs are the SLO measurements that measured nothing and make
// the run inconclusive: none when the run allows it.
func (r *Run) UnmeasuredSLOs() []Measurement {
	if r.AllowNotMeasured {
		return nil
	}
	return r.unmeasuredSLOs()
}

// AcceptedUnmeasured are the SLO measurements that measured nothing in a
// run that allows it, which the reports still name.
func (r *Run) AcceptedUnmeasured() []Measurement {
	if !r.AllowNotMeasured {
		return nil
	}
	return r.unmeasuredSLOs()
}

func (r *Run) unmeasuredSLOs() []Measurement {
	var out []Measurement
	for _, m := range r.Measurements {
		if m.UnmeasuredSLO() {
			out = append(out, m)
		}
	}
	return out
}

// AcceptHint says how a user accepts an unmeasured SLO, for the reports
// that call a run inconclusive.
const AcceptHint = "--allow-not-measured, or failIfNotMeasured: false on the entry, accepts that"

// InconclusiveReason names the SLO measurements that measured nothing and
// why ("1 SLO measurement not measured: SchedulingThroughput (no
// scheduled pods matched ...)"); empty when there are none.
func (r *Run) InconclusiveReason() string {
	ms := r.UnmeasuredSLOs()
	if len(ms) == 0 {
		return ""
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = fmt.Sprintf("%s (%s)", summaryName(m), m.Reason)
	}
	what := "1 SLO measurement"
	if len(ms) > 1 {
		what = fmt.Sprintf("%d SLO measurements", len(ms))
	}
	return what + " not measured: " + strings.Join(parts, "; ")
}

// onlyViolations says whether every error of a failed step is a violation
// its measurements reported, so that a violated SLO is "violated" and not
// "failed".
func (r *Run) onlyViolations(s Step) bool {
	for _, e := range s.Errors {
		found := false
		for _, m := range r.Measurements {
			for _, v := range m.Violations {
				if v != "" && strings.Contains(e, v) {
					found = true
				}
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// WriteRun writes summary.json into dir.
func WriteRun(dir string, r *Run) (string, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding %s: %w", SummaryFile, err)
	}
	path := filepath.Join(dir, SummaryFile)
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// ReadRun reads the summary.json of a report folder.
func ReadRun(dir string) (*Run, error) {
	path := filepath.Join(dir, SummaryFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the run's summary: %w", err)
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Version != SummaryVersion {
		return nil, fmt.Errorf("%s: version %q, this kscale reads %q", path, r.Version, SummaryVersion)
	}
	return &r, nil
}
