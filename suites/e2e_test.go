package suites_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kscale/kscale/controlplane"
	"github.com/kscale/kscale/framework/executor"
	"github.com/kscale/kscale/framework/provider/local"
	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/framework/report/htmlcheck"
	"github.com/kscale/kscale/framework/report/perfdashcheck"
	"github.com/kscale/kscale/framework/runner"
	"github.com/kscale/kscale/measurements"
	"github.com/kscale/kscale/measurements/metrics"
)

// The CI-sized density run: 20 fleet nodes, 10 saturation pods per node,
// the small overrides (few latency pods, quickly).
var ciArgs = []string{"--nodes=20", "--pods-per-node=10", "--nodes-per-fleet=10", "--testoverrides=../../configs/density/overrides/small.yaml"}

// suiteBinary builds a suite's test binary (density, load, apilatency)
// once.
func suiteBinary(t testing.TB, suite string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if binDir == "" {
		dir, err := os.MkdirTemp("", "kscale-suite-bin-")
		if err != nil {
			t.Fatal(err)
		}
		binDir = dir
	}
	path := filepath.Join(binDir, suite+".test")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	out, err := exec.Command("go", "test", "-c", "-o", path, "./"+suite).CombinedOutput()
	if err != nil {
		t.Fatalf("building the %s suite: %v\n%s", suite, err, out)
	}
	return path
}

// suiteRun is one run of the suite binary.
type suiteRun struct {
	cmd       *exec.Cmd
	reportDir string
	logPath   string
	done      chan struct{}
	exitCode  int
}

// startSuite starts the density suite at CI size with more args.
func startSuite(t testing.TB, args ...string) *suiteRun {
	t.Helper()
	return startSuiteArgs(t, append(append([]string{}, ciArgs...), args...))
}

// startSuiteArgs starts the density suite with args.
func startSuiteArgs(t testing.TB, args []string) *suiteRun {
	t.Helper()
	return startNamedSuite(t, "density", args)
}

// startNamedSuite starts a suite with args, its output in a log file beside
// the report folder (the test binary runs in suites/<suite>, as go test
// would run it).
func startNamedSuite(t testing.TB, suite string, args []string) *suiteRun {
	t.Helper()
	bin := suiteBinary(t, suite)
	r := &suiteRun{reportDir: filepath.Join(t.TempDir(), "report"), done: make(chan struct{})}
	r.logPath = r.reportDir + ".log"
	log, err := os.Create(r.logPath)
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"-test.v", "-ginkgo.v", "--report-dir=" + r.reportDir,
		"-ginkgo.junit-report=" + r.reportDir + "/ginkgo-junit.xml"}
	r.cmd = exec.Command(bin, append(all, args...)...)
	r.cmd.Dir = suite
	r.cmd.Stdout, r.cmd.Stderr = log, log
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(r.done)
		defer log.Close()
		err := r.cmd.Wait()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			r.exitCode = exit.ExitCode()
		} else if err != nil {
			r.exitCode = -1
		}
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = r.cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

// wait waits for the suite to exit and returns its exit code.
func (r *suiteRun) wait(t testing.TB, limit time.Duration) int {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(limit):
		_ = r.cmd.Process.Kill()
		<-r.done
		t.Fatalf("the suite did not end within %s; log %s:\n%s", limit, r.logPath, r.tail())
	}
	return r.exitCode
}

// passed waits for the suite to exit 0 and returns its summary.json, which
// must say the run passed and was complete.
func (r *suiteRun) passed(t testing.TB, limit time.Duration) *report.Run {
	t.Helper()
	if code := r.wait(t, limit); code != 0 {
		t.Fatalf("exit code %d, want 0; log %s:\n%s%s", code, r.logPath, r.tail(), r.slowestPods())
	}
	run, err := report.ReadRun(r.reportDir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Verdict != report.RunPass || run.Incomplete {
		t.Fatalf("summary.json: verdict %s, incomplete %v", run.Verdict, run.Incomplete)
	}
	return run
}

// slowestPods is the start of each slowest-pods file the run wrote, so that
// a failed run says which pods were late and in which transition; the
// report goes with the test's directory.
func (r *suiteRun) slowestPods() string {
	files, _ := filepath.Glob(filepath.Join(r.reportDir, "*_slowest_pods.json"))
	var b strings.Builder
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if len(data) > 2000 {
			data = data[:2000]
		}
		fmt.Fprintf(&b, "\n%s:\n%s", filepath.Base(f), data)
	}
	return b.String()
}

