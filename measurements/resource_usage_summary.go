package measurements

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kscale/kscale/measurements/metrics"
	"github.com/kscale/kscale/measurements/procstat"
)

func init() {
	Register("ResourceUsageSummary", SLO, func(string) Measurement { return &resourceUsageSummary{} })
}

// resourceUsageSummary samples the CPU and memory of every control-plane
// component (and hollow-node fleet) the run can see, from start to gather,
// and reports their percentiles. Processes on this machine are read from
// /proc; others from their own process_cpu_seconds_total and
// process_resident_memory_bytes metrics, which every Kubernetes component
// and etcd export.
//
// Params: action start|gather; interval (default 5s); resourceConstraints,
// a YAML file mapping a component name to cpuConstraint (cores) and
// memoryConstraint (bytes), checked against the 99th percentile of the
// samples, so that one GC spike does not fail a run.
type resourceUsageSummary struct {
	mu      sync.Mutex
	poller  *poller
	sources []usageSource
	started time.Time
	series  map[string]*usageSeries
	// errs keeps the last sampling error per component, for the reason of
	// a component that gave no sample at all.
	errs map[string]error
}

// usageSeries is what one component used over the run.
type usageSeries struct {
	last      *cpuReading
	cores     []metrics.Point
	memoryMiB []metrics.Point
}

// cpuReading is a cumulative CPU time at an instant.
type cpuReading struct {
	at      time.Time
	seconds float64
}

func (r *resourceUsageSummary) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather")
	if err != nil {
		return nil, err
	}
	switch action {
	case "start":
		interval, err := params.Duration("interval", 5*time.Second)
		if err != nil {
			return nil, err
		}
		if interval <= 0 {
			return nil, fmt.Errorf("param interval: must be positive, got %s", interval)
		}
		r.poller.stop()
		r.mu.Lock()
		r.started, r.series, r.errs = env.now(), map[string]*usageSeries{}, map[string]error{}
		r.mu.Unlock()
		r.sources = usageSources(env)
		r.poller = startPoller(context.WithoutCancel(ctx), interval, r.sampleAll)
		return nil, nil
	default:
		if r.poller == nil {
			return nil, fmt.Errorf("gather without start")
		}
		constraintsFile, err := params.String("resourceConstraints", "")
		if err != nil {
			return nil, err
		}
		constraints, err := loadResourceConstraints(constraintsFile)
		if err != nil {
			return nil, err
		}
		r.poller.stop()
		// A last sample at gather: a run shorter than the interval still
		// gets a CPU rate, and the summary covers the run to its end.
		r.sampleAll(ctx, time.Now())
		return r.summarise(env, constraints)
	}
}

// usageSource reads one component's cumulative CPU seconds and resident
// memory.
type usageSource struct {
	name string
	read func(ctx context.Context) (cpuSeconds, rssBytes float64, err error)
}

// usageSources are the processes the run can see; with none (a cluster not
// started by kscale) the apiserver is read through the run's client.
func usageSources(env *Env) []usageSource {
	var out []usageSource
	for _, c := range env.Components {
		c := c
		if c.PID > 0 {
			out = append(out, usageSource{c.Name, func(context.Context) (float64, float64, error) {
				s, err := procstat.Read(c.PID)
				return s.CPU.Seconds(), float64(s.RSS), err
			}})
			continue
		}
		if c.MetricsURL != "" {
			out = append(out, usageSource{c.Name, func(ctx context.Context) (float64, float64, error) {
				text, err := c.Metrics(ctx)
				if err != nil {
					return 0, 0, err
				}
				return processUsage(text)
			}})
		}
	}
	if len(out) == 0 && env.Client != nil {
		out = append(out, usageSource{"kube-apiserver", func(ctx context.Context) (float64, float64, error) {
			text, err := env.APIServerMetrics(ctx)
			if err != nil {
				return 0, 0, err
			}
			return processUsage(text)
		}})
	}
	return out
}

// processUsage reads the standard process collector's metrics.
func processUsage(text []byte) (cpuSeconds, rssBytes float64, err error) {
	families, err := metrics.ParseText(text)
	if err != nil {
		return 0, 0, err
	}
	value := func(name string) (float64, error) {
		v, ok := gaugeValue(families, name)
		if !ok {
			return 0, fmt.Errorf("no %s in the metrics (the process collector is off?)", name)
		}
		return v, nil
	}
	if cpuSeconds, err = value("process_cpu_seconds_total"); err != nil {
		return 0, 0, err
	}
	rssBytes, err = value("process_resident_memory_bytes")
	return cpuSeconds, rssBytes, err
}

func (r *resourceUsageSummary) sampleAll(ctx context.Context, at time.Time) {
	for _, src := range r.sources {
		r.sample(ctx, src, at)
	}
}

