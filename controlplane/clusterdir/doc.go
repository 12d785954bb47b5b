// Package clusterdir describes the folder of a local kscale cluster: where its
// certificates, kubeconfigs, logs and etcd data live, and the state file through
// which the supervisor process tells others which components run where.
//
// The package is light (no k8s.io/kubernetes import): the framework uses it to
// read a running cluster's endpoints and to mint client credentials, while the
// heavy controlplane package writes the folder.
package clusterdir