func (r *suiteRun) tail() string {
	data, _ := os.ReadFile(r.logPath)
	if len(data) > 6000 {
		data = data[len(data)-6000:]
	}
	return string(data)
}

type junit struct {
	Suites []struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junit {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j junit
	if err := xml.Unmarshal(data, &j); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(j.Suites) == 0 {
		t.Fatalf("%s: no test suite", path)
	}
	for _, s := range j.Suites {
		if s.Tests != len(s.Cases) {
			t.Fatalf("%s: tests=%d but %d test cases", path, s.Tests, len(s.Cases))
		}
	}
	return j
}

// checkPerfData parses every report file of the report folder: by
// perfdash's rules the files perfdash reads (their shapes are
// clusterloader2's), the others as PerfData. It returns their count.
func checkPerfData(t *testing.T, dir string, run *report.Run) int {
	t.Helper()
	n := 0
	for _, m := range run.Measurements {
		if m.PerfDataFile == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, m.PerfDataFile))
		if err != nil {
			t.Fatalf("report file of %s: %v", m.Name, err)
		}
		n++
		if parsers := perfdashcheck.Parsers(m.Name); len(parsers) > 0 {
			for _, p := range parsers {
				if _, err := perfdashcheck.Parse(p, data); err != nil {
					t.Fatalf("%s by perfdash's %s: %v", m.PerfDataFile, p, err)
				}
			}
			continue
		}
		var pd metrics.PerfData
		if err := json.Unmarshal(data, &pd); err != nil || pd.Version == "" {
			t.Fatalf("PerfData %s: version %q, %v", m.PerfDataFile, pd.Version, err)
		}
	}
	return n
}

func TestDensitySuitePassesOnTheLocalProvider(t *testing.T) {
	r := startSuite(t)
	run := r.passed(t, 20*time.Minute)
	if c := run.Cluster; c.Provider != "local" || c.Nodes != 20 || c.Hollow == nil || c.Hollow.Nodes != 20 ||
		c.Hollow.Processes != 2 || c.Hollow.RSSBytes <= 0 || len(c.NodesReady) < 2 || c.NodesReady[len(c.NodesReady)-1].Y != 20 {
		t.Fatalf("summary.json cluster: %+v, hollow %+v", c, c.Hollow)
	}
	if len(run.Steps) == 0 || run.Steps[len(run.Steps)-1].Status != report.StepOK {
		t.Fatalf("summary.json steps: %+v", run.Steps)
	}
	if n := checkPerfData(t, r.reportDir, run); n < 3 {
		t.Fatalf("%d PerfData files, want one per summary with data (pod startup, API latency, scheduling, ...)", n)
	}
	j := readJUnit(t, filepath.Join(r.reportDir, report.JUnitFile))
	if j.Suites[0].Failures != 0 || j.Suites[0].Tests < len(run.Steps)+len(run.Measurements) {
		t.Fatalf("junit.xml: %+v", j.Suites[0])
	}
	g := readJUnit(t, filepath.Join(r.reportDir, "ginkgo-junit.xml"))
	if !hasCase(g, "[step: 01] Starting measurements") || !hasCase(g, "[measurement] PodStartupLatency_PodStartupLatency") {
		t.Fatalf("ginkgo's JUnit lacks the step and measurement specs: %+v", g)
	}
	if _, err := os.Stat(filepath.Join(r.reportDir, "generatedConfig_density.yaml")); err != nil {
		t.Fatal(err)
	}
	// The page as a person sees it: no console error, a verdict row per
	// measurement, the plots, the green badge of a pass.
	if err := htmlcheck.Report(filepath.Join(r.reportDir, report.HTMLFile), len(run.Measurements),
		htmlcheck.GreenBadge, filepath.Join(t.TempDir(), "report.png")); err != nil {
		t.Fatal(err)
	}
}

