package report

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kscale/kscale/measurements"
)

// JUnitFile is the JUnit report in a run's report folder, what CI systems
// show as test results.
const JUnitFile = "junit.xml"

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      float64     `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// JUnit renders the run as JUnit XML: one test case per step, named as
// clusterloader2 names them ("density: [step: 01] Starting measurements"),
// then one per measurement summary ("density: [measurement]
// PodStartupLatency_PodStartupLatency"). A failed step or a violated or
// failed measurement is a failure whose message names every violating
// item (and whose text says when the host was saturated over the
// violation); a measurement that could not measure is skipped with its
// reason; a step that never ran is skipped. An inconclusive run adds a
// failing case "[verdict] inconclusive" naming each SLO measurement that
// measured nothing and why: the measurement itself was skipped, the run's
// verdict is what failed.
func JUnit(r *Run) ([]byte, error) {
	return encodeJUnit(junitSuiteOf("kscale "+r.Config, r))
}

// JUnitSuites renders several runs, a test suite's (kscale run
// --testsuite), as one JUnit document with one testsuite per run, named by
// names[i].
func JUnitSuites(names []string, runs []*Run) ([]byte, error) {
	if len(names) != len(runs) {
		return nil, fmt.Errorf("encoding %s: %d names for %d runs", JUnitFile, len(names), len(runs))
	}
	suites := make([]junitSuite, len(runs))
	for i, r := range runs {
		suites[i] = junitSuiteOf(names[i], r)
	}
	return encodeJUnit(suites...)
}

func encodeJUnit(suites ...junitSuite) ([]byte, error) {
	out, err := xml.MarshalIndent(junitSuites{Suites: suites}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", JUnitFile, err)
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

// junitSuiteOf is one run's testsuite (see JUnit).
func junitSuiteOf(name string, r *Run) junitSuite {
	suite := junitSuite{
		Name:      name,
		Time:      r.DurationSeconds,
		Timestamp: r.Started.UTC().Format("2006-01-02T15:04:05"),
	}
	for _, s := range r.Steps {
		c := junitCase{
			Name:      r.Config + ": " + StepName(s.Index, s.Name),
			Classname: "kscale." + r.Config,
			Time:      s.DurationSeconds,
		}
		switch s.Status {
		case StepFailed:
			c.Failure = &junitMessage{Message: firstLine(s.Errors), Type: "StepFailed", Text: strings.Join(s.Errors, "\n")}
		case StepSkipped:
			reason := "not run: an earlier step failed critically or the run was interrupted"
			if len(s.Errors) > 0 {
				reason = firstLine(s.Errors)
			}
			c.Skipped = &junitMessage{Message: reason}
		}
		suite.add(c)
	}
	for _, m := range r.Measurements {
		c := junitCase{
			Name:      fmt.Sprintf("%s: [measurement] %s", r.Config, m.Name),
			Classname: "kscale." + r.Config + ".measurements",
		}
		switch m.Verdict {
		case measurements.Violated:
			text := strings.Join(m.Violations, "\n")
			if m.HostSaturated != "" {
				text += "\n" + m.HostSaturated
			}
			c.Failure = &junitMessage{
				Message: fmt.Sprintf("%s violated by %d item(s): %s", m.Name, len(m.Violations), strings.Join(m.Violations, "; ")),
				Type:    "SLOViolated", Text: text,
			}
		case measurements.Failed:
			c.Failure = &junitMessage{Message: m.Name + " failed: " + m.Reason, Type: "MeasurementFailed", Text: m.Reason}
		case measurements.NotMeasured:
			c.Skipped = &junitMessage{Message: "not measured: " + m.Reason}
		}
		suite.add(c)
	}
	if r.Verdict == RunInconclusive {
		suite.add(inconclusiveCase(r))
	}
	if r.CleanupError != "" {
		suite.add(junitCase{
			Name: r.Config + ": [cleanup]", Classname: "kscale." + r.Config,
			Failure: &junitMessage{Message: r.CleanupError, Type: "CleanupFailed"},
		})
	}
	return suite
}

// inconclusiveCase is the failing case of an inconclusive run.
func inconclusiveCase(r *Run) junitCase {
	msg := r.InconclusiveReason()
	var lines []string
	for _, m := range r.UnmeasuredSLOs() {
		lines = append(lines, summaryName(m)+": not measured: "+m.Reason)
	}
	if msg == "" {
		msg = "inconclusive: an SLO measurement measured nothing"
	}
	lines = append(lines, "An SLO left unmeasured makes the run inconclusive; "+AcceptHint+".")
	return junitCase{
		Name: r.Config + ": [verdict] inconclusive", Classname: "kscale." + r.Config,
		Failure: &junitMessage{Message: msg, Type: "Inconclusive", Text: strings.Join(lines, "\n")},
	}
}

func (s *junitSuite) add(c junitCase) {
	s.Tests++
	switch {
	case c.Failure != nil:
		s.Failures++
	case c.Skipped != nil:
		s.Skipped++
	}
	s.Cases = append(s.Cases, c)
}

func firstLine(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}

// WriteJUnit writes junit.xml into dir.
func WriteJUnit(dir string, r *Run) (string, error) {
	data, err := JUnit(r)
	if err != nil {
		return "", err
	}
	return writeJUnitFile(dir, data)
}

// WriteJUnitSuites writes the junit.xml of a test suite's runs into dir.
func WriteJUnitSuites(dir string, names []string, runs []*Run) (string, error) {
	data, err := JUnitSuites(names, runs)
	if err != nil {
		return "", err
	}
	return writeJUnitFile(dir, data)
}

func writeJUnitFile(dir string, data []byte) (string, error) {
	path := filepath.Join(dir, JUnitFile)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// StepName names the step of index i (from 0) as clusterloader2 does, in
// the JUnit cases, the Ginkgo specs and the printed summary alike.
func StepName(i int, name string) string { return fmt.Sprintf("[step: %02d] %s", i+1, name) }
