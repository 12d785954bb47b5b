package measurements

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kscale/kscale/framework/metrics"
)

// The scenario every PodStartupLatency case runs, with T0 the start:
//
//	stateless-01..10  created T0, scheduled T0+1s, containers started at
//	                  T0+2s and T0+(1+i)s, seen running at T0+(1+i)s+200ms
//	stateful-01..02   (PVC) created T0+1s, scheduled T0+2s, started T0+3s and
//	                  T0+4s, seen running at T0+4.5s
//	pending-01        created T0+1s, scheduled, never running
//	deleted-01        created T0+1s, deleted before running: not counted
//	old               created T0-10s, before the start: ignored even though
//	                  it runs after the start
//
// Hand-computed transitions (ms), nearest rank:
//
//	stateless (10): create_to_schedule 1000 each; schedule_to_run 1000i;
//	  run_to_watch 200; schedule_to_watch 1000i+200; create_to_run
//	  1000+1000i; pod_startup 1200+1000i → p50 the 5th, p90 the 9th, p99
//	  the 10th value.
//	stateful (2): 1000, 2000, 500, 2500, 3000, 3500 each.
//	all (12): p50 the 6th, p90 the 11th, p99 the 12th of the union.
var podStartupWant = map[string]map[string]metrics.Percentiles{
	"PodStartupLatency_PSL": {
		"create_to_schedule": {Perc50: 1000, Perc90: 1000, Perc99: 1000},
		"schedule_to_run":    {Perc50: 4000, Perc90: 9000, Perc99: 10000},
		"run_to_watch":       {Perc50: 200, Perc90: 500, Perc99: 500},
		"schedule_to_watch":  {Perc50: 4200, Perc90: 9200, Perc99: 10200},
		"create_to_run":      {Perc50: 5000, Perc90: 10000, Perc99: 11000},
		"pod_startup":        {Perc50: 5200, Perc90: 10200, Perc99: 11200},
	},
	"StatelessPodStartupLatency_PSL": {
		"create_to_schedule": {Perc50: 1000, Perc90: 1000, Perc99: 1000},
		"schedule_to_run":    {Perc50: 5000, Perc90: 9000, Perc99: 10000},
		"run_to_watch":       {Perc50: 200, Perc90: 200, Perc99: 200},
		"schedule_to_watch":  {Perc50: 5200, Perc90: 9200, Perc99: 10200},
		"create_to_run":      {Perc50: 6000, Perc90: 10000, Perc99: 11000},
		"pod_startup":        {Perc50: 6200, Perc90: 10200, Perc99: 11200},
	},
	"StatefulPodStartupLatency_PSL": {
		"create_to_schedule": {Perc50: 1000, Perc90: 1000, Perc99: 1000},
		"schedule_to_run":    {Perc50: 2000, Perc90: 2000, Perc99: 2000},
		"run_to_watch":       {Perc50: 500, Perc90: 500, Perc99: 500},
		"schedule_to_watch":  {Perc50: 2500, Perc90: 2500, Perc99: 2500},
		"create_to_run":      {Perc50: 3000, Perc90: 3000, Perc99: 3000},
		"pod_startup":        {Perc50: 3500, Perc90: 3500, Perc99: 3500},
	},
}

// podStartupWantCounts are each summary's pods measured and not running.
var podStartupWantCounts = map[string][2]float64{
	"PodStartupLatency_PSL":          {12, 1},
	"StatelessPodStartupLatency_PSL": {10, 1},
	"StatefulPodStartupLatency_PSL":  {2, 0},
}

