// Package perfdashcheck reads report files by the rules of perfdash, the
// dashboard of Kubernetes' scalability jobs: which parsers a file gets
// follows from its summary's name, and each parser expects one shape. The
// tests of the measurements and of the suites use it to show that kscale's
// files plot as clusterloader2's do.
//
// The rules are those of perfdash's parser.go and config.go (perf-tests,
// 2026); a file a parser would log an error for, or take nothing from, is
// an error here.
package perfdashcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Parser names one of perfdash's parsers.
type Parser string

const (
	PerfData             Parser = "parsePerfData"
	RequestCount         Parser = "parseRequestCountData"
	ResourceUsage        Parser = "parseResourceUsageData"
	SchedulingLatency    Parser = "parseSchedulingLatency"
	SchedulingThroughput Parser = "parseSchedulingThroughputCL"
	EtcdHistograms       Parser = "parseHistogramMetric"
	SystemPodMetrics     Parser = "parseSystemPodMetrics"
	ContainerRestarts    Parser = "parseContainerRestarts"
	InitEventsCount      Parser = "parseApiserverInitEventsCount"
)

// byName are the parsers perfdash's config gives each summary name.
var byName = map[string][]Parser{
	"APIResponsiveness":                  {PerfData, RequestCount},
	"APIResponsivenessPrometheus":        {PerfData, RequestCount},
	"APIResponsivenessPrometheus_simple": {PerfData, RequestCount},
	"ResourceUsageSummary":               {ResourceUsage},
	"SchedulingMetrics":                  {SchedulingLatency},
	"SchedulingThroughput":               {SchedulingThroughput},
	"SchedulingThroughputPrometheus":     {SchedulingThroughput},
	"EtcdMetrics":                        {EtcdHistograms},
	"SystemPodMetrics":                   {SystemPodMetrics},
	"ContainerRestarts":                  {ContainerRestarts},
	// perfdash also runs its apiserver_request_count parser on this file;
	// that metric left Kubernetes in 1.17, so no current file satisfies it.
	"MetricsForE2E": {InitEventsCount},
}

// podStartupPrefixes start the names of the pod startup latency summaries
// perfdash plots (PodStartupLatency_<identifier> and its stateless and
// stateful splits).
var podStartupPrefixes = []string{"PodStartupLatency_", "StatelessPodStartupLatency_", "StatefulPodStartupLatency_"}

// Parsers returns the parsers perfdash applies to the file of the summary
// named name; none when perfdash does not read it.
func Parsers(name string) []Parser {
	if p, ok := byName[name]; ok {
		return p
	}
	for _, prefix := range podStartupPrefixes {
		if strings.HasPrefix(name, prefix) {
			return []Parser{PerfData}
		}
	}
	return nil
}

// Item is one series perfdash plots from a file.
type Item struct {
	Data   map[string]float64
	Unit   string
	Labels map[string]string
}

// Result is what a parser takes from a file.
type Result struct {
	// Version is the PerfData version ("v1", "1.0"); perfdash plots a
	// test's files only while it matches the first one read. Parsers of
	// other shapes set "v1", as perfdash does.
	Version string
	Items   []Item
}

