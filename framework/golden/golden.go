// Package golden compares generated output with checked-in files: under a
// test's testdata/ for the tests of packages that render files (reports,
// manifests), or anywhere in the tree for generated docs. `go test ./PKG
// -update` rewrites them.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/, docs/reference/)")

// Check compares got with testdata/name, or rewrites it with -update.
func Check(t *testing.T, name string, got []byte) {
	t.Helper()
	CheckFile(t, filepath.Join("testdata", name), got)
}

// CheckFile compares got with the file at path (relative to the test's
// package folder), or rewrites it with -update.
func CheckFile(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from what the code generates (-update rewrites it)%s", path, firstDifference(string(want), string(got)))
	}
}

// firstDifference names the first line where want and got part.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range min(len(w), len(g)) {
		if w[i] != g[i] {
			return "; first at line " + strconv.Itoa(i+1) + ":\n  file:      " + w[i] + "\n  generated: " + g[i]
		}
	}
	return "; one ends at line " + strconv.Itoa(min(len(w), len(g))+1)
}

// CheckDir compares files (names to contents) with the files of dir: each
// as CheckFile does, and a file of dir that files lacks is an error too.
// -update rewrites dir to hold exactly files.
func CheckDir(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := files[e.Name()]; ok || e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if *update {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is no longer generated (-update removes it)", path)
	}
	for name, got := range files {
		CheckFile(t, filepath.Join(dir, name), got)
	}
}