// runPodStartupScenario runs the scenario above between a start with
// startParams and a gather with gatherParams.
func runPodStartupScenario(t *testing.T, startParams, gatherParams Params) ([]Summary, error) {
	t.Helper()
	at := func(d time.Duration) time.Time { return trackerT0.Add(d) }
	old := trackerTestPod("old", at(-10*time.Second), false)
	env, client, clock := newTrackerTestEnv(old)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	m := &podStartupLatency{identifier: "PSL"}
	params := Params{"action": "start", "namespace": trackerTestNS, "labelSelector": "group=test"}
	for k, v := range startParams {
		params[k] = v
	}
	if _, err := m.Execute(ctx, env, params); err != nil {
		t.Fatalf("start: %v", err)
	}

	type plan struct {
		pod             *v1.Pod
		scheduled, seen time.Duration
		started         []time.Duration
	}
	var plans []plan
	for i := 1; i <= 10; i++ {
		pod := trackerTestPod(fmt.Sprintf("stateless-%02d", i), at(0), false)
		plans = append(plans, plan{pod, time.Second, time.Duration(1+i)*time.Second + 200*time.Millisecond,
			[]time.Duration{2 * time.Second, time.Duration(1+i) * time.Second}})
	}
	for i := 1; i <= 2; i++ {
		pod := trackerTestPod(fmt.Sprintf("stateful-%02d", i), at(time.Second), true)
		plans = append(plans, plan{pod, 2 * time.Second, 4500 * time.Millisecond, []time.Duration{3 * time.Second, 4 * time.Second}})
	}
	pending := trackerTestPod("pending-01", at(time.Second), false)
	deleted := trackerTestPod("deleted-01", at(time.Second), false)
	for _, p := range plans {
		trackerCreatePod(t, client, p.pod)
	}
	trackerCreatePod(t, client, pending)
	trackerCreatePod(t, client, deleted)
	waitTracked(t, m.tracker, "the new pods", func(pods map[string]podTimes, ignored int) bool { return len(pods) == 14 && ignored == 1 })

	trackerSchedulePod(pending, at(time.Second))
	trackerUpdatePod(t, client, pending)
	if err := client.CoreV1().Pods(trackerTestNS).Delete(ctx, deleted.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	clock.Set(at(time.Second))
	old.Spec.NodeName = "node-1"
	trackerRunPod(old, at(time.Second), at(time.Second))
	trackerUpdatePod(t, client, old)

	for _, p := range plans {
		clock.Set(at(p.seen))
		trackerSchedulePod(p.pod, at(p.scheduled))
		var started []time.Time
		for _, s := range p.started {
			started = append(started, at(s))
		}
		trackerRunPod(p.pod, started...)
		trackerUpdatePod(t, client, p.pod)
		name := p.pod.Name
		waitTracked(t, m.tracker, name+" running", func(pods map[string]podTimes, _ int) bool { return !pods[name].Watched.IsZero() })
	}
	waitTracked(t, m.tracker, "pending scheduled, deleted gone", func(pods map[string]podTimes, _ int) bool {
		return !pods["pending-01"].Scheduled.IsZero() && pods["deleted-01"].Deleted
	})

	params = Params{"action": "gather"}
	for k, v := range gatherParams {
		params[k] = v
	}
	summaries, err := m.Execute(ctx, env, params)
	if m.tracker != nil {
		t.Fatal("gather must let go of its tracker")
	}
	return summaries, err
}

func TestPodStartupLatency(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		startParams, gatherParams Params
		// wantItems are the violations, in summary order; wantVerdicts
		// each summary's own verdict (all, stateless, stateful).
		wantItems      []string
		wantVerdicts   [3]Verdict
		wantThresholds map[string]float64
	}{
		{
			name:           "default 5s threshold on p99: all pods and stateless violate, stateful passes",
			wantItems:      []string{"pod_startup p99 11.2s > 5s (all pods, 12 pods)", "pod_startup p99 11.2s > 5s (stateless, 10 pods)"},
			wantVerdicts:   [3]Verdict{Violated, Violated, Pass},
			wantThresholds: map[string]float64{"pod_startup p99 ms": 5000},
		},
		{
			name:           "threshold above every p99 passes",
			startParams:    Params{"threshold": "12s"},
			wantVerdicts:   [3]Verdict{Pass, Pass, Pass},
			wantThresholds: map[string]float64{"pod_startup p99 ms": 12000},
		},
		{
			name:           "perc50Threshold judges the median too",
			startParams:    Params{"threshold": "12s", "perc50Threshold": "6s"},
			wantItems:      []string{"pod_startup p50 6.2s > 6s (stateless, 10 pods)"},
			wantVerdicts:   [3]Verdict{Pass, Violated, Pass},
			wantThresholds: map[string]float64{"pod_startup p50 ms": 6000, "pod_startup p99 ms": 12000},
		},
		{
			name:           "perc99Threshold overrides threshold",
			startParams:    Params{"threshold": "20s", "perc99Threshold": "11s"},
			wantItems:      []string{"pod_startup p99 11.2s > 11s (all pods, 12 pods)", "pod_startup p99 11.2s > 11s (stateless, 10 pods)"},
			wantVerdicts:   [3]Verdict{Violated, Violated, Pass},
			wantThresholds: map[string]float64{"pod_startup p99 ms": 11000},
		},
		{
			name:           "perc90Threshold given at gather",
			startParams:    Params{"threshold": "12s"},
			gatherParams:   Params{"perc90Threshold": "10s"},
			wantItems:      []string{"pod_startup p90 10.2s > 10s (all pods, 12 pods)", "pod_startup p90 10.2s > 10s (stateless, 10 pods)"},
			wantVerdicts:   [3]Verdict{Violated, Violated, Pass},
			wantThresholds: map[string]float64{"pod_startup p90 ms": 10000, "pod_startup p99 ms": 12000},
		},
		{
			name:        "stateful pods are judged as well",
			startParams: Params{"threshold": "20s", "perc99Threshold": "3s"},
			wantItems: []string{
				"pod_startup p99 11.2s > 3s (all pods, 12 pods)",
				"pod_startup p99 11.2s > 3s (stateless, 10 pods)",
				"pod_startup p99 3.5s > 3s (stateful, 2 pods)",
			},
			wantVerdicts:   [3]Verdict{Violated, Violated, Violated},
			wantThresholds: map[string]float64{"pod_startup p99 ms": 3000},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			summaries, err := runPodStartupScenario(t, tc.startParams, tc.gatherParams)
			var v *ViolationError
			switch {
			case len(tc.wantItems) == 0 && err != nil:
				t.Fatalf("want a pass, got %v", err)
			case len(tc.wantItems) > 0 && !errors.As(err, &v):
				t.Fatalf("want a violation, got %v", err)
			case v != nil && !reflect.DeepEqual(v.Items, tc.wantItems):
				t.Fatalf("violations\n got %q\nwant %q", v.Items, tc.wantItems)
			}
			checkPodStartupSummaries(t, summaries, tc.wantVerdicts, tc.wantThresholds)
		})
	}
}

