// Package existing is the provider for a cluster that is already there,
// with its nodes (real or hollow): it creates nothing, and the run creates
// only its own namespaces.
package existing
