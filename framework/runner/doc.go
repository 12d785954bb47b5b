// Package runner is what `kscale validate`, `kscale run` and the Ginkgo
// suites share: compile a config with the run's flags, connect to the
// cluster, run the steps, save the generated config and say how it went.
package runner
