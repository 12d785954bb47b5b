// Package history reads a series of kscale runs — report folders, or the
// CI artifact layout perfdash reads — and finds where their figures shift:
// one series per figure and kind of run, change points by the changepoint
// package, and a verdict a nightly job can page on.
package history
