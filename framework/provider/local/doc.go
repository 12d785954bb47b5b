// Package local is the local provider: a real control plane started with
// `kscale cluster up` on this machine, and hollow nodes started as kubemark
// processes next to it.
//
// It talks to the control plane only through the kscale binary and the cluster
// folder (package clusterdir), so it links client-go, not Kubernetes itself.
package local