// checkPodStartupSummaries checks the names, verdicts, PerfData, Headline
// and Thresholds of the scenario's summaries, and the slowest-pods file.
func checkPodStartupSummaries(t *testing.T, summaries []Summary, verdicts [3]Verdict, thresholds map[string]float64) {
	t.Helper()
	names := []string{"PodStartupLatency_PSL", "StatelessPodStartupLatency_PSL", "StatefulPodStartupLatency_PSL"}
	if len(summaries) != 3 {
		t.Fatalf("%d summaries, want 3", len(summaries))
	}
	for i, s := range summaries {
		if s.Name != names[i] || s.Verdict != verdicts[i] {
			t.Errorf("summary %d: %s %s, want %s %s", i, s.Name, s.Verdict, names[i], verdicts[i])
		}
		got := map[string]metrics.Percentiles{}
		for _, it := range s.PerfData.DataItems {
			if it.Unit != "ms" || len(it.Data) != 3 {
				t.Errorf("%s %s: unit %q data %v", s.Name, it.Labels["Metric"], it.Unit, it.Data)
			}
			got[it.Labels["Metric"]] = metrics.Percentiles{Perc50: it.Data["Perc50"], Perc90: it.Data["Perc90"], Perc99: it.Data["Perc99"]}
		}
		if want := podStartupWant[s.Name]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s transitions\n got %v\nwant %v", s.Name, got, want)
		}
		if len(s.PerfData.DataItems) != len(podStartupTransitions) || s.PerfData.DataItems[5].Labels["Metric"] != "pod_startup" {
			t.Errorf("%s: data items out of order: %+v", s.Name, s.PerfData.DataItems)
		}
		startup := podStartupWant[s.Name]["pod_startup"]
		counts := podStartupWantCounts[s.Name]
		wantHeadline := map[string]float64{
			"pod_startup p50 ms": startup.Perc50, "pod_startup p90 ms": startup.Perc90, "pod_startup p99 ms": startup.Perc99,
			"pods": counts[0], "pods not running": counts[1],
		}
		if !reflect.DeepEqual(s.Headline, wantHeadline) {
			t.Errorf("%s headline\n got %v\nwant %v", s.Name, s.Headline, wantHeadline)
		}
		if !reflect.DeepEqual(s.Thresholds, thresholds) {
			t.Errorf("%s thresholds %v, want %v", s.Name, s.Thresholds, thresholds)
		}
		if i > 0 && len(s.Files) != 0 {
			t.Errorf("%s carries files %v; only the all-pods summary does", s.Name, s.Files)
		}
	}
	body, ok := summaries[0].Files["PodStartupLatency_PSL_slowest_pods.json"]
	if !ok || len(summaries[0].Files) != 1 {
		t.Fatalf("files %v, want PodStartupLatency_PSL_slowest_pods.json", summaries[0].Files)
	}
	var lines []slowestPodLine
	if err := json.Unmarshal(body, &lines); err != nil {
		t.Fatalf("slowest pods: %v\n%s", err, body)
	}
	if len(lines) != 12 {
		t.Fatalf("%d slowest pods, want the 12 measured", len(lines))
	}
	at := func(d time.Duration) time.Time { return trackerT0.Add(d) }
	wantFirst := slowestPodLine{
		Namespace: trackerTestNS, Name: "stateless-10", Node: "node-1", Stateless: true,
		Created: at(0), Scheduled: at(time.Second), ScheduledBy: "condition",
		Running: at(11 * time.Second), Watched: at(11200 * time.Millisecond),
		TransitionsMs: map[string]float64{
			"create_to_schedule": 1000, "schedule_to_run": 10000, "run_to_watch": 200,
			"schedule_to_watch": 10200, "create_to_run": 11000, "pod_startup": 11200,
		},
	}
	if !reflect.DeepEqual(lines[0], wantFirst) {
		t.Errorf("slowest pod\n got %+v\nwant %+v", lines[0], wantFirst)
	}
	var order []string
	for _, l := range lines {
		order = append(order, l.Name)
	}
	wantOrder := []string{"stateless-10", "stateless-09", "stateless-08", "stateless-07", "stateless-06", "stateless-05",
		"stateless-04", "stateless-03", "stateful-01", "stateful-02", "stateless-02", "stateless-01"}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("slowest pods order %v, want %v", order, wantOrder)
	}
}

