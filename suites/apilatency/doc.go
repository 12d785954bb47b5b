// Package apilatency is the API call latency suite: GETs, LISTs at
// namespace and cluster scope and mutating calls on many objects
// (configs/apilatency), judged against the API call latency SLO.
//
//	go tool ginkgo ./suites/apilatency -- --nodes=100
package apilatency
