package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kscale/kscale/framework/metrics"
	"github.com/kscale/kscale/measurements"
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
	Started    time.Time      `json:"started"`
	Finished   time.Time      `json:"finished"`
	// DurationSeconds is Finished - Started.
	DurationSeconds float64 `json:"durationSeconds"`
	Verdict         Verdict `json:"verdict"`
	// Incomplete marks a run stopped before its end (Ctrl-C): what it
	// measured is reported, but not every step ran.
	Incomplete   bool          `json:"incomplete,omitempty"`
	Steps        []Step        `json:"steps"`
	Measurements []Measurement `json:"measurements"`
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
	Headline   map[string]float64   `json:"headline,omitempty"`
	Thresholds map[string]float64   `json:"thresholds,omitempty"`
	PerfData   *metrics.PerfData    `json:"perfData,omitempty"`
	// PerfDataFile is the PerfData JSON written beside summary.json.
	PerfDataFile string                     `json:"perfDataFile,omitempty"`
	Series       map[string][]metrics.Point `json:"series,omitempty"`
}

// FromSummary copies a measurement summary into the report's form.
func FromSummary(s measurements.Summary, perfDataFile string) Measurement {
	return Measurement{
		Method: s.Method, Identifier: s.Identifier, Name: s.FileName(), Verdict: s.Verdict,
		Violations: s.Violations, Reason: s.Reason, Headline: s.Headline, Thresholds: s.Thresholds,
		PerfData: s.PerfData, PerfDataFile: perfDataFile, Series: s.Series,
	}
}

// Judge sets the run's verdict from its steps and measurements: failed
// when a step failed or was skipped for a failure, or the cleanup failed;
// else violated when a measurement was; else pass. "Not measured" does not
// change the verdict: it is reported, and a config that needs a
// measurement says so with failIfNotMeasured, which fails its step.
func (r *Run) Judge() {
	r.Verdict = RunPass
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
