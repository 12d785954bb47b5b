package bench

import (
	"os"
	"strings"
	"testing"

	"github.com/kscale/kscale/framework/benchjson"
)

// TestBenchmarksPageMarksStaleFiles: docs/benchmarks.md has a Sources row
// for every results file, and the row says "stale" exactly when the code
// the file measures changed since it was written. `make bench-stale` runs
// it to list the stale files.
func TestBenchmarksPageMarksStaleFiles(t *testing.T) {
	files, err := benchjson.Files("..")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no results/bench/*.json")
	}
	page, err := os.ReadFile("../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(line, "| `") {
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
			if strings.HasSuffix(name, ".json") {
				rows[strings.TrimSuffix(name, ".json")] = line
			}
		}
	}
	stale := 0
	for _, f := range files {
		if f.Stale {
			stale++
			t.Logf("stale: results/bench/%s.json", f.Name)
		}
		row, ok := rows[f.Name]
		switch {
		case !ok:
			t.Errorf("docs/benchmarks.md has no Sources row for results/bench/%s.json", f.Name)
		case f.Stale && !strings.Contains(row, "stale"):
			t.Errorf("results/bench/%s.json is stale (the code it measures changed since it was written): rerun it, or mark its row in docs/benchmarks.md stale", f.Name)
		case !f.Stale && strings.Contains(row, "stale"):
			t.Errorf("results/bench/%s.json is current: its row in docs/benchmarks.md says stale", f.Name)
		}
	}
	t.Logf("%d of %d results files stale", stale, len(files))
}