func TestPodStartupLatencySlowestPodsCap(t *testing.T) {
	var measured []*podTimes
	for i := 0; i < 150; i++ {
		measured = append(measured, &podTimes{
			Namespace: "ns", Name: fmt.Sprintf("p-%03d", i),
			Created: trackerT0, Watched: trackerT0.Add(time.Duration(i) * time.Millisecond),
		})
	}
	body, err := slowestPodsJSON(measured)
	if err != nil {
		t.Fatal(err)
	}
	var lines []slowestPodLine
	if err := json.Unmarshal(body, &lines); err != nil {
		t.Fatal(err)
	}
	if len(lines) != slowestPodsKept || lines[0].Name != "p-149" || lines[99].Name != "p-050" {
		t.Fatalf("%d lines, first %s, last %s", len(lines), lines[0].Name, lines[len(lines)-1].Name)
	}
	if !sort.SliceIsSorted(lines, func(i, j int) bool {
		return lines[i].TransitionsMs["pod_startup"] > lines[j].TransitionsMs["pod_startup"]
	}) {
		t.Fatal("not slowest first")
	}
}

func TestPodStartupLatencyNotMeasured(t *testing.T) {
	for _, tc := range []struct {
		name string
		// pods are created after the start; run says whether they start.
		pods         int
		run          bool
		stateful     bool
		wantErr      string
		wantVerdicts []Verdict
		wantReasons  []string
	}{
		{
			name:    "no pod created after the start",
			wantErr: `no pods matched namespace=ns-1 labelSelector="group=test" (only pods created after the start count; 1 earlier ones ignored)`,
		},
		{
			name: "pods matched, none running",
			pods: 2, wantErr: `2 pods matched namespace=ns-1 labelSelector="group=test", none was running`,
			wantVerdicts: []Verdict{NotMeasured, NotMeasured, NotMeasured},
			wantReasons:  []string{"none was running", "none was running", "no stateful pods among the 2 pods"},
		},
		{
			name: "only stateful pods: the stateless summary is not measured, the call passes",
			pods: 2, run: true, stateful: true,
			wantVerdicts: []Verdict{Pass, NotMeasured, Pass},
			wantReasons:  []string{"", "no stateless pods among the 2 pods", ""},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, client, clock := newTrackerTestEnv(trackerTestPod("old", trackerT0.Add(-time.Hour), false))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			m := &podStartupLatency{}
			if _, err := m.Execute(ctx, env, Params{"action": "start", "namespace": trackerTestNS, "labelSelector": "group=test"}); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < tc.pods; i++ {
				pod := trackerTestPod(fmt.Sprintf("p-%d", i), trackerT0, tc.stateful)
				trackerCreatePod(t, client, pod)
				if tc.run {
					clock.Set(trackerT0.Add(2 * time.Second))
					trackerSchedulePod(pod, trackerT0)
					trackerRunPod(pod, trackerT0.Add(time.Second), trackerT0.Add(time.Second))
					trackerUpdatePod(t, client, pod)
				}
			}
			waitTracked(t, m.tracker, "the pods", func(pods map[string]podTimes, ignored int) bool {
				n := 0
				for _, p := range pods {
					if !tc.run || !p.Watched.IsZero() {
						n++
					}
				}
				return n == tc.pods && ignored == 1
			})
			summaries, err := m.Execute(ctx, env, Params{"action": "gather"})
			var nm *NotMeasuredError
			if tc.wantErr == "" && err != nil {
				t.Fatalf("want a pass, got %v", err)
			}
			if tc.wantErr != "" && (!errors.As(err, &nm) || !strings.Contains(nm.Reason, tc.wantErr)) {
				t.Fatalf("got %v, want not measured: %s", err, tc.wantErr)
			}
			if len(summaries) != len(tc.wantVerdicts) {
				t.Fatalf("%d summaries, want %d", len(summaries), len(tc.wantVerdicts))
			}
			for i, s := range summaries {
				if s.Verdict != tc.wantVerdicts[i] || !strings.Contains(s.Reason, tc.wantReasons[i]) {
					t.Errorf("summary %d %q: %s %q, want %s %q", i, s.Name, s.Verdict, s.Reason, tc.wantVerdicts[i], tc.wantReasons[i])
				}
			}
			// Without an identifier the all-pods summary leaves its name to
			// the Manager (Method_Identifier).
			if len(summaries) == 3 && (summaries[0].Name != "" || summaries[1].Name != "StatelessPodStartupLatency") {
				t.Errorf("names %q %q", summaries[0].Name, summaries[1].Name)
			}
		})
	}
}

