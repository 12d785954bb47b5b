package history

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// JSONFile and HTMLFile are what WriteFiles writes.
const (
	JSONFile = "history.json"
	HTMLFile = "history.html"
)

// WriteJSON writes the history, its series and change points, as JSON.
func (h *History) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(h)
}

// WriteFiles writes history.json and history.html into dir.
func (h *History) WriteFiles(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{{JSONFile, h.WriteJSON}, {HTMLFile, func(w io.Writer) error { return h.WriteHTML(w, dir) }}} {
		path := filepath.Join(dir, f.name)
		out, err := os.Create(path)
		if err != nil {
			return paths, err
		}
		err = f.write(out)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return paths, fmt.Errorf("writing %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// WriteText prints what a CI log needs: each kind of run, its change
// points, the runs left out, and the verdict.
func (h *History) WriteText(w io.Writer) {
	fmt.Fprintf(w, "kscale history: %d runs of %d kinds; change points at p <= %g and a change of %g%% or more, %d runs a side at least\n",
		len(h.Runs), len(h.Groups), h.Options.PValue, 100*h.Options.MinMagnitude, h.Options.MinSegment)
	for _, g := range h.Groups {
		first, last := h.Runs[g.Runs[0]], h.Runs[g.Runs[len(g.Runs)-1]]
		fmt.Fprintf(w, "\n%s\n  %d runs, %s (%s) to %s (%s); %d figures\n", g.Key, len(g.Runs),
			first.Name, first.Started.Format("2006-01-02 15:04"), last.Name, last.Started.Format("2006-01-02 15:04"), len(g.Series))
		for _, ri := range g.Runs {
			if r := h.Runs[ri]; r.Failed != "" {
				fmt.Fprintf(w, "  left out: %s, failed: %s\n", r.Name, r.Failed)
			}
		}
		for _, s := range g.Series {
			for i, c := range s.ChangePoints {
				mark := "better"
				switch {
				case c.Regression && i == len(s.ChangePoints)-1:
					mark = "REGRESSION"
				case c.Regression:
					mark = "regressed, since recovered"
				case c.Worse:
					mark = "worse (not gated)"
				}
				fmt.Fprintf(w, "  %-10s %s: %s %s → %s (%s, p=%.2g), from %s; %d runs before, %d after\n",
					mark, s.Figure, formatChange(c.Change), formatValue(c.Before.Mean, s.Unit), formatValue(c.After.Mean, s.Unit),
					spread(c), c.PValue, c.AfterRuns[0], len(c.BeforeRuns), len(c.AfterRuns))
			}
		}
	}
	for _, s := range h.Skipped {
		fmt.Fprintf(w, "\nskipped %s: %s\n", s.Dir, s.Reason)
	}
	if regs := h.Regressions(); len(regs) > 0 {
		fmt.Fprintf(w, "\nverdict: %d gated figure(s) regressed in the newest runs\n", len(regs))
	} else {
		fmt.Fprintln(w, "\nverdict: no gated figure regressed in the newest runs")
	}
}

func spread(c Change) string {
	return fmt.Sprintf("±%.3g → ±%.3g", c.Before.StdDev, c.After.StdDev)
}

func formatChange(c float64) string {
	if math.IsInf(c, 0) {
		return "from 0"
	}
	return fmt.Sprintf("%+.1f%%", 100*c)
}

func formatValue(v float64, unit string) string {
	s := fmt.Sprintf("%.4g", v)
	if unit != "" {
		s += " " + unit
	}
	return s
}
