// Package controlplane brings up, supervises and stops a local Kubernetes
// control plane made of real Kubernetes code: etcd (embedded from
// go.etcd.io/etcd/server/v3/embed), kube-apiserver, kube-controller-manager and
// kube-scheduler.
//
// Every component is its own child process — the kscale binary re-executes
// itself once per component (`kscale cluster component NAME`), as hyperkube
// did — so each has its own /metrics, CPU time and memory, and one can be
// restarted alone. A supervisor process (`kscale cluster supervise`) owns the
// children, restarts any that exits, and publishes where everything runs in
// the cluster folder's state file (package clusterdir).
//
// This package itself is light: it builds command lines and manages
// processes. The Kubernetes code lives in package components, which only the
// kscale binary links. So the framework and tests can start and stop clusters
// through this package's Go API without linking the control plane.
package controlplane