func TestPodStartupLatencyActions(t *testing.T) {
	env, _, _ := newTrackerTestEnv()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tc := range []struct {
		name    string
		params  Params
		wantErr string
	}{
		{"unknown action", Params{"action": "stop"}, "param action"},
		{"gather without a start", Params{"action": "gather"}, "gather without a start"},
		{"threshold not a duration", Params{"action": "start", "threshold": "soon"}, "param threshold"},
		{"threshold a number", Params{"action": "start", "threshold": 5}, "param threshold"},
		{"zero perc90Threshold", Params{"action": "start", "perc90Threshold": "0s"}, "param perc90Threshold"},
		{"bad label selector", Params{"action": "start", "labelSelector": "a in ("}, "param labelSelector"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := (&podStartupLatency{}).Execute(ctx, env, tc.params)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want %q", err, tc.wantErr)
			}
		})
	}

	t.Run("a second start is ignored, the run's end stops the informer, gather still summarises", func(t *testing.T) {
		runCtx, endRun := context.WithCancel(context.Background())
		defer endRun()
		m := &podStartupLatency{}
		if _, err := m.Execute(runCtx, env, Params{"action": "start", "namespace": "a"}); err != nil {
			t.Fatal(err)
		}
		first := m.tracker
		if _, err := m.Execute(runCtx, env, Params{"action": "start", "namespace": "b"}); err != nil || m.tracker != first || m.sel.Namespace != "a" {
			t.Fatalf("second start: %v, namespace %q", err, m.sel.Namespace)
		}
		endRun()
		select {
		case <-first.done:
		case <-time.After(10 * time.Second):
			t.Fatal("the informer outlived the run's context")
		}
		_, err := m.Execute(context.Background(), env, Params{"action": "gather"})
		var nm *NotMeasuredError
		if !errors.As(err, &nm) || !strings.Contains(nm.Reason, "no pods matched namespace=a") {
			t.Fatalf("gather after the run ended: %v", err)
		}
		if _, err := m.Execute(context.Background(), env, Params{"action": "gather"}); err == nil {
			t.Fatal("a second gather has nothing started")
		}
	})
}

// TestPodStartupLatencyRegistered checks the method runs through the
// Manager, which judges the summaries by the verdicts set here.
func TestPodStartupLatencyRegistered(t *testing.T) {
	if !Known()["PodStartupLatency"] || !Known()["SchedulingThroughput"] {
		t.Fatalf("known: %v", KnownList())
	}
	env, _, _ := newTrackerTestEnv()
	m := NewManager(env)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := m.Execute(ctx, "PodStartupLatency", "PodStartupLatency", map[string]any{"action": "start", "namespace": "x"}); err != nil {
		t.Fatal(err)
	}
	err := m.Execute(ctx, "PodStartupLatency", "PodStartupLatency", map[string]any{"action": "gather"})
	var nm *NotMeasuredError
	if !errors.As(err, &nm) {
		t.Fatalf("gather: %v", err)
	}
	s := m.Summaries()
	if len(s) != 1 || s[0].Verdict != NotMeasured || s[0].FileName() != "PodStartupLatency_PodStartupLatency" {
		t.Fatalf("summaries %+v", s)
	}
}
