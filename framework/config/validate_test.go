package config

import (
	"reflect"
	"strings"
	"testing"
)

const head = "name: v\nnamespace: {number: 3}\ntuningSets: [{name: T, qpsLoad: {qps: 1}}]\nsteps:\n"

const configMapTemplate = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{.Name}}\ndata:\n  v: \"{{.Foo}}\"\n"

func TestValidationErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		opts  Options
		want  []string
	}{
		{
			name: "unknown tuning set",
			files: map[string]string{"config.yaml": head +
				"- phases:\n  - namespaceRange: {min: 1, max: 1}\n    tuningSet: Fast\n"},
			want: []string{`config.yaml:7:16: steps[0].phases[0].tuningSet: unknown tuning set "Fast" (defined: T)`},
		},
		{
			name: "missing tuning set",
			files: map[string]string{"config.yaml": head +
				"- phases:\n  - namespaceRange: {min: 1, max: 1}\n"},
			want: []string{`config.yaml:6:5: steps[0].phases[0].tuningSet: required (defined: T)`},
		},
		{
			name:  "step with nothing",
			files: map[string]string{"config.yaml": head + "- name: empty\n"},
			want:  []string{"config.yaml:5:3: steps[0]: a step needs exactly one of phases, measurements or module; found none"},
		},
		{
			name:  "step with phases and measurements",
			files: map[string]string{"config.yaml": head + "- name: both\n  phases: []\n  measurements: []\n"},
			want:  []string{"config.yaml:5:3: steps[0]: a step needs exactly one of phases, measurements or module; found phases and measurements"},
		},
		{
			name: "tuning sets without or with two types, duplicate, bad values",
			files: map[string]string{"config.yaml": "name: v\ntuningSets:\n" +
				"- name: Empty\n" +
				"- name: Both\n  qpsLoad: {qps: 1}\n  poissonLoad: {expectedActionsPerSecond: 2}\n" +
				"- name: Both\n  steppedLoad: {burstSize: 0, stepDelay: -1s}\n" +
				"- name: Zero\n  qpsLoad:\n    qps: 0\n" +
				"steps:\n- measurements: [{method: Sleep, identifier: s}]\n"},
			want: []string{
				`config.yaml:3:3: tuningSets[0]: tuning set "Empty" has no type; set exactly one of qpsLoad, randomizedLoad, steppedLoad, timeLimitedLoad, randomizedTimeLimitedLoad, parallelismLimitedLoad, globalQPSLoad, poissonLoad`,
				`config.yaml:4:3: tuningSets[1]: tuning set "Both" has 2 types (qpsLoad, poissonLoad); set exactly one`,
				`config.yaml:7:9: tuningSets[2].name: tuning set "Both" is defined twice`,
				`config.yaml:8:28: tuningSets[2].steppedLoad.burstSize: must be > 0, got 0`,
				`config.yaml:8:42: tuningSets[2].steppedLoad.stepDelay: must not be negative, got -1s`,
				`config.yaml:11:10: tuningSets[3].qpsLoad.qps: must be > 0, got 0`,
			},
		},
		{
			name: "namespace ranges",
			files: map[string]string{"config.yaml": head +
				"- phases:\n" +
				"  - namespaceRange:\n      min: 3\n      max: 2\n    tuningSet: T\n" +
				"  - namespaceRange: {min: 0, max: 4}\n    tuningSet: T\n" +
				"  - namespaceRange: {min: 1, max: 1}\n    namespaceList: [a]\n    tuningSet: T\n" +
				"  - namespaceRange: {min: 5, max: 9, basename: custom}\n    tuningSet: T\n"},
			want: []string{
				"config.yaml:7:7: steps[0].phases[0].namespaceRange: min 3 is greater than max 2",
				"config.yaml:10:27: steps[0].phases[1].namespaceRange.min: 0 is outside 1..3 (namespace.number)",
				"config.yaml:10:35: steps[0].phases[1].namespaceRange.max: 4 is outside 1..3 (namespace.number)",
				"config.yaml:12:5: steps[0].phases[2]: namespaceRange and namespaceList are both set; use one",
			},
		},
		{
			name: "negative replicas",
			files: map[string]string{"config.yaml": head +
				"- phases:\n  - replicasPerNamespace: -2\n    tuningSet: T\n"},
			want: []string{"config.yaml:6:27: steps[0].phases[0].replicasPerNamespace: must not be negative, got -2"},
		},
		{
			name: "measurement entries",
			files: map[string]string{"config.yaml": head +
				"- measurements:\n" +
				"  - identifier: a\n" +
				"  - method: Sleep\n    identifier: b\n    instances: [{identifier: c}]\n" +
				"  - method: Sleep\n" +
				"  - Method: Sleep\n    Instances:\n    - Params: {a: 1}\n"},
			want: []string{
				"config.yaml:6:5: steps[0].measurements[0].method: required",
				"config.yaml:7:5: steps[0].measurements[1]: set identifier or instances, not both",
				"config.yaml:10:5: steps[0].measurements[2].identifier: required (or instances, a list of {identifier, params})",
				"config.yaml:13:7: steps[0].measurements[3].instances[0].identifier: required",
			},
		},
		{
			name: "unreadable object template",
			files: map[string]string{"config.yaml": head +
				"- phases:\n  - replicasPerNamespace: 1\n    tuningSet: T\n    objectBundle:\n    - basename: a\n      objectTemplatePath: nope.yaml\n"},
			want: []string{`config.yaml:10:27: steps[0].phases[0].objectBundle[0].objectTemplatePath: cannot read "nope.yaml" (looked at *nope.yaml): no such file or directory`},
		},
		{
			name: "object fields required",
			files: map[string]string{"config.yaml": head +
				"- phases:\n  - replicasPerNamespace: 1\n    tuningSet: T\n    objectBundle:\n    - templateFillMap: {a: 1}\n"},
			want: []string{
				"config.yaml:9:7: steps[0].phases[0].objectBundle[0].basename: required (objects are named <basename>-<index>)",
				"config.yaml:9:7: steps[0].phases[0].objectBundle[0].objectTemplatePath: required",
			},
		},
		{
			name: "object template trial render, reported once per template",
			opts: Options{StrictTemplates: true},
			files: map[string]string{
				"config.yaml": head +
					"- phases:\n  - replicasPerNamespace: 1\n    tuningSet: T\n    objectBundle:\n" +
					"    - {basename: a, objectTemplatePath: cm.yaml}\n" +
					"    - {basename: b, objectTemplatePath: /cm.yaml}\n" +
					"    - {basename: c, objectTemplatePath: cm.yaml, templateFillMap: {Foo: set}}\n" +
					"    - {basename: d, objectTemplatePath: nokind.yaml}\n",
				"cm.yaml":     configMapTemplate,
				"nokind.yaml": "apiVersion: v1\nmetadata: {name: x}\n",
			},
			want: []string{
				`cm.yaml:6:9: steps[0].phases[0].objectBundle[0]: at <.Foo>: map has no entry for key "Foo" (trial render for index 0)`,
				"nokind.yaml:1:1: steps[0].phases[0].objectBundle[3]: the rendered object has no kind",
			},
		},
		{
			name: "deleting phases render object templates leniently",
			files: map[string]string{
				"config.yaml": head +
					"- phases:\n  - replicasPerNamespace: 0\n    namespaceRange: {min: 1, max: 3}\n    tuningSet: T\n    objectBundle:\n" +
					"    - {basename: a, objectTemplatePath: cm.yaml}\n" +
					"- measurements:\n  - {Method: Bogus, Identifier: x}\n",
				"cm.yaml": configMapTemplate,
			},
			want: []string{`config.yaml:12:14: steps[1].measurements[0].method: unknown measurement method "Bogus" (known: Sleep, WaitForControlledPodsRunning)`},
			opts: Options{KnownMethods: map[string]bool{"Sleep": true, "WaitForControlledPodsRunning": true, "Disabled": false}},
		},
		{
			name: "failIfNotMeasured is a boolean",
			files: map[string]string{"config.yaml": head +
				"- measurements:\n  - method: Sleep\n    identifier: a\n    params: {failIfNotMeasured: sometimes}\n" +
				"  - method: Sleep\n    identifier: b\n    params: {failIfNotMeasured: \"false\"}\n" +
				"  - method: Sleep\n    instances:\n    - identifier: c\n      params:\n        failIfNotMeasured: 2\n"},
			opts: Options{KnownMethods: map[string]bool{"Sleep": true}},
			want: []string{
				"config.yaml:8:13: steps[0].measurements[0].params.failIfNotMeasured: want true or false, got string sometimes",
				"config.yaml:16:9: steps[0].measurements[2].instances[0].params.failIfNotMeasured: want true or false, got int 2",
			},
		},
		{
			name: "unknown method with a suggestion",
			files: map[string]string{"config.yaml": head +
				"- measurements:\n  - method: PodStartupLatncy\n    identifier: x\n"},
			opts: Options{KnownMethods: map[string]bool{"PodStartupLatency": true, "Sleep": true}},
			want: []string{`config.yaml:6:13: steps[0].measurements[0].method: unknown measurement method "PodStartupLatncy" (did you mean "PodStartupLatency"?)`},
		},
		{
			name:  "name required, negative namespace number, dependencies",
			files: map[string]string{"config.yaml": "namespace: {number: -1}\ndependencies:\n- timeout: 1m\n" + tuning + "steps:\n- measurements: [{method: Sleep, identifier: s}]\n"},
			want: []string{
				"config.yaml:1:1: name: required (it names the reports)",
				"config.yaml:1:21: namespace.number: must be > 0, got -1",
				"config.yaml:3:3: dependencies[0].name: required",
				"config.yaml:3:3: dependencies[0].method: required",
			},
		},
		{
			name:  "dependency methods are refused by name",
			files: map[string]string{"config.yaml": "name: d\ndependencies:\n- name: prom\n  method: InstallPrometheus\n" + tuning + "steps:\n- measurements: [{method: Sleep, identifier: s}]\n"},
			want: []string{
				`config.yaml:4:11: dependencies[0].method: dependency method "InstallPrometheus" is not supported by kscale (it has no dependency methods yet): set it up before the run and remove the entry, or skip it with --skip-unsupported-measurements`,
			},
		},
		{
			name:  "template execution error",
			opts:  Options{StrictTemplates: true},
			files: map[string]string{"config.yaml": "name: v\n{{$x := DefaultParam .CL2_X 1}}\nsteps: {{.Steps}}\n"},
			want:  []string{`config.yaml:3:10: at <.Steps>: map has no entry for key "Steps"`},
		},
		{
			name:  "template parse error",
			files: map[string]string{"config.yaml": "name: v\n\n{{if}}\n"},
			want:  []string{"config.yaml:3:1: missing value for if"},
		},
		{
			name:  "YAML syntax error",
			files: map[string]string{"config.yaml": "name: v\nsteps:\n- a: b\n c: d\n"},
			// yaml.v3 names line 3; the mistake is the indentation of line 4.
			want: []string{"config.yaml:4:2: invalid YAML: did not find expected key"},
		},
		{
			name:  "empty config",
			files: map[string]string{"config.yaml": "{{/* nothing */}}\n"},
			want:  []string{"config.yaml: the config is empty"},
		},
		{
			name:  "not a mapping",
			files: map[string]string{"config.yaml": "- a\n"},
			want:  []string{"config.yaml:1:1: a config must be a mapping (name, namespace, tuningSets, steps, ...), got a list"},
		},
		{
			name:  "two documents",
			files: map[string]string{"config.yaml": "name: a\n---\nname: b\n"},
			want:  []string{"config.yaml:2:1: a second YAML document"},
		},
		{
			name:  "missing config",
			files: map[string]string{},
			want:  []string{"config.yaml: cannot read config: open *config.yaml: no such file or directory"},
		},
		{
			// The range adds lines, so positions are in the rendered text
			// and the file is named as rendered.
			name: "positions in rendered text when lines move",
			files: map[string]string{"config.yaml": head +
				"{{range Loop 2}}\n- measurements: [{method: Sleep, identifier: s}]\n{{end}}\n- phases:\n  - tuningSet: Fast\n"},
			want: []string{`config.yaml (rendered):11:16: steps[2].phases[0].tuningSet: unknown tuning set "Fast" (defined: T)`},
		},
		{
			name: "all problems at once",
			files: map[string]string{"config.yaml": "name: v\nnamespace: {numbr: 2}\n" + tuning +
				"steps:\n- phases:\n  - tuningSet: Fast\n    replicasPerNamespace: -1\n- measurements:\n  - identifier: x\n"},
			want: []string{
				`config.yaml:2:13: namespace: unknown field "numbr" (did you mean "number"?)`,
				`config.yaml:9:16: steps[0].phases[0].tuningSet: unknown tuning set "Fast" (defined: Uniform5qps)`,
				"config.yaml:10:27: steps[0].phases[0].replicasPerNamespace: must not be negative, got -1",
				"config.yaml:12:5: steps[1].measurements[0].method: required",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compileFiles(t, tc.files, tc.opts)
			wantErrors(t, err, tc.want...)
		})
	}
}

