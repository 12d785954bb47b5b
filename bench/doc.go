// Package bench holds the benchmarks of kscale's hollow nodes and local
// control plane, apart from the packages they measure: cluster start-up,
// the fleet at 1000 and 5000 nodes, the fleet against KWOK, the kubelet
// morph at idle, the executor's object creation, and kscale's API call
// latency against Prometheus' on 100 nodes. Each writes its
// results/bench/<name>.json with framework/benchjson; `make bench` runs
// them (docs/benchmarks.md has the current figures and the command for
// each).
package bench
