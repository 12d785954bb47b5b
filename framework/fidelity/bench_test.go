package fidelity

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/benchjson"
)

// fidelityResult is what BenchmarkFidelity records in fidelity.json: the
// workloads' sizes and the merged Report's figures, status differences and
// observations.
type fidelityResult struct {
	NodesPerKind int     `json:"nodesPerKind"`
	Rounds       int     `json:"rounds"`
	BurstPods    int     `json:"burstPods"`
	StreamPods   int     `json:"streamPods"`
	StreamQPS    float64 `json:"streamQPS"`
	// Figures are the medians over the rounds, each judged against its
	// target; Missed counts those that miss it, varying ones included.
	Figures           []Figure           `json:"figures"`
	Missed            int                `json:"missed"`
	StatusDifferences []StatusDifference `json:"statusDifferences"`
	Observations      []*Observation     `json:"observations"`
	// Tail is the tail workload (TailOptions), side by side, in pairs of
	// fresh clusters.
	Tail tailResult `json:"tail"`
}

// tailResult is the tail workload on NodesPerKind nodes of each kind, the
// two kinds side by side in a fresh cluster per pair (RunSideBySide).
type tailResult struct {
	NodesPerKind int `json:"nodesPerKind"`
	// Pods per kind; QPS is the rate of both kinds' pods together, half
	// of it each kind's.
	Pods          int          `json:"pods"`
	QPS           float64      `json:"qps"`
	SideBySide    bool         `json:"sideBySide"`
	Namespaces    int          `json:"namespaces"`
	SettleSeconds float64      `json:"settleSeconds"`
	Pairs         []tailPaired `json:"pairs"`
	// PairsMet counts the pairs in which every figure met its target.
	PairsMet int `json:"pairsMet"`
}

// tailPaired is one pair: the startup figures judged, the rest missed, how
// soon each kind's nodes read their pods and asked for their tokens after
// the binding (by kind, percentiles in ms), each kind's FailedMount events
// (its pods whose node lost the Node authorizer's race to the binding for
// the ConfigMap and waited past the mount's second) and its slowest pods,
// which p99 is.
type tailPaired struct {
	Startup      []Figure                      `json:"startup"`
	Missed       []Figure                      `json:"missed"`
	FirstRead    map[string]map[string]float64 `json:"firstReadMs"`
	TokenRequest map[string]map[string]float64 `json:"tokenRequestMs"`
	FailedMounts map[string]int                `json:"failedMounts"`
	Slowest      map[string][]SlowPod          `json:"slowestPods"`
}

// BenchmarkFidelity runs the workloads on 20 kubelet morphs and 20 fleet
// nodes, three rounds in one cluster (each kind in turn), and records every
// figure as the median over the rounds, judged against its target, in
// results/bench/fidelity.json; then the tail workload side by side in
// three fresh clusters, each pair judged on its own.
func BenchmarkFidelity(b *testing.B) {
	const nodes, rounds = 20, 3
	c := startCluster(b, nodes, Kubelet, Fleet)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	b.ResetTimer()
	var reports []*Report
	for round := 1; round <= rounds; round++ {
		o := DefaultOptions()
		o.BurstPods, o.StreamPodsPerNode, o.Round = 15, 3, round
		r, err := Run(ctx, c.env, o, c.targets...)
		if err != nil {
			b.Fatal(err)
		}
		reports = append(reports, r)
	}
	c.stop() // the tail's clusters have the machine to themselves
	tail := tailResult{NodesPerKind: nodes, Namespaces: TailOptions().StreamNamespaces, QPS: TailOptions().StreamQPS,
		Pods: nodes * TailOptions().StreamPodsPerNode, SettleSeconds: tailSettle.Seconds(), SideBySide: true}
	for pair := 1; pair <= rounds; pair++ {
		r := tailPair(b, nodes)
		b.Logf("tail workload, pair %d:\n%s", pair, r)
		p := tailPaired{Missed: r.Missed(true), FirstRead: map[string]map[string]float64{},
			TokenRequest: map[string]map[string]float64{}, FailedMounts: map[string]int{}, Slowest: map[string][]SlowPod{}}
		for _, ob := range r.Observations {
			p.FirstRead[ob.Kind] = ob.FirstRead[WorkloadStream]
			p.TokenRequest[ob.Kind] = ob.TokenRequest[WorkloadStream]
			p.Slowest[ob.Kind] = ob.Slowest
			p.FailedMounts[ob.Kind] = int(math.Round(ob.Events[WorkloadStream]["FailedMount"] * float64(tail.Pods)))
		}
		for _, f := range r.Figures {
			if f.kind == latencyTarget {
				p.Startup = append(p.Startup, f)
			}
		}
		if len(p.Missed) == 0 {
			tail.PairsMet++
		}
		tail.Pairs = append(tail.Pairs, p)
	}
	b.StopTimer()
	merged := Merge(reports...)
	b.Log("\n" + merged.String())
	missed := merged.Missed(true)
	path, err := benchjson.Write("fidelity", fidelityResult{
		NodesPerKind: nodes, Rounds: rounds,
		BurstPods: 15, StreamPods: 3 * nodes, StreamQPS: DefaultOptions().StreamQPS,
		Figures: merged.Figures, Missed: len(missed), StatusDifferences: merged.Status,
		Observations: merged.Observations, Tail: tail,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("wrote %s: %d of %d figures miss their target; the tail workload met every target in %d of %d pairs", path, len(missed), len(merged.Figures), tail.PairsMet, len(tail.Pairs))
}
