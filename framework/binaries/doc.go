// Package binaries finds the kscale and kubemark executables that the
// framework starts as processes, building them when they are missing, so
// integration tests and suites never skip for lack of a binary.
package binaries
