// Package procstat reads the CPU time and resident memory of processes from
// /proc, to measure what hollow nodes and local control-plane components cost,
// and the whole machine's CPU time, to tell when the host itself was saturated.
package procstat