func TestDensitySuiteFailsWhenPodsStartTooSlowly(t *testing.T) {
	r := startSuite(t, "--pod-start-delay=6s")
	if code := r.wait(t, 20*time.Minute); code != 1 {
		t.Fatalf("exit code %d, want 1 (the pod startup SLO violated); log %s:\n%s", code, r.logPath, r.tail())
	}
	run, err := report.ReadRun(r.reportDir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Verdict != report.RunViolated {
		t.Fatalf("summary.json verdict %s, want violated", run.Verdict)
	}
	j := readJUnit(t, filepath.Join(r.reportDir, report.JUnitFile))
	failed := ""
	for _, c := range j.Suites[0].Cases {
		if c.Failure != nil && strings.Contains(c.Name, "PodStartupLatency") {
			failed = c.Failure.Message
		}
	}
	if !strings.Contains(failed, "pod_startup") {
		t.Fatalf("junit.xml names no violated PodStartupLatency item: %q", failed)
	}
}

// Ctrl-C while saturation pods are being created: the phase drains, the
// run's namespaces are deleted, the reports say incomplete. The cluster is
// kept so the test can look at it afterwards.
func TestDensitySuiteInterruptedCleansUp(t *testing.T) {
	r := startSuite(t, "--keep-cluster")
	clusterDir := filepath.Join(r.reportDir, "cluster")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := controlplane.Down(ctx, clusterDir); err != nil {
			t.Logf("stopping the kept cluster: %v", err)
		}
	})
	c := waitForSaturation(t, r, clusterDir)
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := r.wait(t, 5*time.Minute); code == 0 {
		t.Fatalf("exit code 0 after an interrupt; log:\n%s", r.tail())
	}
	run, err := report.ReadRun(r.reportDir)
	if err != nil {
		t.Fatalf("no summary.json after the interrupt: %v; log:\n%s", err, r.tail())
	}
	if !run.Incomplete {
		t.Fatalf("summary.json not marked incomplete: %+v", run.Steps)
	}
	if _, err := os.Stat(filepath.Join(r.reportDir, report.JUnitFile)); err != nil {
		t.Fatal(err)
	}
	ns, err := c.Client.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{LabelSelector: executor.RunLabel})
	if err != nil {
		t.Fatal(err)
	}
	if len(ns.Items) != 0 {
		t.Fatalf("%d namespaces of the run left after the interrupt", len(ns.Items))
	}
}

// waitForSaturation waits until the run has created saturation
// Deployments, and returns the kept cluster.
func waitForSaturation(t *testing.T, r *suiteRun, clusterDir string) *local.ControlPlane {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-r.done:
			t.Fatalf("the suite ended (exit %d) before the saturation phase; log:\n%s", r.exitCode, r.tail())
		case <-time.After(time.Second):
		}
		c, err := local.Attach(clusterDir, nil)
		if err != nil {
			continue
		}
		deps, err := c.Client.AppsV1().Deployments("").List(context.Background(), metav1.ListOptions{LabelSelector: executor.RunLabel})
		if err == nil && len(deps.Items) > 0 {
			return c
		}
	}
	t.Fatalf("no saturation Deployment within 10 minutes; log:\n%s", r.tail())
	return nil
}

// The existing provider on a cluster with a fleet already running: the
// run is sized for the nodes there (--nodes=0), creates only its
// namespaces, and leaves the nodes as they were. It runs as an identity
// bound to the ClusterRole of the docs alone, and no request of it is
// refused.
func TestDensitySuiteOnAnExistingCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	o := controlplane.DefaultOptions()
	o.APIServerPort = 0
	o.StopWithCaller = true
	c, err := local.Start(ctx, filepath.Join(t.TempDir(), "cluster"), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	fleet, err := c.StartFleet(ctx, local.FleetOptions{Group: "existing", Nodes: 12})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Stop() })
	if err := local.WaitNodesReady(ctx, c.Client, local.HollowLabel+"=existing", 12, nil); err != nil {
		t.Fatal(err)
	}
	// Ready comes a moment before the node lifecycle controller lifts the
	// not-ready taint; only then are the nodes schedulable.
	for n := 0; n != 12; {
		if n, err = runner.SchedulableNodes(ctx, c.Config); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	kubeconfig := restrictedKubeconfig(ctx, t, c.Client, c.Config)
	r := startSuite(t, "--provider=existing", "--kubeconfig="+kubeconfig, "--nodes=0")
	if code := r.wait(t, 20*time.Minute); code != 0 {
		t.Fatalf("exit code %d, want 0; log %s:\n%s%s", code, r.logPath, r.tail(), r.slowestPods())
	}
	if log, err := os.ReadFile(r.logPath); err != nil || strings.Contains(string(log), "forbidden") {
		t.Fatalf("a request of the run was refused (or the log is unreadable: %v); log %s:\n%s", err, r.logPath, r.tail())
	}
	run, err := report.ReadRun(r.reportDir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Verdict != report.RunPass || run.Cluster.Provider != "existing" || run.Cluster.Nodes != 12 || run.Cluster.Hollow != nil {
		t.Fatalf("summary.json: verdict %s, cluster %+v", run.Verdict, run.Cluster)
	}
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := 0
	for i := range nodes.Items {
		if local.NodeReady(&nodes.Items[i]) {
			ready++
		}
	}
	if len(nodes.Items) != 12 || ready != 12 {
		t.Fatalf("after the run: %d nodes, %d Ready; want the fleet's 12 untouched", len(nodes.Items), ready)
	}
	ns, err := c.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: executor.RunLabel})
	if err != nil || len(ns.Items) != 0 {
		t.Fatalf("namespaces of the run left: %v, %v", ns, err)
	}
}

