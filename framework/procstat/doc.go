// Package procstat reads the CPU time and resident memory of processes from
// /proc, to measure what hollow nodes and local control-plane components cost.
package procstat
