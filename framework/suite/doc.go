// Package suite is the Ginkgo glue every suite under suites/ shares: the
// flags after `--`, provisioning through a provider, one spec per step of
// the config in an Ordered container that goes on after a failure, one
// spec per gathered measurement, the reports, and teardown.
//
//	ginkgo ./suites/density -- --nodes=5000 --provider=kubemark ...
//
// Bad flags or a bad config exit with code 2 before anything is started;
// a failed step, a violated SLO or an SLO left unmeasured (unless
// --allow-not-measured) fails its spec (exit 1).
package suite