func (r *resourceUsageSummary) sample(ctx context.Context, src usageSource, at time.Time) {
	cpu, rss, err := src.read(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			r.errs[src.name] = err
		}
		return
	}
	s := r.series[src.name]
	if s == nil {
		s = &usageSeries{}
		r.series[src.name] = s
	}
	x := at.Sub(r.started).Seconds()
	s.memoryMiB = append(s.memoryMiB, metrics.Point{X: x, Y: rss / (1 << 20)})
	// A restarted process starts its CPU time again; a rate across the
	// restart would be negative, so the series resumes after it.
	if s.last != nil && cpu >= s.last.seconds {
		if wall := at.Sub(s.last.at).Seconds(); wall > 0 {
			s.cores = append(s.cores, metrics.Point{X: x, Y: (cpu - s.last.seconds) / wall})
		}
	}
	s.last = &cpuReading{at: at, seconds: cpu}
}

// resourceConstraint is one component's limit in a constraints file.
type resourceConstraint struct {
	CPUConstraint    float64 `json:"cpuConstraint"`
	MemoryConstraint float64 `json:"memoryConstraint"`
}

func loadResourceConstraints(path string) (map[string]resourceConstraint, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("param resourceConstraints: %w", err)
	}
	var out map[string]resourceConstraint
	if err := yaml.UnmarshalStrict(data, &out); err != nil {
		return nil, fmt.Errorf("param resourceConstraints: %s: %w", path, err)
	}
	return out, nil
}

func (r *resourceUsageSummary) summarise(env *Env, constraints map[string]resourceConstraint) ([]Summary, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.series) == 0 {
		if len(r.errs) == 0 {
			return nil, notMeasuredf("no component to observe: the run knows no control-plane process or metrics endpoint")
		}
		return nil, notMeasuredf("no component could be read: %v", errorList(r.errs))
	}
	names := make([]string, 0, len(r.series))
	for name := range r.series {
		names = append(names, name)
	}
	sort.Strings(names)
	sum := Summary{
		Name:       "ResourceUsageSummary",
		PerfData:   &metrics.PerfData{Version: metrics.PerfDataVersion},
		Headline:   map[string]float64{},
		Thresholds: map[string]float64{},
		Series:     map[string][]metrics.Point{},
	}
	file := resourceUsageFile{}
	var violated []string
	for _, name := range names {
		s := r.series[name]
		for _, perc := range resourceUsagePercentiles {
			file[strconv.Itoa(perc)] = append(file[strconv.Itoa(perc)], containerUsage{
				Name: name,
				CPU:  rankOrZero(s.cores, perc),
				Mem:  uint64(rankOrZero(s.memoryMiB, perc) * (1 << 20)),
			})
		}
		for _, res := range []struct {
			resource, unit string
			points         []metrics.Point
			limit          float64
		}{
			{"cpu", "cores", s.cores, constraints[name].CPUConstraint},
			{"memory", "MiB", s.memoryMiB, constraints[name].MemoryConstraint / (1 << 20)},
		} {
			if len(res.points) == 0 {
				continue
			}
			values := pointValues(res.points)
			p := metrics.NearestRankPercentiles(values)
			data := p.Data()
			data["Max"] = metrics.NearestRank(values, 100)
			sum.PerfData.DataItems = append(sum.PerfData.DataItems, metrics.DataItem{
				Data: data, Unit: res.unit, Labels: map[string]string{"Component": name, "Resource": res.resource},
			})
			key := fmt.Sprintf("%s %s p99 %s", name, res.resource, res.unit)
			sum.Headline[key] = p.Perc99
			sum.Series[res.resource+" "+name] = res.points
			if res.limit > 0 {
				sum.Thresholds[key] = res.limit
				if p.Perc99 > res.limit {
					violated = append(violated, fmt.Sprintf("%s %s p99 %.3g %s > %.3g %s", name, res.resource, p.Perc99, res.unit, res.limit, res.unit))
				}
			}
		}
	}
	for name := range constraints {
		if r.series[name] == nil {
			violated = append(violated, fmt.Sprintf("%s: constrained but never sampled", name))
		}
	}
	sort.Strings(violated)
	sum.Output = file
	return []Summary{sum}, violations(violated)
}

// rankOrZero is the points' nearest-rank percentile, 0 when there are
// none (a component sampled once has no CPU rate yet).
func rankOrZero(points []metrics.Point, perc int) float64 {
	if len(points) == 0 {
		return 0
	}
	return metrics.NearestRank(pointValues(points), float64(perc))
}

// pointValues are the points' values, in order.
func pointValues(points []metrics.Point) []float64 {
	values := make([]float64, len(points))
	for i, p := range points {
		values[i] = p.Y
	}
	return values
}

// errorList renders per-component errors in a stable order.
func errorList(errs map[string]error) string {
	names := make([]string, 0, len(errs))
	for n := range errs {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for i, n := range names {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %v", n, errs[n])
	}
	return b.String()
}
