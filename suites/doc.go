// Package suites holds the Ginkgo suites users run (density, load,
// apilatency: one folder each, thin over framework/suite); its own tests
// run the density suite binary end to end on the local provider, the way
// a nightly job does, and check its exit code and every report file.
package suites
