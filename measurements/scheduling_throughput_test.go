package measurements

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kscale/kscale/measurements/metrics"
)

// runSchedulingScenario starts SchedulingThroughput, creates one pod per
// entry of scheduledAt (offsets from T0) and schedules it then, adds a pod
// that is never scheduled and one created before the start and scheduled
// long before the others (both must not count), and gathers.
//
// Each binding is seen 20ms into the second of its PodScheduled stamp, so
// the tracker takes stamp+20ms as its schedule time (refineStamp). The
// offset is the same for every pod: the windows, which start at the first
// pod, then hold the pods of the stamps' whole seconds.
func runSchedulingScenario(t *testing.T, startParams, gatherParams Params, scheduledAt []time.Duration) ([]Summary, error) {
	t.Helper()
	old := trackerTestPod("old", trackerT0.Add(-time.Hour), false)
	env, client, clock := newTrackerTestEnv(old)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m := &schedulingThroughput{}
	params := Params{"action": "start", "namespace": trackerTestNS}
	for k, v := range startParams {
		params[k] = v
	}
	if _, err := m.Execute(ctx, env, params); err != nil {
		t.Fatalf("start: %v", err)
	}
	trackerCreatePod(t, client, trackerTestPod("unscheduled", trackerT0, false))
	trackerSchedulePod(old, trackerT0.Add(-50*time.Minute))
	trackerUpdatePod(t, client, old)
	var pods []*v1.Pod
	for i := range scheduledAt {
		pod := trackerTestPod(fmt.Sprintf("p-%03d", i), trackerT0, false)
		trackerCreatePod(t, client, pod)
		pods = append(pods, pod)
	}
	waitTracked(t, m.tracker, "every pod created", func(seen map[string]podTimes, _ int) bool { return len(seen) == len(scheduledAt)+1 })
	// The informer reads the clock when it delivers an update: each clock
	// move waits for the previous binding to be seen.
	for i, pod := range pods {
		clock.SetTime(trackerT0.Add(scheduledAt[i] + 20*time.Millisecond))
		trackerSchedulePod(pod, trackerT0.Add(scheduledAt[i]))
		trackerUpdatePod(t, client, pod)
		name := pod.Name
		waitTracked(t, m.tracker, name+" scheduled", func(seen map[string]podTimes, _ int) bool { return !seen[name].Scheduled.IsZero() })
	}
	waitTracked(t, m.tracker, "every pod scheduled", func(seen map[string]podTimes, _ int) bool {
		n := 0
		for _, p := range seen {
			if !p.Scheduled.IsZero() {
				n++
			}
		}
		return n == len(scheduledAt) && len(seen) == len(scheduledAt)+1
	})
	params = Params{"action": "gather"}
	for k, v := range gatherParams {
		params[k] = v
	}
	return m.Execute(ctx, env, params)
}

