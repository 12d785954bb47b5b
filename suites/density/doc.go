// Package density is the density suite: saturation pods on every node,
// then latency pods at a low rate, judged against the pod startup SLO
// (configs/density). Run it with
//
//	make density                                    # local provider, 100 nodes
//	go tool ginkgo ./suites/density -- --nodes=5000
package density
