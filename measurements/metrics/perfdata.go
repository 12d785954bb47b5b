package metrics

// PerfData is clusterloader2's summary format, the JSON perfdash plots:
// a version and a list of data items, each a set of named numbers in one
// unit with labels that say what was measured.
type PerfData struct {
	Version   string            `json:"version"`
	DataItems []DataItem        `json:"dataItems"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// DataItem is one measured thing: its numbers (Perc50, Perc90, Perc99, Max,
// ...), their unit and labels (Metric, Verb, Resource, Scope, ...).
type DataItem struct {
	Data   map[string]float64 `json:"data"`
	Unit   string             `json:"unit"`
	Labels map[string]string  `json:"labels,omitempty"`
}

// PerfDataVersion is the version clusterloader2 writes in most PerfData.
const PerfDataVersion = "v1"

// PhaseLatencyVersion is the version clusterloader2 writes in the PerfData
// of pod and job phase latencies (PodStartupLatency, JobLifecycleLatency).
// perfdash plots a test's files only while their version matches the first
// one it read, so each summary carries the version clusterloader2 gives it.
const PhaseLatencyVersion = "1.0"

// Point is one sample of a time series: X seconds since the series began,
// Y in the series' unit.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}
