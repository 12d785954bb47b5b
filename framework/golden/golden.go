// Package golden compares generated output with checked-in files under a
// test's testdata/, for the tests of packages that render files (reports,
// manifests); `go test ./PKG -update` rewrites them.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Check compares got with testdata/name, or rewrites it with -update.
func Check(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
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
		t.Errorf("%s differs from the golden file (-update rewrites it):\n%s", name, got)
	}
}
