// Package abtest compares two groups of repeated runs figure by figure:
// a Mann–Whitney U test (metrics.MannWhitneyP) says whether they differ, a bootstrap interval
// bounds the difference of their medians, and the runs' spread says how
// small a change they could have seen. One run a side cannot tell noise
// from change; the caller labels such a comparison.
package abtest