// scheduledAtRepeat is n copies of d: n pods scheduled in the same second.
func scheduledAtRepeat(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

func TestSchedulingThroughput(t *testing.T) {
	s := time.Second
	tenZeroFive := append(scheduledAtRepeat(10, s), scheduledAtRepeat(5, 3*s)...) // seconds 1 and 3 from T0: windows 0 and 2
	for _, tc := range []struct {
		name                      string
		startParams, gatherParams Params
		scheduledAt               []time.Duration
		wantRates                 []float64
		wantPerc                  metrics.Percentiles
		wantMax                   float64
		wantThreshold             float64 // 0: none in Thresholds
		wantItem                  string  // the violation, if any
	}{
		{
			name:        "1s windows: the idle second between two busy ones is kept, none before or after",
			startParams: Params{"measurementInterval": "1s"},
			scheduledAt: tenZeroFive,
			wantRates:   []float64{10, 0, 5},
			wantPerc:    metrics.Percentiles{Perc50: 5, Perc90: 10, Perc99: 10},
			wantMax:     10,
		},
		{
			name:          "max under the threshold violates",
			startParams:   Params{"measurementInterval": "1s"},
			gatherParams:  Params{"threshold": 12},
			scheduledAt:   tenZeroFive,
			wantRates:     []float64{10, 0, 5},
			wantPerc:      metrics.Percentiles{Perc50: 5, Perc90: 10, Perc99: 10},
			wantMax:       10,
			wantThreshold: 12,
			wantItem:      "scheduling throughput max 10 pods/s < 12 pods/s (15 pods in 3 windows of 1s)",
		},
		{
			name:          "threshold given at start, max equal to it passes",
			startParams:   Params{"measurementInterval": "1s", "threshold": "10"},
			scheduledAt:   tenZeroFive,
			wantRates:     []float64{10, 0, 5},
			wantPerc:      metrics.Percentiles{Perc50: 5, Perc90: 10, Perc99: 10},
			wantMax:       10,
			wantThreshold: 10,
		},
		{
			name:          "enableViolations false reports without judging",
			startParams:   Params{"measurementInterval": "1s"},
			gatherParams:  Params{"threshold": 100.0, "enableViolations": false},
			scheduledAt:   tenZeroFive,
			wantRates:     []float64{10, 0, 5},
			wantPerc:      metrics.Percentiles{Perc50: 5, Perc90: 10, Perc99: 10},
			wantMax:       10,
			wantThreshold: 100,
		},
		{
			// [T0+1s, +6s): 15 pods, [+6s, +11s): 20 pods.
			name:        "default 5s windows",
			scheduledAt: append(tenZeroFive, scheduledAtRepeat(20, 8*s)...),
			wantRates:   []float64{3, 4},
			wantPerc:    metrics.Percentiles{Perc50: 3, Perc90: 4, Perc99: 4},
			wantMax:     4,
		},
		{
			name:          "clusterloader2's measurmentInterval spelling",
			startParams:   Params{"measurmentInterval": "2s"},
			gatherParams:  Params{"threshold": 6},
			scheduledAt:   tenZeroFive,
			wantRates:     []float64{5, 2.5},
			wantPerc:      metrics.Percentiles{Perc50: 2.5, Perc90: 5, Perc99: 5},
			wantMax:       5,
			wantThreshold: 6,
			wantItem:      "scheduling throughput max 5 pods/s < 6 pods/s (15 pods in 2 windows of 2s)",
		},
		{
			name:        "a single pod is one window",
			startParams: Params{"measurementInterval": "1s"},
			scheduledAt: []time.Duration{4 * s},
			wantRates:   []float64{1},
			wantPerc:    metrics.Percentiles{Perc50: 1, Perc90: 1, Perc99: 1},
			wantMax:     1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			summaries, err := runSchedulingScenario(t, tc.startParams, tc.gatherParams, tc.scheduledAt)
			var v *ViolationError
			switch {
			case tc.wantItem == "" && err != nil:
				t.Fatalf("want a pass, got %v", err)
			case tc.wantItem != "" && (!errors.As(err, &v) || !reflect.DeepEqual(v.Items, []string{tc.wantItem})):
				t.Fatalf("got %v, want the violation %q", err, tc.wantItem)
			}
			if len(summaries) != 1 {
				t.Fatalf("%d summaries", len(summaries))
			}
			sum := summaries[0]
			if sum.Name != "SchedulingThroughput" {
				t.Errorf("name %q", sum.Name)
			}
			wantData := map[string]float64{"Perc50": tc.wantPerc.Perc50, "Perc90": tc.wantPerc.Perc90, "Perc99": tc.wantPerc.Perc99, "Max": tc.wantMax}
			if sum.PerfData == nil || len(sum.PerfData.DataItems) != 1 || sum.PerfData.Version != "v1" {
				t.Fatalf("perf data %+v", sum.PerfData)
			}
			if it := sum.PerfData.DataItems[0]; it.Unit != "1/s" || !reflect.DeepEqual(it.Data, wantData) {
				t.Errorf("data item %+v, want %v in 1/s", it, wantData)
			}
			// clusterloader2's plain object, the shape perfdash reads.
			pd := perfdashReads(t, sum)
			if got := pd[0].Items[0].Data; got["Perc50"] != tc.wantPerc.Perc50 || got["Perc99"] != tc.wantPerc.Perc99 || got["Max"] != tc.wantMax {
				t.Errorf("perfdash reads %v, want %v", got, wantData)
			}
			var gotRates, gotX []float64
			for _, p := range sum.Series["scheduled pods/s"] {
				gotRates, gotX = append(gotRates, p.Y), append(gotX, p.X)
			}
			interval := 5.0
			if len(tc.wantRates) > 1 {
				interval = gotX[1]
			}
			var wantX []float64
			for i := range tc.wantRates {
				wantX = append(wantX, float64(i)*interval)
			}
			if !reflect.DeepEqual(gotRates, tc.wantRates) || !reflect.DeepEqual(gotX, wantX) {
				t.Errorf("series x %v y %v, want y %v", gotX, gotRates, tc.wantRates)
			}
			if sum.Headline["max pods/s"] != tc.wantMax || sum.Headline["scheduled pods"] != float64(len(tc.scheduledAt)) ||
				sum.Headline["windows"] != float64(len(tc.wantRates)) || sum.Headline["p99 pods/s"] != tc.wantPerc.Perc99 {
				t.Errorf("headline %v", sum.Headline)
			}
			if got := sum.Thresholds["max pods/s"]; got != tc.wantThreshold || (tc.wantThreshold == 0 && sum.Thresholds != nil) {
				t.Errorf("thresholds %v, want max %v", sum.Thresholds, tc.wantThreshold)
			}
		})
	}
}

