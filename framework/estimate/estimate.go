// Package estimate says before a run how long it will take, from the
// compiled config alone: each phase takes as long as its tuning set paces
// its objects, or as long as the controller-manager takes to create or
// delete the pods those objects control, whichever is longer; Sleep
// measurements add their durations; provisioning and namespace cleanup
// add what they cost per node and per pod.
//
// The rates are the ones measured on the local provider at the classic
// settings (docs/benchmarks.md): the ReplicaSet controller creates pods at
// the controller-manager's client QPS, the garbage collector deletes them
// at about half of it (it looks each one up first), hollow nodes go Ready
// at about 60 a second, and deleting a namespace's events costs about 4 ms
// a pod. A machine that the run saturates runs longer than the estimate.
package estimate

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kscale/kscale/framework/config"
)

// Rates measured on the local provider (docs/benchmarks.md).
const (
	// NodesReadyPerSecond is how fast hollow nodes register and go Ready.
	NodesReadyPerSecond = 60
	// CleanupPerPod is the namespace cleanup's cost per pod the run made
	// (its events).
	CleanupPerPod = 4 * time.Millisecond
	// ProvisionOverhead is the cluster's start, or the kubemark provider's
	// objects, before the first node.
	ProvisionOverhead = 10 * time.Second
)

// Inputs are what the estimate depends on besides the config.
type Inputs struct {
	// Provisioned is the count of hollow nodes the provider starts (0 for
	// a cluster given as is).
	Provisioned int
	// ControllerManagerQPS paces the controllers that create and delete
	// pods (100 on a production-sized control plane).
	ControllerManagerQPS float64
	// ScaleSteps is how many times provisioning waits for nodes (the
	// kubemark provider scales up in steps).
	ScaleSteps int
}

// Part is one part of the run and its estimated duration.
type Part struct {
	Name     string
	Duration time.Duration
	// Pods are the pods it creates (positive) or deletes (negative).
	Pods int
}

// Estimate is the run's estimated duration, part by part.
type Estimate struct {
	Parts []Part
	// Pods is the most pods alive at once, MaxPodsCreated those created
	// over the run.
	Pods, PodsCreated int
}

// Total is the sum of the parts.
func (e *Estimate) Total() time.Duration {
	var t time.Duration
	for _, p := range e.Parts {
		t += p.Duration
	}
	return t
}

// Timeout is the deadline the estimate asks of a runner.
func (e *Estimate) Timeout() time.Duration { return TimeoutFor(e.Total()) }

// TimeoutFor is the deadline a run of estimated duration d asks for: half
// as much again, rounded up to the hour.
func TimeoutFor(d time.Duration) time.Duration {
	t := time.Duration(float64(d) * 1.5)
	return time.Duration(math.Ceil(t.Hours())) * time.Hour
}

