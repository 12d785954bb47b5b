package config

import (
	"reflect"
	"strings"
	"testing"
)

func stepNames(cfg *Config) []string {
	var names []string
	for _, s := range cfg.Steps {
		names = append(names, s.Name)
	}
	return names
}

func TestModuleExpansion(t *testing.T) {
	c, err := compileFiles(t, map[string]string{
		"config.yaml": `name: modules
{{$label := DefaultParam .CL2_LABEL "top"}}
tuningSets:
- name: Uniform5qps
  qpsLoad: {qps: 5}
steps:
- name: first
  measurements:
  - {Method: Sleep, Identifier: first}
- module:
    path: /modules/outer.yaml
    params:
      count: 2
      CL2_LABEL: from-params
- name: last {{$label}}
  measurements:
  - {Method: Sleep, Identifier: last}
`,
		"modules/outer.yaml": `{{$count := .count}}
steps:
{{range $i := Loop $count}}
- name: outer {{$i}} {{$.CL2_LABEL}}
  measurements:
  - Method: Sleep
    Identifier: sleep-{{$i}}
    Params: {duration: 1s}
{{end}}
- module:
    path: inner/inner.yaml
    params:
      label: {{DefaultParam .label "inner-default"}}
`,
		"modules/inner/inner.yaml": `- name: inner {{.label}} count={{.count}} nodes={{.Nodes}}
  measurements:
  - Method: Sleep
    Identifier: inner
`,
	}, Options{Nodes: 3, Environ: []string{"CL2_LABEL=env"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"first", "outer 0 from-params", "outer 1 from-params", "inner inner-default count=2 nodes=3", "last env"}
	if got := stepNames(c.Config); !reflect.DeepEqual(got, want) {
		t.Fatalf("steps %q, want %q", got, want)
	}
	for i, s := range c.Config.Steps {
		if s.Module != nil {
			t.Errorf("step %d still has a module", i)
		}
	}
	if strings.Contains(string(c.YAML), "module:") {
		t.Errorf("generated YAML still names a module:\n%s", c.YAML)
	}
	var keys []string
	for k := range c.Rendered {
		keys = append(keys, k)
	}
	for _, k := range []string{"config.yaml", "modules/outer.yaml (rendered)", "modules/inner/inner.yaml"} {
		if _, ok := c.Rendered[k]; !ok {
			t.Errorf("Rendered lacks %q (has %q)", k, keys)
		}
	}
}

func TestModuleErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			name: "cycle",
			files: map[string]string{
				"config.yaml":    "name: x\n" + tuning + "steps:\n- module:\n    path: /modules/a.yaml\n",
				"modules/a.yaml": "steps:\n- module:\n    path: b.yaml\n",
				"modules/b.yaml": "steps:\n- name: before\n  measurements: [{method: Sleep, identifier: s}]\n- module:\n    path: /modules/a.yaml\n",
			},
			want: []string{"modules/b.yaml:5:11: steps[0].module.steps[0].module.steps[1].module.path: module cycle: modules/a.yaml -> modules/b.yaml -> modules/a.yaml"},
		},
		{
			name: "self cycle",
			files: map[string]string{
				"config.yaml": "name: x\n" + tuning + "steps:\n- module:\n    path: config.yaml\n",
			},
			want: []string{"config.yaml:8:11: steps[0].module.path: module cycle: config.yaml -> config.yaml"},
		},
		{
			name: "missing module file",
			files: map[string]string{
				"config.yaml": "name: x\n" + tuning + "steps:\n- module:\n    path: /modules/nope.yaml\n",
			},
			want: []string{`config.yaml:8:11: steps[0].module.path: cannot read "/modules/nope.yaml" (looked at *modules/nope.yaml): no such file or directory`},
		},
		{
			name: "module path missing",
			files: map[string]string{
				"config.yaml": "name: x\n" + tuning + "steps:\n- module:\n    params: {a: 1}\n",
			},
			want: []string{"config.yaml:8:5: steps[0].module.path: required"},
		},
		{
			name: "module and phases in one step",
			files: map[string]string{
				"config.yaml": "name: x\n" + tuning + "steps:\n- module:\n    path: m.yaml\n  phases: []\n",
				"m.yaml":      "steps: []\n",
			},
			want: []string{"config.yaml:7:3: steps[0]: a step needs exactly one of phases, measurements or module; found module and phases"},
		},
		{
			name: "template error in module",
			files: map[string]string{
				"config.yaml": "name: x\n" + tuning + "steps:\n- module:\n    path: m.yaml\n",
				"m.yaml":      "steps:\n- name: {{.missing}}\n",
			},
			want: []string{`m.yaml:2:11: steps[0].module: at <.missing>: map has no entry for key "missing"`},
		},
		{
			name: "unknown key in module file and in module",
			files: map[string]string{
				"config.yaml": "name: x\n" + tuning + "steps:\n- module:\n    path: m.yaml\n    parms: {}\n",
				"m.yaml":      "name: m\nsteps: []\n",
			},
			want: []string{
				`config.yaml:9:5: steps[0].module: unknown field "parms" (did you mean "params"?)`,
				`m.yaml:1:1: steps[0].module: unknown field "name" in a module file (valid: steps)`,
			},
		},
		{
			name: "errors in module steps are positioned in the module",
			files: map[string]string{
				"config.yaml": "name: x\n" + tuning + "steps:\n- measurements: [{method: Sleep, identifier: s}]\n- module:\n    path: m.yaml\n",
				"m.yaml":      "# comment\nsteps:\n- phases:\n  - tuningSet: Fast\n    replicasPerNamespace: -1\n",
			},
			want: []string{
				`m.yaml:4:16: steps[1].module.steps[0].phases[0].tuningSet: unknown tuning set "Fast" (defined: Uniform5qps)`,
				"m.yaml:5:27: steps[1].module.steps[0].phases[0].replicasPerNamespace: must not be negative, got -1",
			},
		},
		{
			name: "steps of a module must be a list",
			files: map[string]string{
				"config.yaml": "name: x\n" + tuning + "steps:\n- module:\n    path: m.yaml\n",
				"m.yaml":      "steps: {a: 1}\n",
			},
			want: []string{"m.yaml:1:8: steps[0].module.steps: want a list of steps, got a mapping"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compileFiles(t, tc.files, Options{StrictTemplates: true})
			wantErrors(t, err, tc.want...)
		})
	}
}

