// Package metrics is the arithmetic and the formats behind the
// measurements: Prometheus text parsed with expfmt, histogram deltas and
// quantiles as histogram_quantile computes them, nearest-rank percentiles of
// samples, 5-minute windows over a series of scrapes, PerfData, the JSON
// that clusterloader2 writes and perfdash reads, and the Mann–Whitney test
// by which benchmarks tell two sets of runs apart.
package metrics
