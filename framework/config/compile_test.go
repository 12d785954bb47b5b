package config

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The methods the density sample names, as a measurement registry would
// list them.
var densityMethods = map[string]bool{
	"APIResponsivenessPrometheus": true, "TestMetrics": true, "PodStartupLatency": true,
	"WaitForControlledPodsRunning": true, "SchedulingThroughput": true,
}

func compileDensity(t *testing.T, env ...string) *Compiled {
	t.Helper()
	c, err := Compile(filepath.Join("testdata", "density", "config.yaml"),
		Options{Nodes: 300, Environ: env, KnownMethods: densityMethods})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDensitySample(t *testing.T) {
	c := compileDensity(t, "CL2_DENSITY_RESYNC_PERIOD=2m", "PATH=/bin")
	cfg := c.Config
	if cfg.Name != "density" || cfg.Namespace.Number != 3 {
		t.Fatalf("name %q, namespaces %d", cfg.Name, cfg.Namespace.Number)
	}
	if len(cfg.TuningSets) != 2 || cfg.TuningSets[0].QPSLoad.QPS != 5 ||
		cfg.TuningSets[1].RandomizedTimeLimitedLoad.TimeLimit.Std().Seconds() != 630 {
		t.Fatalf("tuning sets %+v", cfg.TuningSets)
	}
	if cfg.ChaosMonkey.NodeFailure != nil {
		t.Errorf("chaos monkey on by default")
	}
	wantSteps := []string{
		"Starting measurements",
		"Starting saturation pod measurements",
		"Creating saturation pods",
		"Waiting for saturation pods to be running",
		"Collecting saturation pod measurements",
		"Starting latency pod measurements", // from modules/latency.yaml
		"Creating latency pods",
		"Waiting for WaitForRunningLatencyDeployments in 3 namespaces", // modules/wait.yaml, nested
		"Deleting latency pods",
		"Deleting saturation pods",
		"Collecting measurements",
	}
	if got := stepNames(cfg); !reflect.DeepEqual(got, wantSteps) {
		t.Fatalf("steps\n got %q\nwant %q", got, wantSteps)
	}

	start := cfg.Steps[0].Measurements
	if len(start) != 2 || start[1].Method != "TestMetrics" || start[1].Params["resyncPeriod"] != "2m" {
		t.Errorf("starting measurements %+v", start)
	}
	sat := cfg.Steps[1].Measurements[1]
	if sat.Identifier != "WaitForRunningSaturationDeployments" || sat.Params["operationTimeout"] != "1200s" {
		t.Errorf("saturation wait %+v", sat)
	}
	phase := cfg.Steps[2].Phases[0]
	wantPhase := Phase{
		NamespaceRange:       &NamespaceRange{Min: 1, Max: 3},
		ReplicasPerNamespace: 1,
		TuningSet:            "Uniform5qps",
		ObjectBundle: []Object{{
			Basename: "saturation-deployment", ObjectTemplatePath: "deployment.yaml",
			TemplateFillMap: map[string]any{"Replicas": 3000, "Group": "saturation", "CpuRequest": "1m", "MemoryRequest": "10M"},
		}},
	}
	if !reflect.DeepEqual(phase, wantPhase) {
		t.Errorf("saturation phase\n got %+v\nwant %+v", phase, wantPhase)
	}
	wrapped := cfg.Steps[5].Measurements[1]
	wantWrapped := Measurement{
		Method:    "WaitForControlledPodsRunning",
		Params:    map[string]any{"action": "start", "apiVersion": "apps/v1", "labelSelector": "group = latency", "operationTimeout": "15m"},
		Instances: []MeasurementInstance{{Identifier: "WaitForRunningLatencyDeployments", Params: map[string]any{"kind": "Deployment"}}},
	}
	if !reflect.DeepEqual(wrapped, wantWrapped) {
		t.Errorf("wrapped measurement\n got %+v\nwant %+v", wrapped, wantWrapped)
	}
	if r := cfg.Steps[6].Phases[0].ReplicasPerNamespace; r != 166 {
		t.Errorf("latency replicas %d, want 166", r)
	}

	// The generated YAML is the expanded config in the canonical spelling:
	// a plain yaml.v3 decode reads the same steps back.
	var again Config
	if err := yaml.Unmarshal(c.YAML, &again); err != nil {
		t.Fatalf("generated YAML: %v", err)
	}
	if !reflect.DeepEqual(again.Steps, cfg.Steps) {
		t.Errorf("generated YAML decodes to other steps:\n%s", c.YAML)
	}
	if c.Mapping["Nodes"] != 300 || c.Mapping["CL2_DENSITY_RESYNC_PERIOD"] != "2m" {
		t.Errorf("mapping %v", c.Mapping)
	}
	if _, ok := c.Rendered[filepath.Join("testdata", "density", "config.yaml")+" (rendered)"]; !ok {
		t.Errorf("Rendered has %v", reflect.ValueOf(c.Rendered).MapKeys())
	}
}

func TestDensitySampleOptions(t *testing.T) {
	c := compileDensity(t, "CL2_ENABLE_CHAOSMONKEY=true", "CL2_USE_SIMPLE_LATENCY_QUERY=true")
	if nf := c.Config.ChaosMonkey.NodeFailure; nf == nil || nf.FailureRate != 0.01 || nf.SimulatedDowntime.Std().Minutes() != 10 {
		t.Errorf("chaos monkey %+v", c.Config.ChaosMonkey)
	}
	ms := c.Config.Steps[0].Measurements
	if len(ms) != 3 || ms[1].Identifier != "APIResponsivenessPrometheusSimple" || ms[1].Params["useSimpleLatencyQuery"] != true {
		t.Errorf("starting measurements %+v", ms)
	}
}

func TestRenderObject(t *testing.T) {
	c := compileDensity(t)
	obj := c.Config.Steps[2].Phases[0].ObjectBundle[0]
	ns := c.Config.Namespace.Prefix + "-1"
	out, err := c.RenderObject(obj.ObjectTemplatePath, ObjectVars{
		Name: "saturation-deployment-2", Index: 2, Namespace: ns, BaseName: obj.Basename, TemplateFillMap: obj.TemplateFillMap,
	})
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Kind     string
		Metadata struct {
			Name   string
			Labels map[string]string
		}
		Spec struct {
			Replicas int
			Template struct {
				Metadata struct{ Labels map[string]string }
				Spec     struct {
					Containers []struct{ Image, Name string }
				}
			}
		}
	}
	if err := yaml.Unmarshal(out, &d); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if d.Kind != "Deployment" || d.Metadata.Name != "saturation-deployment-2" || d.Metadata.Labels["group"] != "saturation" ||
		d.Spec.Replicas != 3000 || d.Spec.Template.Metadata.Labels["index"] != "2" ||
		d.Spec.Template.Spec.Containers[0].Image != "registry.k8s.io/pause:3.10" || d.Spec.Template.Spec.Containers[0].Name != "saturation-deployment" {
		t.Errorf("rendered %+v from\n%s", d, out)
	}

	// A deletion renders without the fill map; a creation must not.
	if _, err := c.RenderObject("/deployment.yaml", ObjectVars{Name: "x-0", BaseName: "x", Lenient: true}); err != nil {
		t.Errorf("lenient render: %v", err)
	}
	// A key nobody set renders empty, as in clusterloader2, and is warned
	// of; --strict-templates makes it an error.
	out, err = c.RenderObject("deployment.yaml", ObjectVars{Name: "x-0", BaseName: "x"})
	if err != nil || !strings.Contains(string(out), "group: <no value>") {
		t.Errorf("render without the fill map: %v\n%s", err, out)
	}
	const missing = `deployment.yaml:6:14: at <.Group>: map has no entry for key "Group"`
	if w := c.Warnings(); len(w) != 1 || !strings.Contains(w[0].Error(), missing+" (renders empty") {
		t.Errorf("warnings %v, want one on %q", w, missing)
	}
	c.r.strict = true
	_, err = c.RenderObject("deployment.yaml", ObjectVars{Name: "x-0", BaseName: "x"})
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("strict render error %v, want %q", err, missing)
	}
	if _, err := c.RenderObject("missing.yaml", ObjectVars{}); err == nil || !strings.Contains(err.Error(), `cannot read "missing.yaml"`) {
		t.Errorf("missing template error %v", err)
	}

	// The executor renders from many goroutines.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			out, err := c.RenderObject("deployment.yaml", ObjectVars{
				Name: fmt.Sprintf("d-%d", i), Index: i, BaseName: "d", TemplateFillMap: obj.TemplateFillMap, Lenient: i%2 == 0,
			})
			if err == nil && !strings.Contains(string(out), fmt.Sprintf("name: d-%d\n", i)) {
				err = fmt.Errorf("render %d:\n%s", i, out)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Object templates see the mapping, then the fill map, then the object's
// own values; they can include files, embedded ones with the object's data.
func TestRenderObjectValues(t *testing.T) {
	c, err := compileFiles(t, map[string]string{
		"config.yaml":     "name: v\n" + tuning + "steps:\n- measurements: [{method: Sleep, identifier: s}]\n",
		"over.yaml":       "ImageRegistry: my.registry\nShared: mapping\nName: not-this\n",
		"obj.yaml":        "kind: ConfigMap\napiVersion: v1\nmetadata: {name: {{.Name}}, namespace: {{.Namespace}}}\ndata:\n  image: {{.ImageRegistry}}/x\n  shared: {{.Shared}}\n  extra: {{IncludeEmbedFile \"parts/extra.txt\"}}\n",
		"parts/extra.txt": "'{{.Name}}'",
	}, Options{Overrides: []string{"over.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.RenderObject("obj.yaml", ObjectVars{Name: "o-4", Index: 4, Namespace: "ns", BaseName: "o", TemplateFillMap: map[string]any{"Shared": "fill"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"name: o-4, namespace: ns", "image: my.registry/x", "shared: fill", "extra: '{{.Name}}'"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("rendered object lacks %q:\n%s", want, out)
		}
	}
}

// Fields of clusterloader2's api types that its configs still write.
func TestClusterloader2Fields(t *testing.T) {
	steps := "steps:\n- measurements: [{method: Sleep, identifier: s}]\n"
	c, err := compileFiles(t, map[string]string{
		"config.yaml": "name: old\nautomanagedNamespaces: 3\ntuningSets:\n- name: Late\n  initialDelay: 2s\n  qpsLoad: {qps: 5}\n" + steps,
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Config.Namespace.Number; n != 3 {
		t.Errorf("automanagedNamespaces 3 gave namespace.number %d", n)
	}
	if d := c.Config.TuningSets[0].InitialDelay.Std(); d != 2*time.Second {
		t.Errorf("initialDelay %v, want 2s", d)
	}

	_, err = compileFiles(t, map[string]string{
		"config.yaml": "name: both\nautomanagedNamespaces: 3\nnamespace: {number: 2}\ntuningSets:\n- name: Late\n  initialDelay: -1s\n  qpsLoad: {qps: 5}\n" + steps,
	}, Options{})
	want := []string{
		"config.yaml:2:24: automanagedNamespaces: 3 disagrees with namespace.number 2 (it is the older name of the same thing)",
		"config.yaml:6:17: tuningSets[0].initialDelay: must not be negative, got -1s",
	}
	if got := errorLines(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("errors\n%q\nwant\n%q", got, want)
	}
}

// A key nobody set renders as clusterloader2 renders it — empty in an
// {{if}}, "<no value>" when printed — and each use is warned of once, with
// where it is; --strict-templates refuses the config instead.
func TestMissingKeysAreWarnings(t *testing.T) {
	files := map[string]string{
		"config.yaml": "name: m\nnamespace: {number: 1}\n" + tuning + "steps:\n- name: token {{.CL2_TOKEN}}\n" +
			"  phases:\n  - namespaceRange: {min: 1, max: 1}\n    replicasPerNamespace: 1\n    tuningSet: Uniform5qps\n" +
			"    objectBundle:\n    - {basename: svc, objectTemplatePath: service.yaml}\n" +
			"- module: {path: modules/m.yaml}\n",
		"modules/m.yaml": "steps:\n- name: proto {{.CL2_PROTOCOL}}\n  measurements: [{method: Sleep, identifier: s}]\n",
		"service.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{.Name}}\nspec:\n" +
			"{{if .HeadlessService}}\n  clusterIP: None\n{{end}}\n  ports: [{port: 80}]\n",
	}
	c, err := compileFiles(t, files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := stepNames(c.Config); !reflect.DeepEqual(got, []string{"token <no value>", "proto <no value>"}) {
		t.Errorf("steps %q", got)
	}
	out, err := c.RenderObject("service.yaml", ObjectVars{Name: "svc-0", Namespace: "ns", BaseName: "svc"})
	if err != nil || strings.Contains(string(out), "clusterIP") {
		t.Errorf("service rendered with a missing HeadlessService: %v\n%s", err, out)
	}
	var got []string
	for _, w := range c.Warnings() {
		got = append(got, strings.SplitN(w.Error(), " (renders empty", 2)[0])
	}
	want := []string{
		`config.yaml:8:17: at <.CL2_TOKEN>: map has no entry for key "CL2_TOKEN"`,
		`modules/m.yaml:2:17: at <.CL2_PROTOCOL>: map has no entry for key "CL2_PROTOCOL"`,
		`service.yaml:6:6: at <.HeadlessService>: map has no entry for key "HeadlessService"`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings\n%q\nwant\n%q", got, want)
	}

	_, err = compileFiles(t, files, Options{StrictTemplates: true})
	if err == nil || !strings.Contains(err.Error(), want[0]) {
		t.Errorf("strict compile: %v, want %q", err, want[0])
	}
}
