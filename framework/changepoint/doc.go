// Package changepoint finds the points where a series of figures from
// repeated runs shifts: E-Divisive means to place a candidate, Student's
// t-test to decide whether it is one. It is deterministic — the same series
// always gives the same change points — where E-Divisive's permutation test
// is not, as Hunter (Apache Otava) made it for performance series.
package changepoint
