package runner

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kscale/kscale/framework/config"
	"github.com/kscale/kscale/framework/report"
)

func TestCIBuild(t *testing.T) {
	for _, tc := range []struct {
		name       string
		job, build string
		env        map[string]string
		want       *report.CI
	}{
		{"outside CI", "", "", nil, nil},
		{"flags win", "nightly", "42", map[string]string{"JOB_NAME": "j", "BUILD_ID": "1"},
			&report.CI{System: "flags", Job: "nightly", Build: "42"}},
		{"prow", "", "", map[string]string{"JOB_NAME": "ci-kscale-density", "BUILD_ID": "1700", "PROW_JOB_ID": "x"},
			&report.CI{System: "prow", Job: "ci-kscale-density", Build: "1700"}},
		{"github actions", "", "", map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_WORKFLOW": "nightly", "GITHUB_JOB": "density",
			"GITHUB_RUN_ID": "99", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r"},
			&report.CI{System: "github-actions", Job: "nightly/density", Build: "99-2", URL: "https://github.com/o/r/actions/runs/99"}},
		{"a build id alone is not prow", "", "", map[string]string{"BUILD_ID": "1"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ciBuild(tc.job, tc.build, func(k string) string { return tc.env[k] })
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ciBuild = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestConfigHash: the hash covers the compiled config and the object
// templates it names, and nothing else.
func TestConfigHash(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "pod.yaml")
	write := func(s string) {
		if err := os.WriteFile(tmpl, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("kind: Pod\n")
	c := &config.Compiled{Dir: dir, YAML: []byte("name: x\n"), Config: &config.Config{Steps: []config.Step{{
		Phases: []config.Phase{{ObjectBundle: []config.Object{{ObjectTemplatePath: "pod.yaml"}, {ObjectTemplatePath: "pod.yaml"}}}},
	}}}}
	first := configHash(c)
	if again := configHash(c); again != first || len(first) != 64 {
		t.Fatalf("hash %q then %q: want one SHA-256, stable", first, again)
	}
	write("kind: Pod\nspec: {}\n")
	if configHash(c) == first {
		t.Error("a changed object template left the hash as it was")
	}
	write("kind: Pod\n")
	c.YAML = []byte("name: y\n")
	if configHash(c) == first {
		t.Error("a changed config left the hash as it was")
	}
}

func TestMetadataDescribesTheMachine(t *testing.T) {
	c := &config.Compiled{Config: &config.Config{}}
	m := metadata(Options{Overrides: []string{"a.yaml"}}, c, func(string) string { return "" })
	if m.Machine.Cores < 1 || m.Machine.OS == "" || m.ConfigHash == "" || m.CI != nil || !reflect.DeepEqual(m.Overrides, []string{"a.yaml"}) {
		t.Errorf("metadata %+v", m)
	}
}
