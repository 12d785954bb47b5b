// Package progress prints progress lines for long waits — "nodes ready
// 3200/5000  64%  ETA 12s" — at a bounded rate, so users see that a run lives
// without a flood of output.
package progress
