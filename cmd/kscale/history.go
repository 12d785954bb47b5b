package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kscale/kscale/framework/changepoint"
	"github.com/kscale/kscale/framework/history"
)

func newHistoryCommand() *cobra.Command {
	o := changepoint.DefaultOptions()
	var out string
	var minChangePercent float64
	cmd := &cobra.Command{
		Use:   "history DIR...",
		Short: "Find the change points of a series of runs' figures; exit 1 when the newest runs regressed on a gated figure",
		Long: `Reads every run under the folders (report folders, or a CI archive laid out
<job>/<build>/artifacts/...), makes a series of each figure per kind of run
(config and its hash, nodes, provider, hollow kind, Kubernetes version,
machine cores), finds where each series shifts, and writes history.json and
history.html into --output. Exit 1 when a figure with an SLO threshold got
worse at the last change point of its series.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("usage: kscale history DIR... : name at least one folder of runs")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.MinMagnitude = minChangePercent / 100
			if _, err := changepoint.Detect(nil, o); err != nil {
				return usageError{fmt.Errorf("--p-value, --min-change, --min-runs: %w", err)}
			}
			runs, skipped, err := history.Load(args...)
			if err != nil {
				return usageError{err}
			}
			if len(runs) == 0 {
				return usageError{fmt.Errorf("no run (summary.json) under %v", args)}
			}
			h, err := history.Analyze(runs, skipped, o)
			if err != nil {
				return err
			}
			h.WriteText(cmd.OutOrStdout())
			if out != "" {
				paths, err := h.WriteFiles(out)
				if err != nil {
					return err
				}
				for _, p := range paths {
					fmt.Fprintln(cmd.OutOrStdout(), "wrote "+p)
				}
			}
			if regs := h.Regressions(); len(regs) > 0 {
				return fmt.Errorf("%d gated figure(s) regressed in the newest runs", len(regs))
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&out, "output", "", "folder to write history.json and history.html into (default: print only)")
	fs.Float64Var(&o.PValue, "p-value", o.PValue, "significance level of a change point (Student's t-test, corrected for the splits it was chosen among)")
	fs.Float64Var(&minChangePercent, "min-change", 100*o.MinMagnitude, "smallest change of a figure's mean, in percent, that counts")
	fs.IntVar(&o.MinSegment, "min-runs", o.MinSegment, "fewest runs on either side of a change point")
	return cmd
}
