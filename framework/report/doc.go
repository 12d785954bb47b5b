// Package report writes what a run measured into its report folder: one
// PerfData JSON per summary, named as clusterloader2 names them so that
// perfdash and existing scripts read them, and the raw files measurements
// attach (the slowest pods, the failed pods).
package report
