// Package density is the density suite: hollow nodes on a local control plane
// and a pod load, run with
//
//	make density                                  # 10 nodes, 100 pods
//	go tool ginkgo ./suites/density -- --nodes=50 --pods=1500
//
// This first version starts the local cluster, registers kubelet-morph hollow
// nodes, runs one Deployment to Running and reports counts and timings; the
// config-driven density test replaces its body, not its command.
package density
