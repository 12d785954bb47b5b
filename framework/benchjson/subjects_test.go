package benchjson

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCodeHash: the hash moves with the code a file measures and with the
// Kubernetes version, and with nothing else.
func TestCodeHash(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module x\nrequire (\n\tk8s.io/api v0.37.2\n\tgithub.com/spf13/cobra v1.10.2\n)\n")
	write("pkg/a.go", "package pkg\n")
	write("pkg/sub/b.go", "package sub\n")
	write("other/c.go", "package other\n")
	paths := []string{"go.mod", "pkg"}
	base, err := CodeHash(root, paths)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file, body string
		moves            bool
	}{
		{"a source file", "pkg/a.go", "package pkg // changed\n", true},
		{"a file in a sub-folder", "pkg/sub/b.go", "package sub // changed\n", true},
		{"a new file", "pkg/new.go", "package pkg\n", true},
		{"the Kubernetes version", "go.mod", "module x\nrequire (\n\tk8s.io/api v0.38.0\n\tgithub.com/spf13/cobra v1.10.2\n)\n", true},
		{"a test", "pkg/a_test.go", "package pkg\n", false},
		{"test data", "pkg/testdata/d.yaml", "x: 1\n", false},
		{"another folder", "other/c.go", "package other // changed\n", false},
		{"a tool in go.mod", "go.mod", "module x\nrequire (\n\tk8s.io/api v0.37.2\n\tgithub.com/spf13/cobra v1.11.0\n)\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, had := os.ReadFile(filepath.Join(root, tc.file))
			write(tc.file, tc.body)
			defer func() {
				if had == nil {
					write(tc.file, string(old))
				} else {
					os.Remove(filepath.Join(root, tc.file))
				}
			}()
			h, err := CodeHash(root, paths)
			if err != nil {
				t.Fatal(err)
			}
			if moved := h != base; moved != tc.moves {
				t.Errorf("hash moved %v, want %v", moved, tc.moves)
			}
		})
	}
}

func TestSubjects(t *testing.T) {
	if got := Subjects("density-5000"); !slices.Equal(got, densityStack) {
		t.Errorf("density-5000: %v, want the density stack", got)
	}
	if got := Subjects("tuningset"); !slices.Equal(got, []string{"framework/tuningset"}) {
		t.Errorf("tuningset: %v", got)
	}
	if got := Subjects("unknown"); !slices.Equal(got, []string{"."}) {
		t.Errorf("a file without subjects measures everything: %v", got)
	}
}
