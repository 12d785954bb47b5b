package config

import (
	"reflect"
	"strings"
	"testing"
)

const tuning = "tuningSets:\n- name: Uniform5qps\n  qpsLoad:\n    qps: 5\n"

func TestCaseInsensitiveKeys(t *testing.T) {
	c, err := compileFiles(t, map[string]string{"config.yaml": `Name: keys
NameSpace:
  Number: 2
TuningSets:
- Name: Uniform5qps
  QpsLoad:
    QPS: 5
Steps:
- Name: measure
  Measurements:
  - Method: PodStartupLatency
    Identifier: PodStartupLatency
    Params:
      Action: start
      labelSelector: group = latency
  - METHOD: WaitForControlledPodsRunning
    INSTANCES:
    - IDENTIFIER: WaitForRunningDeployments
      PARAMS:
        Kind: Deployment
    Params:
      action: start
`}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.Config
	if cfg.Name != "keys" || cfg.Namespace.Number != 2 || len(cfg.TuningSets) != 1 || cfg.TuningSets[0].QPSLoad.QPS != 5 {
		t.Fatalf("decoded %+v", cfg)
	}
	ms := cfg.Steps[0].Measurements
	want := []Measurement{
		{Method: "PodStartupLatency", Identifier: "PodStartupLatency", Params: map[string]any{"Action": "start", "labelSelector": "group = latency"}},
		{Method: "WaitForControlledPodsRunning", Params: map[string]any{"action": "start"},
			Instances: []MeasurementInstance{{Identifier: "WaitForRunningDeployments", Params: map[string]any{"Kind": "Deployment"}}}},
	}
	if !reflect.DeepEqual(ms, want) {
		t.Fatalf("measurements\n got %#v\nwant %#v", ms, want)
	}
	// The generated config spells keys as the format does; params keep theirs.
	y := string(c.YAML)
	for _, s := range []string{"\nnamespace:\n", "  - method: PodStartupLatency\n", "    identifier: PodStartupLatency", "      Action: start", "          Kind: Deployment", "qpsLoad:\n      qps: 5"} {
		if !strings.Contains(y, s) {
			t.Errorf("generated YAML lacks %q:\n%s", s, y)
		}
	}
	if strings.Contains(y, "Method:") || strings.Contains(y, "INSTANCES") {
		t.Errorf("generated YAML keeps a non-canonical key:\n%s", y)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, config string
		want         []string
	}{
		{
			name:   "unknown field with suggestion",
			config: "name: x\n" + tuning + "steps:\n- measurements:\n  - Method: Sleep\n    Identifer: s\n",
			want:   []string{`config.yaml:9:5: steps[0].measurements[0]: unknown field "Identifer" (did you mean "identifier"?)`},
		},
		{
			name:   "unknown top-level field lists the valid ones",
			config: "name: x\nfoo: 1\n" + tuning + "steps:\n- measurements:\n  - {method: Sleep, identifier: s}\n",
			want:   []string{`config.yaml:2:1: unknown field "foo" (valid: name, automanagedNamespaces, namespace, tuningSets, chaosMonkey, dependencies, steps)`},
		},
		{
			name:   "same key in two spellings",
			config: "name: x\n" + tuning + "steps:\n- measurements:\n  - method: Sleep\n    Method: Timer\n    identifier: s\n",
			want:   []string{`config.yaml:9:5: steps[0].measurements[0].method: "Method" is set twice (also as "method" at line 8)`},
		},
		{
			name:   "wrong scalar type",
			config: "name: x\n" + tuning + "steps:\n- phases:\n  - replicasPerNamespace: lots\n    tuningSet: Uniform5qps\n",
			want:   []string{`config.yaml:8:27: steps[0].phases[0].replicasPerNamespace: want an integer, got "lots"`},
		},
		{
			name:   "list where a mapping belongs",
			config: "name: x\nnamespace: [1]\n" + tuning + "steps:\n- measurements:\n  - {method: Sleep, identifier: s}\n",
			want:   []string{"config.yaml:2:12: namespace: want a mapping, got a list"},
		},
		{
			name:   "bad duration",
			config: "name: x\n" + "tuningSets:\n- name: T\n  steppedLoad:\n    burstSize: 1\n    stepDelay: soon\n" + "steps:\n- measurements:\n  - {method: Sleep, identifier: s}\n",
			want:   []string{`config.yaml:6:16: tuningSets[0].steppedLoad.stepDelay: "soon" is not a duration (like 30s or 5m)`},
		},
		{
			name:   "mapping where params belong",
			config: "name: x\n" + tuning + "steps:\n- measurements:\n  - method: Sleep\n    identifier: s\n    params: [1]\n",
			want:   []string{"config.yaml:10:13: steps[0].measurements[0].params: want a mapping, got a list"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compileFiles(t, map[string]string{"config.yaml": tc.config}, Options{})
			wantErrors(t, err, tc.want...)
		})
	}
}

func TestAnchorsAndMerges(t *testing.T) {
	c, err := compileFiles(t, map[string]string{"config.yaml": `name: anchors
tuningSets:
- name: Uniform5qps
  qpsLoad: {qps: 5}
steps:
- measurements:
  - &base
    Method: WaitForControlledPodsRunning
    Identifier: first
    Params: {action: start}
  - <<: *base
    identifier: second
`}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ms := c.Config.Steps[0].Measurements
	if len(ms) != 2 || ms[1].Identifier != "second" || ms[1].Method != "WaitForControlledPodsRunning" || ms[1].Params["action"] != "start" {
		t.Fatalf("measurements %+v", ms)
	}
}
