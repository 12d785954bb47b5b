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

	"github.com/kscale/kscale/measurements/metrics"
)

// The scenario every PodStartupLatency case runs, with T0 the start's
// second (the clock reads T0+400ms at the start). The API stamps whole
// seconds; the tracker narrows each stamp with the moment it first sees it
// (refineStamp: the sighting when it falls within the stamp's second, else
// the second's last millisecond). Each update is seen at the given moment:
//
//	stateless-01..10  created T0, seen T0+500ms; scheduled T0+1s, seen
//	                  T0+1.1s; containers started at T0+2s and T0+(1+i)s,
//	                  all running seen T0+(1+i)s+200ms
//	stateful-01..02   (PVC) created T0+1s, seen T0+1.05s; scheduled T0+2s,
//	                  seen T0+2.2s; started T0+3s and T0+4s, all running
//	                  seen late at T0+5.5s, after the second of the
//	                  latest start: it is taken as T0+4.999s
//	pending-01        created T0+1s, scheduled, never running
//	deleted-01        created T0+1s, deleted before running: not counted
//	old               created T0-10s, before the start: ignored even though
//	                  it runs after the start
//
// So the refined times are:
//
//	             created   scheduled  running          watched
//	stateless-i  T0+0.5s   T0+1.1s    T0+(1+i)s+0.2s   = running
//	stateful     T0+1.05s  T0+2.2s    T0+4.999s        T0+5.5s
//
// Hand-computed transitions (ms), nearest rank:
//
//	stateless (10): create_to_schedule 1100-500 = 600 each;
//	  schedule_to_run (1000(1+i)+200)-1100 = 1000i+100; run_to_watch 0
//	  (seen within the second of the stamp); schedule_to_watch 1000i+100;
//	  create_to_run (1000(1+i)+200)-500 = 1000i+700; pod_startup
//	  1000i+700 → p50 the 5th (i=5), p90 the 9th, p99 the 10th value.
//	stateful (2): create_to_schedule 2200-1050 = 1150; schedule_to_run
//	  4999-2200 = 2799; run_to_watch 5500-4999 = 501; schedule_to_watch
//	  5500-2200 = 3300; create_to_run 4999-1050 = 3949; pod_startup
//	  5500-1050 = 4450, each.
//	all (12): p50 the 6th, p90 the 11th, p99 the 12th of the union:
//	  create_to_schedule 600×10, 1150×2 → 600, 1150, 1150
//	  schedule_to_run 1100 2100 2799 2799 3100 [4100] 5100 .. [9100] [10100]
//	  run_to_watch 0×10, 501×2 → 0, 501, 501
//	  schedule_to_watch 1100 2100 3100 3300 3300 [4100] 5100 .. [9100] [10100]
//	  create_to_run 1700 2700 3700 3949 3949 [4700] 5700 .. [9700] [10700]
//	  pod_startup 1700 2700 3700 4450 4450 [4700] 5700 .. [9700] [10700]
var podStartupWant = map[string]map[string]metrics.Percentiles{
	"PodStartupLatency_PSL": {
		"create_to_schedule": {Perc50: 600, Perc90: 1150, Perc99: 1150},
		"schedule_to_run":    {Perc50: 4100, Perc90: 9100, Perc99: 10100},
		"run_to_watch":       {Perc50: 0, Perc90: 501, Perc99: 501},
		"schedule_to_watch":  {Perc50: 4100, Perc90: 9100, Perc99: 10100},
		"create_to_run":      {Perc50: 4700, Perc90: 9700, Perc99: 10700},
		"pod_startup":        {Perc50: 4700, Perc90: 9700, Perc99: 10700},
	},
	"StatelessPodStartupLatency_PSL": {
		"create_to_schedule": {Perc50: 600, Perc90: 600, Perc99: 600},
		"schedule_to_run":    {Perc50: 5100, Perc90: 9100, Perc99: 10100},
		"run_to_watch":       {Perc50: 0, Perc90: 0, Perc99: 0},
		"schedule_to_watch":  {Perc50: 5100, Perc90: 9100, Perc99: 10100},
		"create_to_run":      {Perc50: 5700, Perc90: 9700, Perc99: 10700},
		"pod_startup":        {Perc50: 5700, Perc90: 9700, Perc99: 10700},
	},
	"StatefulPodStartupLatency_PSL": {
		"create_to_schedule": {Perc50: 1150, Perc90: 1150, Perc99: 1150},
		"schedule_to_run":    {Perc50: 2799, Perc90: 2799, Perc99: 2799},
		"run_to_watch":       {Perc50: 501, Perc90: 501, Perc99: 501},
		"schedule_to_watch":  {Perc50: 3300, Perc90: 3300, Perc99: 3300},
		"create_to_run":      {Perc50: 3949, Perc90: 3949, Perc99: 3949},
		"pod_startup":        {Perc50: 4450, Perc90: 4450, Perc99: 4450},
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
//
// The informer reads the clock when it delivers an update, not when the
// test writes it, so each clock move waits until the tracker has seen the
// updates made at the previous setting.
func runPodStartupScenario(t *testing.T, startParams, gatherParams Params) ([]Summary, error) {
	t.Helper()
	at := func(d time.Duration) time.Time { return trackerT0.Add(d) }
	ms := time.Millisecond
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
	waitSeen := func(what string, names []string, seen func(podTimes) bool) {
		t.Helper()
		waitTracked(t, m.tracker, what, func(pods map[string]podTimes, _ int) bool {
			for _, n := range names {
				if p, ok := pods[n]; !ok || !seen(p) {
					return false
				}
			}
			return true
		})
	}
	names := func(pods []*v1.Pod) []string {
		var out []string
		for _, p := range pods {
			out = append(out, p.Name)
		}
		return out
	}

	// Created, stamped T0, seen at T0+500ms.
	clock.SetTime(at(500 * ms))
	var stateless, stateful []*v1.Pod
	for i := 1; i <= 10; i++ {
		pod := trackerTestPod(fmt.Sprintf("stateless-%02d", i), at(0), false)
		trackerCreatePod(t, client, pod)
		stateless = append(stateless, pod)
	}
	waitTracked(t, m.tracker, "the stateless pods", func(pods map[string]podTimes, ignored int) bool { return len(pods) == 10 && ignored == 1 })

	// Created, stamped T0+1s, seen at T0+1.05s.
	clock.SetTime(at(1050 * ms))
	for i := 1; i <= 2; i++ {
		pod := trackerTestPod(fmt.Sprintf("stateful-%02d", i), at(time.Second), true)
		trackerCreatePod(t, client, pod)
		stateful = append(stateful, pod)
	}
	pending := trackerTestPod("pending-01", at(time.Second), false)
	deleted := trackerTestPod("deleted-01", at(time.Second), false)
	trackerCreatePod(t, client, pending)
	trackerCreatePod(t, client, deleted)
	waitTracked(t, m.tracker, "the new pods", func(pods map[string]podTimes, ignored int) bool { return len(pods) == 14 && ignored == 1 })

	// Scheduled, stamped T0+1s, seen at T0+1.1s; deleted-01 goes before it
	// runs, and old runs.
	clock.SetTime(at(1100 * ms))
	for _, p := range append(stateless[:len(stateless):len(stateless)], pending) {
		trackerSchedulePod(p, at(time.Second))
		trackerUpdatePod(t, client, p)
	}
	if err := client.CoreV1().Pods(trackerTestNS).Delete(ctx, deleted.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	old.Spec.NodeName = "node-1"
	trackerRunPod(old, at(time.Second), at(time.Second))
	trackerUpdatePod(t, client, old)
	waitSeen("the stateless pods and pending-01 scheduled", append(names(stateless), pending.Name), func(p podTimes) bool { return !p.Scheduled.IsZero() })
	waitSeen("deleted-01 gone", []string{deleted.Name}, func(p podTimes) bool { return p.Deleted })

	// Scheduled, stamped T0+2s, seen at T0+2.2s.
	clock.SetTime(at(2200 * ms))
	for _, p := range stateful {
		trackerSchedulePod(p, at(2*time.Second))
		trackerUpdatePod(t, client, p)
	}
	waitSeen("the stateful pods scheduled", names(stateful), func(p podTimes) bool { return !p.Scheduled.IsZero() })

	// stateless-i: started T0+2s and T0+(1+i)s, all running seen 200ms
	// into the second of the latest start.
	for j, p := range stateless {
		latest := time.Duration(2+j) * time.Second // i = j+1
		clock.SetTime(at(latest + 200*ms))
		trackerRunPod(p, at(2*time.Second), at(latest))
		trackerUpdatePod(t, client, p)
		waitSeen(p.Name+" running", []string{p.Name}, func(p podTimes) bool { return !p.Watched.IsZero() })
	}
	// stateful: started T0+3s and T0+4s, all running seen at T0+5.5s.
	clock.SetTime(at(5500 * ms))
	for _, p := range stateful {
		trackerRunPod(p, at(3*time.Second), at(4*time.Second))
		trackerUpdatePod(t, client, p)
	}
	waitSeen("the stateful pods running", names(stateful), func(p podTimes) bool { return !p.Watched.IsZero() })

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
			// p99: all 10.7s, stateless 10.7s, stateful 4.45s.
			name:           "default 5s threshold on p99: all pods and stateless violate, stateful passes",
			wantItems:      []string{"pod_startup p99 10.7s > 5s (all pods, 12 pods)", "pod_startup p99 10.7s > 5s (stateless, 10 pods)"},
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
			// p50: all 4.7s, stateless 5.7s, stateful 4.45s.
			name:           "perc50Threshold judges the median too",
			startParams:    Params{"threshold": "12s", "perc50Threshold": "5s"},
			wantItems:      []string{"pod_startup p50 5.7s > 5s (stateless, 10 pods)"},
			wantVerdicts:   [3]Verdict{Pass, Violated, Pass},
			wantThresholds: map[string]float64{"pod_startup p50 ms": 5000, "pod_startup p99 ms": 12000},
		},
		{
			name:           "perc99Threshold overrides threshold",
			startParams:    Params{"threshold": "20s", "perc99Threshold": "10s"},
			wantItems:      []string{"pod_startup p99 10.7s > 10s (all pods, 12 pods)", "pod_startup p99 10.7s > 10s (stateless, 10 pods)"},
			wantVerdicts:   [3]Verdict{Violated, Violated, Pass},
			wantThresholds: map[string]float64{"pod_startup p99 ms": 10000},
		},
		{
			// p90: all 9.7s, stateless 9.7s, stateful 4.45s.
			name:           "perc90Threshold given at gather",
			startParams:    Params{"threshold": "12s"},
			gatherParams:   Params{"perc90Threshold": "9s"},
			wantItems:      []string{"pod_startup p90 9.7s > 9s (all pods, 12 pods)", "pod_startup p90 9.7s > 9s (stateless, 10 pods)"},
			wantVerdicts:   [3]Verdict{Violated, Violated, Pass},
			wantThresholds: map[string]float64{"pod_startup p90 ms": 9000, "pod_startup p99 ms": 12000},
		},
		{
			name:        "stateful pods are judged as well",
			startParams: Params{"threshold": "20s", "perc99Threshold": "3s"},
			wantItems: []string{
				"pod_startup p99 10.7s > 3s (all pods, 12 pods)",
				"pod_startup p99 10.7s > 3s (stateless, 10 pods)",
				"pod_startup p99 4.45s > 3s (stateful, 2 pods)",
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
		// perfdash keeps a test's files while their version is the one
		// clusterloader2 writes for phase latencies.
		if pd := perfdashReads(t, s); pd[0].Version != "1.0" || len(pd[0].Items) != len(podStartupTransitions) {
			t.Errorf("%s as perfdash reads it: version %q, %d items", s.Name, pd[0].Version, len(pd[0].Items))
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
	ms := time.Millisecond
	// The slowest pod, stateless-10: every stamp seen within its second.
	wantFirst := slowestPodLine{
		Namespace: trackerTestNS, Name: "stateless-10", Node: "node-1", Stateless: true,
		Created: at(500 * ms), Scheduled: at(1100 * ms), ScheduledBy: "condition",
		Running: at(11200 * ms), Watched: at(11200 * ms),
		TransitionsMs: map[string]float64{
			"create_to_schedule": 600, "schedule_to_run": 10100, "run_to_watch": 0,
			"schedule_to_watch": 10100, "create_to_run": 10700, "pod_startup": 10700,
		},
	}
	if !reflect.DeepEqual(lines[0], wantFirst) {
		t.Errorf("slowest pod\n got %+v\nwant %+v", lines[0], wantFirst)
	}
	// stateful-01, its start seen after the second of its stamp: running
	// is that second's last millisecond.
	wantStateful := slowestPodLine{
		Namespace: trackerTestNS, Name: "stateful-01", Node: "node-1", Stateless: false,
		Created: at(1050 * ms), Scheduled: at(2200 * ms), ScheduledBy: "condition",
		Running: at(4999 * ms), Watched: at(5500 * ms),
		TransitionsMs: map[string]float64{
			"create_to_schedule": 1150, "schedule_to_run": 2799, "run_to_watch": 501,
			"schedule_to_watch": 3300, "create_to_run": 3949, "pod_startup": 4450,
		},
	}
	if !reflect.DeepEqual(lines[7], wantStateful) {
		t.Errorf("8th slowest pod\n got %+v\nwant %+v", lines[7], wantStateful)
	}
	var order []string
	for _, l := range lines {
		order = append(order, l.Name)
	}
	// pod_startup: stateless-i 1000i+700, stateful 4450 (ties by name).
	wantOrder := []string{"stateless-10", "stateless-09", "stateless-08", "stateless-07", "stateless-06", "stateless-05",
		"stateless-04", "stateful-01", "stateful-02", "stateless-03", "stateless-02", "stateless-01"}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("slowest pods order %v, want %v", order, wantOrder)
	}
}

// TestPodStartupLatencyRefinedStamps shows what narrowing the stamps with
// the tracker's sightings buys: a pod bound at 10:00:01 (stamp), seen bound
// at 10:00:01.900, whose containers started at 10:00:03 (stamp), seen
// running at 10:00:03.950, started in 3950-1900 = 2050 ms. The stamps alone
// say 3000-1000 = 2000 ms, and the same 2050 ms start 50 ms later (bound at
// :01.950, started at :04.000, stamped :01 and :04) would say 3000 ms.
func TestPodStartupLatencyRefinedStamps(t *testing.T) {
	at := func(d time.Duration) time.Time { return trackerT0.Add(d) }
	ms := time.Millisecond
	env, client, clock := newTrackerTestEnv()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := &podStartupLatency{identifier: "PSL"}
	if _, err := m.Execute(ctx, env, Params{"action": "start", "namespace": trackerTestNS}); err != nil {
		t.Fatal(err)
	}
	pod := trackerTestPod("p", at(0), false)
	steps := []struct {
		seen   time.Duration
		update func()
		done   func(podTimes) bool
	}{
		// Created at 10:00:00 (stamp), seen at 10:00:00.500.
		{500 * ms, func() { trackerCreatePod(t, client, pod) }, func(p podTimes) bool { return !p.Created.IsZero() }},
		{1900 * ms, func() {
			trackerSchedulePod(pod, at(time.Second))
			trackerUpdatePod(t, client, pod)
		}, func(p podTimes) bool { return !p.Scheduled.IsZero() }},
		{3950 * ms, func() {
			trackerRunPod(pod, at(3*time.Second), at(3*time.Second))
			trackerUpdatePod(t, client, pod)
		}, func(p podTimes) bool { return !p.Watched.IsZero() }},
	}
	for _, s := range steps {
		clock.SetTime(at(s.seen))
		s.update()
		waitTracked(t, m.tracker, fmt.Sprintf("the update seen at +%s", s.seen), func(pods map[string]podTimes, _ int) bool { return s.done(pods["p"]) })
	}
	summaries, err := m.Execute(ctx, env, Params{"action": "gather"})
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	if len(summaries) != 3 || summaries[0].Verdict != Pass {
		t.Fatalf("summaries %+v", summaries)
	}
	// created 0.5s, scheduled 1.9s, running = watched 3.95s (from T0).
	want := map[string]float64{
		"create_to_schedule": 1400, "schedule_to_run": 2050, "run_to_watch": 0,
		"schedule_to_watch": 2050, "create_to_run": 3450, "pod_startup": 3450,
	}
	got := map[string]float64{}
	for _, it := range summaries[0].PerfData.DataItems {
		if it.Data["Perc50"] != it.Data["Perc99"] {
			t.Errorf("%s: one pod, yet p50 %v != p99 %v", it.Labels["Metric"], it.Data["Perc50"], it.Data["Perc99"])
		}
		got[it.Labels["Metric"]] = it.Data["Perc50"]
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("transitions\n got %v\nwant %v", got, want)
	}
	var lines []slowestPodLine
	if err := json.Unmarshal(summaries[0].Files["PodStartupLatency_PSL_slowest_pods.json"], &lines); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0].TransitionsMs["schedule_to_run"] != 2050 ||
		!lines[0].Scheduled.Equal(at(1900*ms)) || !lines[0].Running.Equal(at(3950*ms)) {
		t.Fatalf("slowest pods %+v, want schedule_to_run 2050 from 10:00:01.900 to 10:00:03.950", lines)
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
		// wantEmpty are the summaries whose group had no pod: not
		// measured, but no SLO left unjudged.
		wantEmpty []bool
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
			wantEmpty:    []bool{false, false, true},
		},
		{
			name: "only stateful pods: the stateless summary is not measured, the call passes",
			pods: 2, run: true, stateful: true,
			wantVerdicts: []Verdict{Pass, NotMeasured, Pass},
			wantReasons:  []string{"", "no stateless pods among the 2 pods", ""},
			wantEmpty:    []bool{false, true, false},
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
					clock.SetTime(trackerT0.Add(2 * time.Second))
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
				if s.Empty != tc.wantEmpty[i] {
					t.Errorf("summary %d %q: empty %v, want %v", i, s.Name, s.Empty, tc.wantEmpty[i])
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
