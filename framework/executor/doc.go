// Package executor runs a compiled test config against a cluster: steps in
// order, the phases and measurements of one step in parallel, each phase
// bringing its objects declaratively to the replica count it asks for,
// paced by its tuning set.
package executor
