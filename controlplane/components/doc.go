// Package components holds the entry points of the control-plane components a
// local cluster runs as child processes of the kscale binary: embedded etcd
// and the real kube-apiserver, kube-controller-manager and kube-scheduler
// commands of k8s.io/kubernetes.
//
// It is the heavy half of the control plane: only cmd/kscale imports it.
package components