func TestSchedulingThroughputRates(t *testing.T) {
	at := func(ms int) time.Time { return trackerT0.Add(time.Duration(ms) * time.Millisecond) }
	for _, tc := range []struct {
		name     string
		times    []time.Time
		interval time.Duration
		want     []float64
	}{
		{"one", []time.Time{at(0)}, time.Second, []float64{1}},
		{"unsorted input", []time.Time{at(2000), at(0), at(0)}, time.Second, []float64{2, 0, 1}},
		{"a long idle gap", []time.Time{at(0), at(4000)}, time.Second, []float64{1, 0, 0, 0, 1}},
		{"the last pod on a window's edge opens it", []time.Time{at(0), at(2000)}, 2 * time.Second, []float64{0.5, 0.5}},
		{"windows start at the first pod, not at a round second", []time.Time{at(300), at(1200), at(1400)}, time.Second, []float64{2, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := schedulingRates(tc.times, tc.interval); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSchedulingThroughputNotMeasured(t *testing.T) {
	summaries, err := runSchedulingScenario(t, nil, nil, nil)
	var nm *NotMeasuredError
	want := `no scheduled pods matched namespace=ns-1 labelSelector="" (1 pods created after the start, none scheduled; 1 earlier ones ignored)`
	if !errors.As(err, &nm) || nm.Reason != want || summaries != nil {
		t.Fatalf("got %v %v, want not measured: %s", summaries, err, want)
	}
}

func TestSchedulingThroughputParams(t *testing.T) {
	env, _, _ := newTrackerTestEnv()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tc := range []struct {
		name    string
		params  Params
		wantErr string
	}{
		{"unknown action", Params{"action": "begin"}, "param action"},
		{"gather without a start", Params{"action": "gather"}, "gather without a start"},
		{"sub-second window", Params{"action": "start", "measurementInterval": "500ms"}, "param measurementInterval: 500ms must be a whole number of seconds, at least 1s: schedule times have one-second granularity"},
		{"fractional seconds", Params{"action": "start", "measurementInterval": "1500ms"}, "param measurementInterval: 1.5s must be a whole number"},
		{"zero window, clusterloader2 spelling", Params{"action": "start", "measurmentInterval": "0s"}, "param measurmentInterval"},
		{"window not a duration", Params{"action": "start", "measurementInterval": 5}, "param measurementInterval"},
		{"negative threshold", Params{"action": "start", "threshold": -1}, "param threshold"},
		{"threshold not a number", Params{"action": "start", "threshold": "fast"}, "param threshold"},
		{"bad field selector", Params{"action": "start", "fieldSelector": "a~b"}, "param fieldSelector"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := (&schedulingThroughput{}).Execute(ctx, env, tc.params)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want %q", err, tc.wantErr)
			}
		})
	}
	t.Run("bad gather params keep nothing half-done", func(t *testing.T) {
		m := &schedulingThroughput{}
		if _, err := m.Execute(ctx, env, Params{"action": "start"}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Execute(ctx, env, Params{"action": "gather", "enableViolations": "maybe"}); err == nil || !strings.Contains(err.Error(), "param enableViolations") {
			t.Fatalf("got %v", err)
		}
		if m.tracker == nil || m.tracker.stopped() {
			t.Fatal("a gather refused for its params must leave the measurement running")
		}
		m.tracker.stop()
	})
}