// A module used twice with different params keeps both renderings apart,
// and messages say which one a position refers to. (Both renderings have
// more lines than the template, so positions are in the rendered text.)
func TestModuleRenderedTwice(t *testing.T) {
	_, err := compileFiles(t, map[string]string{
		"config.yaml": "name: x\n" + tuning + "steps:\n" +
			"- module:\n    path: m.yaml\n    params: {n: 2, ts: Uniform5qps}\n" +
			"- module:\n    path: m.yaml\n    params: {n: 2, ts: Fast}\n",
		"m.yaml": "steps:\n{{range Loop .n}}\n- phases:\n  - tuningSet: {{$.ts}}\n{{end}}\n",
	}, Options{})
	wantErrors(t, err,
		`m.yaml (rendered for steps[1].module):4:16: steps[1].module.steps[0].phases[0].tuningSet: unknown tuning set "Fast"`,
		`m.yaml (rendered for steps[1].module):7:16: steps[1].module.steps[1].phases[0].tuningSet: unknown tuning set "Fast"`,
	)
}

// Module paths resolve as clusterloader2 resolves them: from the top
// config's folder, whichever file names them (load's modules/measurements.yaml
// names "modules/dns-performance-metrics.yaml"). A path that names no file
// there is looked for beside the naming module.
func TestModulePathsAreConfigRelative(t *testing.T) {
	sleep := func(name string) string {
		return "steps:\n- name: " + name + "\n  measurements:\n  - {Method: Sleep, Identifier: " + name + "}\n"
	}
	c, err := compileFiles(t, map[string]string{
		"config.yaml": "name: paths\nsteps:\n- module: {path: modules/measurements.yaml}\n",
		"modules/measurements.yaml": `steps:
- module: {path: modules/dns.yaml}
- module: {path: both.yaml}
- module: {path: neighbour.yaml}
`,
		"modules/dns.yaml":       sleep("dns"),
		"both.yaml":              sleep("top-both"),
		"modules/both.yaml":      sleep("module-both"),
		"modules/neighbour.yaml": sleep("neighbour"),
	}, Options{Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"dns", "top-both", "neighbour"}
	if got := stepNames(c.Config); !reflect.DeepEqual(got, want) {
		t.Fatalf("steps %q, want %q", got, want)
	}
}
