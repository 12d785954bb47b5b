package report

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestExportCILayout(t *testing.T) {
	run := t.TempDir()
	if _, err := WriteRun(run, &Run{Version: SummaryVersion, Config: "density", Started: time.Now(), Verdict: RunPass}); err != nil {
		t.Fatal(err)
	}
	perf := "PodStartupLatency_PodStartupLatency_density_2026-12-06T10:00:00Z.json"
	if err := os.WriteFile(filepath.Join(run, perf), []byte(`{"version":"v1","dataItems":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(run, "cluster", "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	got, err := ExportCILayout(run, root, "ci-kscale-density", 1007)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "ci-kscale-density", "1007", "artifacts"); got != want {
		t.Errorf("exported to %s, want %s", got, want)
	}
	for _, f := range []string{SummaryFile, perf} {
		if _, err := os.Stat(filepath.Join(got, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(got, "cluster")); err == nil {
		t.Error("the cluster folder was archived")
	}
	entries, _ := os.ReadDir(filepath.Join(root, "ci-kscale-density"))
	if len(entries) != 1 || entries[0].Name() != "1007" {
		t.Errorf("the job's folder holds %v, want the build alone (perfdash reads every folder as a build)", entries)
	}

	for _, tc := range []struct {
		name, dir, job string
		build          int
	}{
		{"the build exists", run, "ci-kscale-density", 1007},
		{"a job with a slash", run, "a/b", 1},
		{"a negative build", run, "j", -1},
		{"not a run", t.TempDir(), "j", 2},
	} {
		if _, err := ExportCILayout(tc.dir, root, tc.job, tc.build); err == nil {
			t.Errorf("%s: exported", tc.name)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "j", "2")); err == nil {
		t.Error("a failed export left a build behind")
	}
}
