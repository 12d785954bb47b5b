package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzCompile feeds arbitrary config text to Compile, next to a module and
// an object template it may name. Compile must never panic, must report
// failures as an ErrorList, and must never return a module step.
func FuzzCompile(f *testing.F) {
	seeds := []string{
		"name: x\n" + tuning + "steps:\n- measurements: [{method: Sleep, identifier: s}]\n",
		head + "- phases:\n  - namespaceRange: {min: 1, max: 3}\n    replicasPerNamespace: 2\n    tuningSet: T\n    objectBundle:\n    - {basename: a, objectTemplatePath: obj.yaml}\n",
		head + "- module:\n    path: /m.yaml\n    params: {n: 2}\n",
		"{{$n := DefaultParam .CL2_N 3}}\nname: x\n" + tuning + "steps:\n{{range Loop $n}}\n- name: s{{.}}\n  measurements:\n  - Method: Sleep\n    Instances: [{Identifier: a}]\n{{end}}\n",
		"name: &n x\nsteps:\n- &s {measurements: [{method: Sleep, identifier: *n}]}\n- *s\n- <<: *s\n",
		"name: {{DivideInt .Nodes 0}}\n",
		"{{IncludeEmbedFile \"config.yaml\"}}",
		"steps: [{module: {path: config.yaml}}]\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, config []byte) {
		dir := t.TempDir()
		for name, content := range map[string][]byte{
			"config.yaml": config,
			"m.yaml":      []byte("steps:\n{{range Loop (DefaultParam .n 1)}}\n- measurements: [{method: Sleep, identifier: m{{.}}}]\n{{end}}\n"),
			"obj.yaml":    []byte(configMapTemplate),
		} {
			if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c, err := Compile(filepath.Join(dir, "config.yaml"), Options{
			Nodes: 3, Environ: []string{}, KnownMethods: map[string]bool{"Sleep": true}, SkipUnsupported: true,
		})
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %T %v", err, err)
			}
			return
		}
		if c.Config == nil || len(c.YAML) == 0 {
			t.Fatal("success without a config")
		}
		for i, s := range c.Config.Steps {
			if s.Module != nil {
				t.Fatalf("step %d is a module step", i)
			}
		}
	})
}
