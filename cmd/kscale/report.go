package main

import (
	"bytes"
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

func newReportCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Render DIR/report.html again from DIR/summary.json (after an upgrade, or for a run copied from CI)",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("usage: kscale report DIR [--output FILE]: want one report folder, got %d arguments", len(args))}
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
	return cmd
}