// Of estimates the run of cfg.
func Of(cfg *config.Config, in Inputs) *Estimate {
	qps := in.ControllerManagerQPS
	if qps <= 0 {
		qps = 100
	}
	e := &Estimate{}
	steps := max(1, in.ScaleSteps)
	e.Parts = append(e.Parts, Part{Name: "provisioning",
		Duration: ProvisionOverhead*time.Duration(steps) + seconds(float64(in.Provisioned)/NodesReadyPerSecond)})
	tuning := map[string]config.TuningSet{}
	for _, ts := range cfg.TuningSets {
		tuning[ts.Name] = ts
	}
	// live pods by object key (namespace range + basename).
	live := map[string]int{}
	current := 0
	for _, step := range cfg.Steps {
		var d time.Duration
		pods := 0
		for _, ph := range step.Phases {
			namespaces := phaseNamespaces(ph)
			actions := 0
			for _, obj := range ph.ObjectBundle {
				key := fmt.Sprintf("%v/%s", namespaces, obj.Basename)
				want := ph.ReplicasPerNamespace * namespaces * max(1, fillReplicas(obj))
				delta := want - live[key]
				live[key] = want
				pods += delta
				// Every replica is touched when its count changes.
				if delta != 0 {
					actions += namespaces * max(ph.ReplicasPerNamespace, 1)
				}
			}
			paced := tuningDuration(tuning[ph.TuningSet], actions)
			d = max(d, paced)
		}
		switch {
		case pods > 0:
			d = max(d, seconds(float64(pods)/qps))
			e.PodsCreated += pods
		case pods < 0:
			d = max(d, seconds(float64(-pods)/(qps/2)))
		}
		current += pods
		e.Pods = max(e.Pods, current)
		for _, m := range step.Measurements {
			if m.Method == "Sleep" {
				d += paramDuration(m.Params, "duration")
			}
		}
		e.Parts = append(e.Parts, Part{Name: step.Name, Duration: d, Pods: pods})
	}
	e.Parts = append(e.Parts, Part{Name: "namespace cleanup and teardown",
		Duration: time.Duration(e.PodsCreated)*CleanupPerPod + seconds(float64(current)/(qps/2))})
	return e
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func phaseNamespaces(ph config.Phase) int {
	switch {
	case len(ph.NamespaceList) > 0:
		return len(ph.NamespaceList)
	case ph.NamespaceRange != nil:
		return max(0, ph.NamespaceRange.Max-ph.NamespaceRange.Min+1)
	default:
		// A phase without namespaces makes cluster-scoped objects.
		return 1
	}
}

// fillReplicas is an object's controlled pods, from its templateFillMap's
// Replicas (the convention of clusterloader2's object templates); 0 when
// it names none.
func fillReplicas(obj config.Object) int {
	for _, key := range []string{"Replicas", "replicas"} {
		switch v := obj.TemplateFillMap[key].(type) {
		case int:
			return v
		case int64:
			return int(v)
		case float64:
			return int(v)
		case string:
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return 0
}

// tuningDuration is how long a tuning set takes for n actions.
func tuningDuration(ts config.TuningSet, n int) time.Duration {
	d := ts.InitialDelay.Std()
	if n == 0 {
		return d
	}
	switch {
	case ts.QPSLoad != nil && ts.QPSLoad.QPS > 0:
		d += seconds(float64(n) / ts.QPSLoad.QPS)
	case ts.RandomizedLoad != nil && ts.RandomizedLoad.AverageQPS > 0:
		d += seconds(float64(n) / ts.RandomizedLoad.AverageQPS)
	case ts.SteppedLoad != nil && ts.SteppedLoad.BurstSize > 0:
		d += time.Duration((n+ts.SteppedLoad.BurstSize-1)/ts.SteppedLoad.BurstSize-1) * ts.SteppedLoad.StepDelay.Std()
	case ts.TimeLimitedLoad != nil:
		d += ts.TimeLimitedLoad.TimeLimit.Std()
	case ts.RandomizedTimeLimitedLoad != nil:
		d += ts.RandomizedTimeLimitedLoad.TimeLimit.Std()
	case ts.GlobalQPSLoad != nil && ts.GlobalQPSLoad.QPS > 0:
		d += seconds(float64(n) / ts.GlobalQPSLoad.QPS)
	case ts.PoissonLoad != nil && ts.PoissonLoad.ExpectedActionsPerSecond > 0:
		d += seconds(float64(n) / ts.PoissonLoad.ExpectedActionsPerSecond)
	}
	return d
}

func paramDuration(params map[string]any, key string) time.Duration {
	s, ok := params[key].(string)
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0
	}
	return d
}

// Print writes the estimate, a line a part.
func (e *Estimate) Print(w io.Writer) {
	fmt.Fprintf(w, "estimated duration %s (%d pods created, at most %d at once):\n", Round(e.Total()), e.PodsCreated, e.Pods)
	for _, p := range e.Parts {
		if p.Duration < time.Second {
			continue
		}
		pods := ""
		if p.Pods > 0 {
			pods = fmt.Sprintf("  +%d pods", p.Pods)
		} else if p.Pods < 0 {
			pods = fmt.Sprintf("  %d pods", p.Pods)
		}
		fmt.Fprintf(w, "  %-44s %8s%s\n", truncate(p.Name, 44), Round(p.Duration), pods)
	}
}

// Round rounds a duration for people: seconds below ten minutes, minutes
// above.
func Round(d time.Duration) time.Duration {
	if d < 10*time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(time.Minute)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.TrimSpace(s[:n-1]) + "…"
}
