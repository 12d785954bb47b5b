// Package load is the load suite: Deployments, Services, ConfigMaps,
// Secrets and Jobs created, scaled and deleted across namespaces at a set
// throughput (configs/load), judged against the API call latency and pod
// startup SLOs.
//
//	go tool ginkgo ./suites/load -- --nodes=100
package load
