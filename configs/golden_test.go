package configs

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/kscale/kscale/framework/config"
)

var update = flag.Bool("update", false, "rewrite the golden files from the configs")

// TestShippedConfigsCompile compiles every shipped config at 100 nodes
// (defaults), at 5000 nodes (with its 5000-nodes overrides) and at CI size
// (small overrides), and compares the generated config with testdata/golden.
// Run `go test ./configs -update` after changing a config on purpose.
func TestShippedConfigsCompile(t *testing.T) {
	for _, suite := range []string{"density", "load", "apilatency"} {
		for _, size := range []struct {
			name      string
			nodes     int
			overrides []string
		}{
			{"100", 100, nil},
			{"5000", 5000, []string{filepath.Join(suite, "overrides", "5000-nodes.yaml")}},
			{"small", 5, []string{filepath.Join(suite, "overrides", "small.yaml")}},
		} {
			t.Run(suite+"-"+size.name, func(t *testing.T) {
				c, err := config.Compile(filepath.Join(suite, "config.yaml"), config.Options{
					Nodes: size.nodes, Overrides: size.overrides, Environ: []string{},
				})
				if err != nil {
					t.Fatal(err)
				}
				for _, step := range c.Config.Steps {
					for _, p := range step.Phases {
						for _, o := range p.ObjectBundle {
							if _, err := c.RenderObject(o.ObjectTemplatePath, config.ObjectVars{
								Name: o.Basename + "-0", BaseName: o.Basename, Namespace: "ns-1", TemplateFillMap: o.TemplateFillMap,
								Lenient: p.ReplicasPerNamespace == 0,
							}); err != nil {
								t.Errorf("step %q: %v", step.Name, err)
							}
						}
					}
				}
				golden := filepath.Join("testdata", "golden", suite+"-"+size.name+".yaml")
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, c.YAML, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./configs -update)", err)
				}
				if !bytes.Equal(c.YAML, want) {
					t.Errorf("%s differs from the compiled config; run go test ./configs -update if the change is intended", golden)
				}
			})
		}
	}
}