func hasCase(j junit, substr string) bool {
	for _, s := range j.Suites {
		for _, c := range s.Cases {
			if strings.Contains(c.Name, substr) {
				return true
			}
		}
	}
	return false
}

// `go tool ginkgo ./suites/density -- FLAGS` reaches the suite's flags:
// the ginkgo CLI runs a package as a Ginkgo suite (passing what follows
// `--`) only when its tests import Ginkgo. A bad --nodes proves the flag
// arrived; the CLI reports every failing suite as exit 1.
func TestGinkgoCLIPassesTheSuiteFlags(t *testing.T) {
	cmd := exec.Command("go", "tool", "ginkgo", "./density", "--", "--nodes=-3")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(string(out), "--nodes=-3: must be 0 or more") {
		t.Fatalf("ginkgo with --nodes=-3: %v\n%s", err, out)
	}
}

// TestLoadAndAPILatencySuitesPassAtTwentyNodes runs the load and the
// apilatency suite as a nightly job would, on 20 fleet nodes with their
// small overrides, to the end: each fits the nodes it is given (their
// configs size themselves from --nodes) and passes, with every SLO it
// names measured.
func TestLoadAndAPILatencySuitesPassAtTwentyNodes(t *testing.T) {
	for _, suite := range []string{"load", "apilatency"} {
		t.Run(suite, func(t *testing.T) {
			r := startNamedSuite(t, suite, []string{"--nodes=20", "--nodes-per-fleet=10",
				"--testoverrides=../../configs/" + suite + "/overrides/small.yaml"})
			run := r.passed(t, 25*time.Minute)
			if run.Cluster.Nodes != 20 {
				t.Fatalf("summary.json: nodes %d, want 20", run.Cluster.Nodes)
			}
			for _, s := range run.Steps {
				if s.Status != report.StepOK {
					t.Errorf("step %q: %s %v", s.Name, s.Status, s.Errors)
				}
			}
			for _, m := range run.Measurements {
				if m.UnmeasuredSLO() {
					t.Errorf("%s not measured: %s", m.Name, m.Reason)
				}
			}
		})
	}
}

// TestClusterloader2ShapedConfigRunsToTheEnd runs testdata/cl2-shaped, a
// config written as clusterloader2's testing/load is, on 20 fleet nodes
// whose Job pods run 5 s: its modules name each other by paths relative
// to the config's folder, its arithmetic truncates fractions, a Service
// template uses a key no fill map sets (a warning, not a refusal), its
// ReplicationControllers' pods go with them when deleted, and its Jobs
// finish. Each of these, read otherwise, fails the run.
func TestClusterloader2ShapedConfigRunsToTheEnd(t *testing.T) {
	r := startNamedSuite(t, "load", []string{"--nodes=20", "--nodes-per-fleet=10",
		"--testconfig=../testdata/cl2-shaped/config.yaml", "--hollow-arg=--job-pod-run-duration=5s"})
	run := r.passed(t, 15*time.Minute)
	var steps []string
	for _, s := range run.Steps {
		steps = append(steps, s.Name)
		if s.Status != report.StepOK {
			t.Errorf("step %q: %s %v", s.Name, s.Status, s.Errors)
		}
	}
	want := []string{"start measurements", "Creating objects", "Waiting for the objects to be running",
		"Pausing APIAvailability measurement", "Pausing SystemPodMetrics restart counts",
		"Restart kube-apiserver and wait for /readyz", "Unpausing SystemPodMetrics restart counts",
		"Unpausing APIAvailability measurement",
		"gather measurements", "Deleting objects", "Waiting for the objects to be gone"}
	if !slices.Equal(steps, want) {
		t.Errorf("steps %q, want %q", steps, want)
	}
	passed := map[string]bool{}
	for _, m := range run.Measurements {
		switch m.Verdict {
		case measurements.Pass:
			passed[m.Method], passed[m.Name] = true, true
		case measurements.Violated, measurements.Failed:
			t.Errorf("%s: %s %s %v", m.Name, m.Verdict, m.Reason, m.Violations)
		}
	}
	for _, m := range []string{"PodStartupLatency", "WaitForFinishedJobs", "RestartApiserver", "APIAvailability", "SchedulingThroughput",
		"ClusterOOMsTracker", "MetricsForE2E", "EtcdMetrics", "SchedulingMetrics"} {
		if !passed[m] {
			t.Errorf("no summary of %s passed", m)
		}
	}
	// Every file perfdash has a parser for parses by that parser's rules.
	read, err := perfdashcheck.CheckDir(r.reportDir, "cl2-shaped")
	if err != nil {
		t.Error(err)
	}
	for _, name := range []string{"PodStartupLatency_PodStartupLatency", "SchedulingThroughput", "APIResponsivenessPrometheus_simple",
		"ContainerRestarts", "ResourceUsageSummary", "SchedulingMetrics", "EtcdMetrics", "SystemPodMetrics", "MetricsForE2E"} {
		if len(read[name]) == 0 {
			t.Errorf("no %s file perfdash reads in %s", name, r.reportDir)
		}
	}
	generated, err := os.ReadFile(filepath.Join(r.reportDir, "generatedConfig_cl2-shaped.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"max: 2\n", "Replicas: 10\n", "qps: 11\n"} {
		if !strings.Contains(string(generated), s) {
			t.Errorf("generated config lacks %q:\n%s", s, generated)
		}
	}
	log, err := os.ReadFile(r.logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), `service.yaml:9:6: at <.HeadlessService>: map has no entry for key "HeadlessService"`) {
		t.Errorf("no warning of HeadlessService in the log %s", r.logPath)
	}
}

