package main

import (
	"bytes"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kscale/kscale/framework/abtest"
	"github.com/kscale/kscale/framework/report"
)

func newCompareCommand() *cobra.Command {
	var opts report.CompareOptions
	var htmlPath string
	var baseline, candidate []string
	cmd := &cobra.Command{
		Use:   "compare DIR_A DIR_B | --baseline DIR... --candidate DIR...",
		Short: "Compare runs' headline numbers: two runs by their deltas, or repeated runs a side by a rank test; exit 1 on a regression",
		Long: `With two report folders, prints the deltas of their headline numbers and exits 1
when a chosen measure got worse beyond --tolerance: a single-run comparison,
which cannot tell a change from the noise between two runs.

With --baseline and --candidate (each repeatable, several runs a side), judges
every headline number all the runs have: regressed, improved or not
distinguishable, by a Mann–Whitney U test at 5 % and a 95 % bootstrap interval
of the difference of the medians, with the smallest change the runs' spread
lets it detect. Exits 1 when a figure with an SLO threshold regressed.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(baseline) > 0 || len(candidate) > 0:
				if len(args) > 0 || len(baseline) == 0 || len(candidate) == 0 {
					return usageError{fmt.Errorf("usage: kscale compare --baseline DIR... --candidate DIR... (both, and no folder without a flag)")}
				}
			case len(args) != 2:
				return usageError{fmt.Errorf("usage: kscale compare DIR_A DIR_B, or --baseline DIR... --candidate DIR...: got %d folders", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(baseline) > 0 {
				return compareRepeated(cmd, baseline, candidate)
			}
			if opts.TolerancePercent < 0 {
				return usageError{fmt.Errorf("--tolerance: must be 0 or more percent, got %v", opts.TolerancePercent)}
			}
			a, err := report.ReadRun(args[0])
			if err != nil {
				return usageError{err}
			}
			b, err := report.ReadRun(args[1])
			if err != nil {
				return usageError{err}
			}
			deltas := report.Compare(a, b, opts)
			fmt.Fprintln(cmd.OutOrStdout(), "single-run comparison: one run a side cannot tell a change from noise; repeat the runs and use --baseline/--candidate")
			if err := report.WriteCompareText(cmd.OutOrStdout(), a, b, deltas); err != nil {
				return err
			}
			if htmlPath != "" {
				f, err := os.Create(htmlPath)
				if err != nil {
					return usageError{fmt.Errorf("--html: %w", err)}
				}
				if err := report.WriteCompareHTML(f, a, b, deltas); err != nil {
					f.Close()
					return err
				}
				if err := f.Close(); err != nil {
					return err
				}
			}
			if r := report.Regressions(deltas); len(r) > 0 {
				return fmt.Errorf("%d measure(s) regressed beyond %.4g%%", len(r), opts.TolerancePercent)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&opts.Measures, "measure", nil, `measure to gate on, "NAME" or "NAME:HEADLINE KEY" (repeatable; default every headline number that has a threshold)`)
	fs.Float64Var(&opts.TolerancePercent, "tolerance", 10, "how many percent worse a chosen measure may get")
	fs.StringVar(&htmlPath, "html", "", "also render the comparison to this HTML file")
	fs.StringArrayVar(&baseline, "baseline", nil, "report folder of a baseline run (repeatable)")
	fs.StringArrayVar(&candidate, "candidate", nil, "report folder of a candidate run (repeatable)")
	return cmd
}

// compareRepeated judges several runs a side, figure by figure.
func compareRepeated(cmd *cobra.Command, baseline, candidate []string) error {
	read := func(dirs []string) ([]*report.Run, error) {
		var runs []*report.Run
		for _, d := range dirs {
			r, err := report.ReadRun(d)
			if err != nil {
				return nil, usageError{err}
			}
			runs = append(runs, r)
		}
		return runs, nil
	}
	a, err := read(baseline)
	if err != nil {
		return err
	}
	b, err := read(candidate)
	if err != nil {
		return err
	}
	o := abtest.DefaultOptions()
	figs, err := abtest.Compare(a, b, o)
	if err != nil {
		return usageError{err}
	}
	w := cmd.OutOrStdout()
	if len(a) == 1 || len(b) == 1 {
		fmt.Fprintln(w, "single-run comparison: one run on a side cannot tell a change from noise; changes are shown, not judged")
	}
	fmt.Fprintf(w, "baseline: %d runs; candidate: %d runs; a change is a Mann–Whitney U p ≤ %.2g, a %.0f %% bootstrap interval of the difference of medians without 0, and a median moved %.0f %% or more\n\n",
		len(a), len(b), o.Alpha, 100*o.Confidence, 100*o.MinChange)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "measurement\tnumber\tbaseline median\tcandidate median\tchange\t95% interval\tp\tdetectable\tverdict\t")
	regressed := 0
	for _, f := range figs {
		verdict := string(f.Verdict)
		if f.Verdict == abtest.Regressed && f.Gated {
			verdict = "REGRESSED"
			regressed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%.4g\t%.4g\t%+.1f%%\t[%+.4g, %+.4g]\t%.2g\t%.1f%%\t%s\t\n", f.Measurement, f.Key, f.BaselineMedian, f.CandidateMedian,
			100*f.Change, f.CILow, f.CIHigh, f.PValue, 100*f.MinDetectable, verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if regressed > 0 {
		return fmt.Errorf("%d gated figure(s) regressed", regressed)
	}
	return nil
}

func newReportCommand() *cobra.Command {
	var output, ciRoot, job string
	build := -1
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Render DIR/report.html again from DIR/summary.json, or archive the run in a CI layout perfdash reads",
		Long: `Renders DIR/report.html again from DIR/summary.json (after an upgrade, or for a
run copied from CI). With --ci-layout ROOT --job NAME --build N, copies the run's
report files to ROOT/NAME/N/artifacts/ instead: the layout perfdash reads in its
local mode (perfdash --mode=local --logsPath=ROOT) and kscale history reads.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("usage: kscale report DIR [--output FILE | --ci-layout ROOT --job NAME --build N]: want one report folder, got %d arguments", len(args))}
			}
			if (ciRoot != "" || job != "" || build >= 0) && (ciRoot == "" || job == "" || build < 0 || output != "") {
				return usageError{fmt.Errorf("--ci-layout, --job and --build go together, without --output")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if info, err := os.Stat(dir); err != nil {
				return usageError{fmt.Errorf("report folder: %w", err)}
			} else if !info.IsDir() {
				return usageError{fmt.Errorf("report folder %s: not a directory", dir)}
			}
			if ciRoot != "" {
				path, err := report.ExportCILayout(dir, ciRoot, job, build)
				if err != nil {
					return usageError{err}
				}
				fmt.Fprintln(cmd.OutOrStdout(), path)
				return nil
			}
			run, err := report.ReadRun(dir)
			if err != nil {
				return usageError{fmt.Errorf("%s is not a report folder of a run: %w", dir, err)}
			}
			var path string
			if output == "" {
				if path, err = report.WriteHTML(dir, run); err != nil {
					return err
				}
			} else {
				// Rendered first: a bad run leaves no half-written FILE.
				var page bytes.Buffer
				if err := report.HTML(&page, run); err != nil {
					return err
				}
				if err := os.WriteFile(output, page.Bytes(), 0o644); err != nil {
					return usageError{fmt.Errorf("--output: %w", err)}
				}
				path = output
			}
			fmt.Fprintln(cmd.OutOrStdout(), path)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the page to this file instead of DIR/"+report.HTMLFile)
	cmd.Flags().StringVar(&ciRoot, "ci-layout", "", "archive the run under this folder as <job>/<build>/artifacts/ (perfdash's local mode)")
	cmd.Flags().StringVar(&job, "job", "", "job name of the archived run (--ci-layout)")
	cmd.Flags().IntVar(&build, "build", -1, "build number of the archived run (--ci-layout)")
	return cmd
}
