package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/kscale/kscale/framework/report"
)

func newCompareCommand() *cobra.Command {
	var opts report.CompareOptions
	var htmlPath string
	cmd := &cobra.Command{
		Use:   "compare DIR_A DIR_B",
		Short: "Print the deltas of two runs' headline numbers; exit 1 when a chosen measure regressed beyond the tolerance",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
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
	return cmd
}