// Parse applies parser p's rules to a file's body.
func Parse(p Parser, body []byte) (Result, error) {
	switch p {
	case PerfData, RequestCount:
		return parsePerfData(p, body)
	case ResourceUsage:
		return parseResourceUsage(body)
	case SchedulingLatency:
		return parseSchedulingLatency(body)
	case SchedulingThroughput:
		var v struct{ Average, Max, Perc50, Perc90, Perc99 float64 }
		if err := strictly(body, &v, "average", "max", "perc50", "perc90", "perc99"); err != nil {
			return Result{}, err
		}
		return Result{Version: "v1", Items: []Item{{Unit: "1/s", Data: map[string]float64{
			"Perc50": v.Perc50, "Perc90": v.Perc90, "Perc99": v.Perc99, "Average": v.Average, "Max": v.Max}}}}, nil
	case EtcdHistograms:
		return parseEtcd(body)
	case SystemPodMetrics:
		var v struct {
			Pods []struct {
				Name       string `json:"name"`
				Containers []struct {
					Name         string `json:"name"`
					RestartCount int32  `json:"restartCount"`
				} `json:"containers"`
			} `json:"pods"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return Result{}, err
		}
		if v.Pods == nil {
			return Result{}, fmt.Errorf("no pods list")
		}
		data := map[string]float64{}
		for _, pod := range v.Pods {
			for _, c := range pod.Containers {
				data[c.Name] = max(data[c.Name], float64(c.RestartCount))
			}
		}
		return Result{Version: "v1", Items: []Item{{Data: data, Labels: map[string]string{"RestartCount": "RestartCount"}}}}, nil
	case ContainerRestarts:
		var v []struct {
			Container    string
			Pod          string
			Namespace    string
			RestartCount int
		}
		if err := json.Unmarshal(body, &v); err != nil {
			return Result{}, err
		}
		if v == nil {
			return Result{}, fmt.Errorf("not a list")
		}
		data := map[string]float64{}
		for _, r := range v {
			data[r.Container] += float64(r.RestartCount)
		}
		return Result{Version: "v1", Items: []Item{{Data: data, Labels: map[string]string{"RestartCount": "RestartCount"}}}}, nil
	case InitEventsCount:
		return parseInitEvents(body)
	}
	return Result{}, fmt.Errorf("unknown parser %q", p)
}

func parsePerfData(p Parser, body []byte) (Result, error) {
	var v struct {
		Version   string `json:"version"`
		DataItems []Item `json:"dataItems"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return Result{}, err
	}
	if v.Version == "" {
		return Result{}, fmt.Errorf("no version")
	}
	res := Result{Version: v.Version}
	for i, it := range v.DataItems {
		if p == RequestCount {
			count, ok := it.Labels["Count"]
			if !ok {
				return Result{}, fmt.Errorf("data item %d: no 'Count' label", i)
			}
			n, err := strconv.ParseFloat(count, 64)
			if err != nil {
				return Result{}, fmt.Errorf("data item %d: count %q: %w", i, count, err)
			}
			it.Data = map[string]float64{"RequestCount": n}
			it.Unit = ""
		}
		labels := map[string]string{}
		for k, v := range it.Labels {
			if k != "Count" && k != "SlowCount" {
				labels[k] = v
			}
		}
		it.Labels = labels
		res.Items = append(res.Items, it)
	}
	return res, nil
}

func parseResourceUsage(body []byte) (Result, error) {
	var v map[string][]struct {
		Name string
		CPU  float64
		Mem  int
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return Result{}, err
	}
	res := Result{Version: "v1"}
	for perc, list := range v {
		if _, err := strconv.Atoi(perc); err != nil {
			return Result{}, fmt.Errorf("percentile %q is not a number", perc)
		}
		for _, c := range list {
			if c.Name == "" {
				return Result{}, fmt.Errorf("percentile %s: a container without a name", perc)
			}
			res.Items = append(res.Items,
				Item{Unit: "cores", Labels: map[string]string{"PodName": c.Name, "Resource": "CPU", "Percentile": perc}, Data: map[string]float64{perc: c.CPU}},
				Item{Unit: "MiB", Labels: map[string]string{"PodName": c.Name, "Resource": "memory", "Percentile": perc}, Data: map[string]float64{perc: float64(c.Mem) / (1 << 20)}})
		}
	}
	return res, nil
}

func parseSchedulingLatency(body []byte) (Result, error) {
	type latency struct{ Perc50, Perc90, Perc99 time.Duration }
	var v struct {
		PreemptionEvaluationLatency     latency            `json:"preemptionEvaluationLatency"`
		E2eSchedulingLatency            latency            `json:"e2eSchedulingLatency"`
		SchedulingLatency               latency            `json:"schedulingLatency"`
		FrameworkExtensionPointDuration map[string]latency `json:"frameworkExtensionPointDuration"`
	}
	if err := strictly(body, &v, "preemptionEvaluationLatency", "e2eSchedulingLatency", "schedulingLatency", "frameworkExtensionPointDuration"); err != nil {
		return Result{}, err
	}
	item := func(op string, l latency) Item {
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		return Item{Unit: "ms", Labels: map[string]string{"Operation": op}, Data: map[string]float64{
			"Perc50": ms(l.Perc50), "Perc90": ms(l.Perc90), "Perc99": ms(l.Perc99)}}
	}
	res := Result{Version: "v1", Items: []Item{
		item("preemption_evaluation", v.PreemptionEvaluationLatency),
		item("e2eScheduling", v.E2eSchedulingLatency),
		item("scheduling", v.SchedulingLatency),
	}}
	for name, l := range v.FrameworkExtensionPointDuration {
		res.Items = append(res.Items, item(name, l))
	}
	return res, nil
}

func parseEtcd(body []byte) (Result, error) {
	type histogram struct {
		Labels  map[string]string `json:"labels"`
		Buckets map[string]int    `json:"buckets"`
	}
	var v map[string]json.RawMessage
	if err := json.Unmarshal(body, &v); err != nil {
		return Result{}, err
	}
	res := Result{Version: "v1"}
	for _, metric := range []string{"backendCommitDuration", "snapshotSaveTotalDuration", "peerRoundTripTime", "walFsyncDuration"} {
		raw, ok := v[metric]
		if !ok || string(raw) == "null" {
			continue
		}
		var hs []histogram
		if err := json.Unmarshal(raw, &hs); err != nil {
			return Result{}, fmt.Errorf("%s: %w", metric, err)
		}
		for i, h := range hs {
			count, ok := h.Buckets["+Inf"]
			if !ok {
				return Result{}, fmt.Errorf("%s histogram %d: no +Inf bucket", metric, i)
			}
			data := map[string]float64{}
			for bound, n := range h.Buckets {
				if bound == "+Inf" {
					continue
				}
				if _, err := strconv.ParseFloat(bound, 64); err != nil {
					return Result{}, fmt.Errorf("%s histogram %d: bucket %q is not a bound", metric, i, bound)
				}
				if count > 0 {
					data["<= "+bound+"s"] = float64(n) / float64(count) * 100
				} else {
					data["<= "+bound+"s"] = 0
				}
			}
			res.Items = append(res.Items, Item{Unit: "%", Labels: map[string]string{"Metric": metric}, Data: data})
		}
	}
	return res, nil
}

func parseInitEvents(body []byte) (Result, error) {
	var v struct {
		APIServerMetrics map[string][]struct {
			Metric map[string]string `json:"metric"`
			Value  []any             `json:"value"`
		}
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return Result{}, err
	}
	if v.APIServerMetrics == nil {
		return Result{}, fmt.Errorf("no ApiServerMetrics data")
	}
	samples, ok := v.APIServerMetrics["apiserver_init_events_total"]
	if !ok {
		return Result{}, fmt.Errorf("no apiserver_init_events_total metric data")
	}
	res := Result{Version: "v1"}
	for i, s := range samples {
		if len(s.Value) != 2 {
			return Result{}, fmt.Errorf("sample %d: value %v is not [time, value]", i, s.Value)
		}
		text, ok := s.Value[1].(string)
		if !ok {
			return Result{}, fmt.Errorf("sample %d: value %v is not a string", i, s.Value[1])
		}
		n, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return Result{}, fmt.Errorf("sample %d: %w", i, err)
		}
		labels := map[string]string{}
		for k, v := range s.Metric {
			if k != "__name__" {
				labels[k] = v
			}
		}
		res.Items = append(res.Items, Item{Labels: labels, Data: map[string]float64{"InitEventsCount": n}})
	}
	return res, nil
}