// TestTestSuiteEntriesShareOneCluster runs a clusterloader2 test suite file
// in a Ginkgo suite: each entry's config with its own overrides, one after
// another on the one provisioned cluster, each in its own report folder and
// Ginkgo container, and one junit.xml with a testsuite per entry.
func TestTestSuiteEntriesShareOneCluster(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"config.yaml": "{{$d := DefaultParam .DURATION \"1ms\"}}\nname: {{.NAME}}\nsteps:\n" +
			"- name: sleep {{$d}} on {{.Nodes}} nodes\n  measurements:\n  - {Method: Sleep, Identifier: s, Params: {duration: {{$d}}}}\n",
		"a.yaml": "NAME: first\n",
		"b.yaml": "NAME: second\nDURATION: 300ms\n",
	}
	files["suite.yaml"] = fmt.Sprintf("- identifier: one\n  configPath: %[1]s/config.yaml\n  overridePaths: [%[1]s/a.yaml]\n"+
		"- identifier: two\n  configPath: %[1]s/config.yaml\n  overridePaths: [%[1]s/b.yaml]\n", dir)
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := startNamedSuite(t, "load", []string{"--nodes=2", "--testsuite=" + filepath.Join(dir, "suite.yaml")})
	if code := r.wait(t, 10*time.Minute); code != 0 {
		t.Fatalf("exit code %d; log %s:\n%s", code, r.logPath, r.tail())
	}
	log, err := os.ReadFile(r.logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"load/one: verdict PASS", "load/two: verdict PASS", "provisioning 2 nodes"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	if n := strings.Count(string(log), "provisioning 2 nodes"); n != 1 {
		t.Errorf("provisioned %d times, want once for both entries", n)
	}
	for _, f := range []string{"one/generatedConfig_first.yaml", "two/generatedConfig_second.yaml", "one/summary.json", "two/report.html"} {
		if _, err := os.Stat(filepath.Join(r.reportDir, f)); err != nil {
			t.Error(err)
		}
	}
	gen, err := os.ReadFile(filepath.Join(r.reportDir, "two/generatedConfig_second.yaml"))
	if err != nil || !strings.Contains(string(gen), "sleep 300ms on 2 nodes") {
		t.Errorf("entry two's config: %v\n%s", err, gen)
	}
	j := readJUnit(t, filepath.Join(r.reportDir, report.JUnitFile))
	if len(j.Suites) != 2 || j.Suites[0].Failures != 0 || j.Suites[1].Failures != 0 {
		t.Errorf("junit.xml: want a passing testsuite per entry, got %+v", j.Suites)
	}
	var specs []string
	for _, s := range readJUnit(t, filepath.Join(r.reportDir, "ginkgo-junit.xml")).Suites {
		for _, c := range s.Cases {
			specs = append(specs, c.Name)
		}
	}
	for entry, step := range map[string]string{"one": "[step: 01] sleep 1ms on 2 nodes", "two": "[step: 01] sleep 300ms on 2 nodes"} {
		if !slices.ContainsFunc(specs, func(s string) bool { return strings.Contains(s, " "+entry+" ") && strings.Contains(s, step) }) {
			t.Errorf("no spec %q in entry %s's container: %q", step, entry, specs)
		}
	}
}