func TestSkipUnsupported(t *testing.T) {
	c, err := compileFiles(t, map[string]string{"config.yaml": head +
		"- measurements:\n  - {Method: Sleep, Identifier: s}\n  - Method: NetworkProgrammingLatency\n    Instances: [{Identifier: a}, {Identifier: b}]\n"},
		Options{KnownMethods: map[string]bool{"Sleep": true}, SkipUnsupported: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Unsupported) != 1 {
		t.Fatalf("Unsupported = %+v", c.Unsupported)
	}
	u := c.Unsupported[0]
	if u.Method != "NetworkProgrammingLatency" || !reflect.DeepEqual(u.Identifiers, []string{"a", "b"}) {
		t.Errorf("Unsupported[0] = %+v", u)
	}
	if want := `config.yaml:7:13: steps[0].measurements[1].method: unknown measurement method "NetworkProgrammingLatency"`; !strings.HasPrefix(u.Where.Error(), want) {
		t.Errorf("Where = %q, want prefix %q", u.Where, want)
	}
	// The entry stays in the config; the executor decides what to do.
	if n := len(c.Config.Steps[0].Measurements); n != 2 {
		t.Errorf("%d measurements left", n)
	}
}

func TestDefaults(t *testing.T) {
	c, err := compileFiles(t, map[string]string{"config.yaml": "name: v\n" + tuning + "steps:\n- measurements: [{method: Sleep, identifier: s}]\n"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := c.Config.Namespace
	if ns.Number != 1 || !strings.HasPrefix(ns.Prefix, "test-") || len(ns.Prefix) != 11 ||
		*ns.DeleteStaleNamespaces || !*ns.DeleteAutomanagedNamespaces || *ns.EnableExistingNamespaces ||
		ns.DeleteNamespaceTimeout.Std().Minutes() != 10 {
		t.Errorf("defaults %+v", ns)
	}
}

// With --skip-unsupported-measurements a dependency kscale cannot set up is
// skipped, as an unsupported measurement is: named, and out of the config.
func TestSkippedDependencies(t *testing.T) {
	c, err := compileFiles(t, map[string]string{"config.yaml": "name: d\ndependencies:\n- name: prom\n  method: InstallPrometheus\n" +
		tuning + "steps:\n- measurements: [{method: Sleep, identifier: s}]\n"}, Options{SkipUnsupported: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Config.Dependencies) != 0 {
		t.Errorf("dependencies left in the config: %+v", c.Config.Dependencies)
	}
	want := `config.yaml:4:11: dependencies[0].method: dependency method "InstallPrometheus" is not supported by kscale: skipped`
	if d := c.SkippedDependencies; len(d) != 1 || d[0].Method != "InstallPrometheus" || d[0].Identifiers[0] != "prom" || d[0].Where.Error() != want {
		t.Errorf("skipped %+v, want prom at %q", d, want)
	}
}
