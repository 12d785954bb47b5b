package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kscale/kscale/framework/report"
)

// Run is one run of the history.
type Run struct {
	// Dir is the report folder; Name the part of it that tells it apart
	// (relative to the folder the user named).
	Dir     string         `json:"dir"`
	Name    string         `json:"name"`
	Started time.Time      `json:"started"`
	Verdict report.Verdict `json:"verdict"`
	Key     Key            `json:"key"`
	// Job and Build are the CI's, from the run's metadata or from the
	// layout <job>/<build>/artifacts/.
	Job   string `json:"job,omitempty"`
	Build string `json:"build,omitempty"`
	// Failed says why a failed run's figures are left out of its series.
	Failed string `json:"failed,omitempty"`

	summary *report.Run
}

// Skipped is a folder with a summary.json that could not be read.
type Skipped struct {
	Dir    string `json:"dir"`
	Reason string `json:"reason"`
}

// Load reads every run under the given folders: a report folder
// (summary.json in it) or any folder above report folders, at any depth —
// a CI archive laid out as <job>/<build>/artifacts/... among them. Runs
// come in the order they started.
func Load(dirs ...string) ([]*Run, []Skipped, error) {
	if len(dirs) == 0 {
		return nil, nil, errors.New("history: name at least one folder of runs")
	}
	var runs []*Run
	var skipped []Skipped
	seen := map[string]bool{}
	for _, root := range dirs {
		info, err := os.Stat(root)
		if err != nil {
			return nil, nil, fmt.Errorf("history: %w", err)
		}
		if !info.IsDir() {
			return nil, nil, fmt.Errorf("history: %s is not a folder", root)
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || d.Name() != report.SummaryFile {
				return nil
			}
			dir := filepath.Dir(path)
			abs, _ := filepath.Abs(dir)
			if seen[abs] {
				return nil
			}
			seen[abs] = true
			r, err := report.ReadRun(dir)
			if err != nil {
				skipped = append(skipped, Skipped{Dir: dir, Reason: err.Error()})
				return nil
			}
			runs = append(runs, newRun(root, dir, r))
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("history: reading %s: %w", root, err)
		}
	}
	slices.SortStableFunc(runs, func(a, b *Run) int {
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		return strings.Compare(a.Dir, b.Dir)
	})
	return runs, skipped, nil
}

func newRun(root, dir string, r *report.Run) *Run {
	name, err := filepath.Rel(root, dir)
	if err != nil || name == "." {
		name = filepath.Base(dir)
	}
	run := &Run{Dir: dir, Name: name, Started: r.Started, Verdict: r.Verdict, Key: keyOf(r), summary: r}
	if r.Metadata != nil && r.Metadata.CI != nil {
		run.Job, run.Build = r.Metadata.CI.Job, r.Metadata.CI.Build
	} else {
		run.Job, run.Build = ciLayout(name)
	}
	if r.Verdict == report.RunFailed {
		run.Failed = failure(r)
	}
	return run
}

// ciLayout reads <job>/<build>/artifacts/... from a run's path.
func ciLayout(name string) (job, build string) {
	parts := strings.Split(filepath.ToSlash(name), "/")
	for i := 2; i < len(parts); i++ {
		if parts[i] == "artifacts" {
			return parts[i-2], parts[i-1]
		}
	}
	return "", ""
}

// failure is why a run failed, in a line.
func failure(r *report.Run) string {
	for _, s := range r.Steps {
		if s.Status == report.StepFailed && len(s.Errors) > 0 {
			return fmt.Sprintf("step %q: %s", s.Name, s.Errors[0])
		}
	}
	if r.CleanupError != "" {
		return "cleanup: " + r.CleanupError
	}
	return "the run failed"
}
