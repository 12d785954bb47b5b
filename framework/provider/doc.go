// Package provider gets a run its cluster and hollow nodes, and takes them
// away again. Providers register by name (local, kubemark, existing) from
// their own packages; a suite looks them up with New.
package provider
