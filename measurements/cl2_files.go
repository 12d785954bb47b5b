package measurements

import (
	"strconv"
	"time"

	"github.com/kscale/kscale/measurements/metrics"
)

// The report files clusterloader2 writes in shapes of their own rather
// than as PerfData. perfdash parses each by its shape, so kscale writes
// these summaries' files the same way (Summary.Output) and keeps its
// richer data in PerfData, which summary.json and the HTML report show.

// schedulingThroughputFile is SchedulingThroughput's file: pods scheduled
// per second over the measurement's windows.
type schedulingThroughputFile struct {
	Perc50 float64 `json:"perc50"`
	Perc90 float64 `json:"perc90"`
	Perc99 float64 `json:"perc99"`
	Max    float64 `json:"max"`
}

// resourceUsageFile is ResourceUsageSummary's file: per percentile ("50",
// "90", "99", "100"), each container's CPU (cores) and memory (bytes).
type resourceUsageFile map[string][]containerUsage

type containerUsage struct {
	Name string
	CPU  float64
	Mem  uint64
}

// resourceUsagePercentiles are the percentiles clusterloader2 summarises
// resource usage at.
var resourceUsagePercentiles = []int{50, 90, 99, 100}

// latencyFile is a latency's percentiles, as durations in nanoseconds.
type latencyFile struct {
	Perc50 time.Duration `json:"Perc50"`
	Perc90 time.Duration `json:"Perc90"`
	Perc99 time.Duration `json:"Perc99"`
}

// latencyFileOf is a histogram (observed in seconds) as a latencyFile;
// zeros when it observed nothing.
func latencyFileOf(h metrics.Histogram) latencyFile {
	if h.Count == 0 {
		return latencyFile{}
	}
	d := func(q float64) time.Duration { return time.Duration(h.Quantile(q) * float64(time.Second)) }
	return latencyFile{Perc50: d(0.5), Perc90: d(0.9), Perc99: d(0.99)}
}

// schedulingMetricsFile is SchedulingMetrics' file.
type schedulingMetricsFile struct {
	FrameworkExtensionPointDuration map[string]*latencyFile `json:"frameworkExtensionPointDuration"`
	PreemptionEvaluationLatency     latencyFile             `json:"preemptionEvaluationLatency"`
	E2eSchedulingLatency            latencyFile             `json:"e2eSchedulingLatency"`
	SchedulingLatency               latencyFile             `json:"schedulingLatency"`
}

// histogramFile is one histogram: its labels and cumulative bucket counts
// by upper bound as Prometheus writes it ("0.001", "+Inf").
type histogramFile struct {
	Labels  map[string]string `json:"labels"`
	Buckets map[string]int    `json:"buckets"`
}

// histogramFileOf is h with the given labels as a histogramFile.
func histogramFileOf(h metrics.Histogram, labels map[string]string) histogramFile {
	out := histogramFile{Labels: labels, Buckets: make(map[string]int, len(h.Buckets)+1)}
	for _, b := range h.Buckets {
		out.Buckets[strconv.FormatFloat(b.UpperBound, 'g', -1, 64)] = int(b.Count)
	}
	out.Buckets["+Inf"] = int(h.Count)
	return out
}

// etcdMetricsFile is EtcdMetrics' file.
type etcdMetricsFile struct {
	BackendCommitDuration     []histogramFile `json:"backendCommitDuration"`
	SnapshotSaveTotalDuration []histogramFile `json:"snapshotSaveTotalDuration"`
	PeerRoundTripTime         []histogramFile `json:"peerRoundTripTime"`
	WalFsyncDuration          []histogramFile `json:"walFsyncDuration"`
	MaxDatabaseSize           float64         `json:"maxDatabaseSize"`
}

// containerRestartsFile is ContainerRestarts' file: one entry per
// container that restarted.
type containerRestartsFile []containerRestart

type containerRestart struct {
	Container    string
	Pod          string
	Namespace    string
	RestartCount int
}

// systemPodsFile is SystemPodMetrics' file.
type systemPodsFile struct {
	Pods []systemPod `json:"pods"`
}

type systemPod struct {
	Name       string            `json:"name"`
	Containers []systemContainer `json:"containers"`
}

type systemContainer struct {
	Name              string `json:"name"`
	Image             string `json:"image"`
	RestartCount      int32  `json:"restartCount"`
	LastRestartReason string `json:"lastRestartReason"`
}
