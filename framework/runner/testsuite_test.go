package runner

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadTestSuite(t *testing.T) {
	tests := []struct {
		name, text string
		want       []Scenario
		wantErr    []string
	}{
		{name: "CL2's keys, any case",
			text: "- identifier: pod-affinity\n  configPath: testing/density/config.yaml\n  overridePaths:\n  - testing/density/affinity.yaml\n" +
				"- Identifier: plain\n  ConfigPath: testing/density/config.yaml\n",
			want: []Scenario{
				{Identifier: "pod-affinity", ConfigPath: "testing/density/config.yaml", OverridePaths: []string{"testing/density/affinity.yaml"}},
				{Identifier: "plain", ConfigPath: "testing/density/config.yaml"},
			}},
		{name: "empty", text: "[]\n", wantErr: []string{"no test scenario in it"}},
		{name: "unknown key", text: "- identifier: a\n  configPath: c.yaml\n  overrides: [o.yaml]\n", wantErr: []string{`unknown field "overrides"`}},
		{name: "every bad entry named",
			text: "- identifier: a\n  configPath: c.yaml\n- identifier: a\n  configPath: c.yaml\n- identifier: ../up\n- configPath: c.yaml\n",
			wantErr: []string{
				`entry 2: identifier "a" is used twice`,
				`entry 3: identifier "../up": want letters, digits`,
				"entry 3: configPath is required",
				`entry 4: identifier ""`,
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "suite.yaml")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := LoadTestSuite(path)
			if tc.wantErr == nil {
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("LoadTestSuite = %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			var in *InputError
			if !errors.As(err, &in) {
				t.Fatalf("error %v, want an InputError", err)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// Each entry runs with its own config and overrides, which replace the
// suite's --testoverrides, reported in a folder of its own.
func TestScenarioOptions(t *testing.T) {
	o := Options{TestConfig: "ignored.yaml", Overrides: []string{"global.yaml"}, Nodes: 5, ReportDir: "/r"}
	got := ScenarioOptions(o, Scenario{Identifier: "a", ConfigPath: "c.yaml", OverridePaths: []string{"o.yaml"}})
	if got.TestConfig != "c.yaml" || !reflect.DeepEqual(got.Overrides, []string{"o.yaml"}) || got.ReportDir != "/r/a" || got.Nodes != 5 {
		t.Errorf("scenario options %+v", got)
	}
	if got := ScenarioOptions(Options{}, Scenario{Identifier: "a", ConfigPath: "c.yaml"}); got.ReportDir != "" || got.Overrides != nil {
		t.Errorf("without a report folder: %+v", got)
	}
}

// A bad entry stops the suite before anything runs.
func TestValidateSuiteStopsAtABadEntry(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("name: good\nsteps:\n- measurements: [{method: Sleep, identifier: s, params: {duration: 1s}}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	suite := []Scenario{{Identifier: "good", ConfigPath: good}, {Identifier: "bad", ConfigPath: filepath.Join(dir, "missing.yaml")}}
	err := ValidateSuite(Options{Nodes: 3}, suite, &strings.Builder{})
	var in *InputError
	if !errors.As(err, &in) || !strings.Contains(err.Error(), "test scenario bad") {
		t.Fatalf("error %v, want an InputError naming the bad entry", err)
	}
	if err := ValidateSuite(Options{Nodes: 3}, suite[:1], &strings.Builder{}); err != nil {
		t.Fatalf("a good suite: %v", err)
	}
}