// strictly decodes body into v, and fails unless the object has at least
// one of the keys perfdash reads (Go's decoder matches them regardless of
// case): an object of another shape would plot as zeros.
func strictly(body []byte, v any, keys ...string) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return err
	}
	for k := range raw {
		for _, want := range keys {
			if strings.EqualFold(k, want) {
				return json.Unmarshal(body, v)
			}
		}
	}
	return fmt.Errorf("none of the keys perfdash reads (%s)", strings.Join(keys, ", "))
}

// CheckDir parses, by perfdash's rules, every report file in dir of the
// test named testName (files named <summary>_<test>_<time>.json) whose
// summary perfdash reads, and returns what the parsers took, by summary
// name. Any file a parser rejects is an error.
func CheckDir(dir, testName string) (map[string][]Result, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]Result{}
	var errs []error
	for _, e := range entries {
		name, ok := SummaryName(e.Name(), testName)
		if !ok {
			continue
		}
		parsers := Parsers(name)
		if len(parsers) == 0 {
			continue
		}
		body, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		for _, p := range parsers {
			res, err := Parse(p, body)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s by %s: %w", e.Name(), p, err))
				continue
			}
			out[name] = append(out[name], res)
		}
	}
	return out, errors.Join(errs...)
}

// SummaryName is the summary name of a report file named
// <summary>_<test>_<time>.json, as clusterloader2 names them.
func SummaryName(file, testName string) (string, bool) {
	base, ok := strings.CutSuffix(file, ".json")
	if !ok {
		return "", false
	}
	i := strings.LastIndex(base, "_"+testName+"_")
	if i <= 0 {
		return "", false
	}
	return base[:i], true
}
