package layout_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// machinePath is a path of some machine's home, checkout or build tree:
// what a sample output copied from a terminal brings into the docs.
var machinePath = regexp.MustCompile(`(^|[\s"'(=:])(/work/|/root/|/home/[a-z]|/Users/|/tmp/go-build|/var/folders/)`)

// TestDocsNameNoMachinePath: the README, the docs and the code's comments
// show no path of the machine they were written on; samples use paths
// relative to the checkout, or $HOME.
func TestDocsNameNoMachinePath(t *testing.T) {
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "results" || name == "bin" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".md") && !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasSuffix(path, ".go") && !strings.Contains(line, "//") {
				continue // code, not a comment: it may name real paths
			}
			if machinePath.MatchString(line) && !strings.Contains(line, "machinePath") {
				t.Errorf("%s:%d names a machine's path: %s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d files checked", checked)
	}
}
