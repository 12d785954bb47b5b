package fidelity

import (
	"context"
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
}

// BenchmarkFidelity runs the workloads on 20 kubelet morphs and 20 fleet
// nodes, three rounds in one cluster (each kind in turn), and records every
// figure as the median over the rounds, judged against its target, in
// results/bench/fidelity.json.
func BenchmarkFidelity(b *testing.B) {
	const nodes, rounds = 20, 3
	env, targets := startGroups(b, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	b.ResetTimer()
	var reports []*Report
	for round := 1; round <= rounds; round++ {
		o := DefaultOptions()
		o.BurstPods, o.StreamPodsPerNode, o.Round = 15, 3, round
		r, err := Run(ctx, env, o, targets...)
		if err != nil {
			b.Fatal(err)
		}
		reports = append(reports, r)
	}
	b.StopTimer()
	merged := Merge(reports...)
	b.Log("\n" + merged.String())
	missed := merged.Missed(true)
	path, err := benchjson.Write("fidelity", fidelityResult{
		NodesPerKind: nodes, Rounds: rounds,
		BurstPods: 15, StreamPods: 3 * nodes, StreamQPS: DefaultOptions().StreamQPS,
		Figures: merged.Figures, Missed: len(missed), StatusDifferences: merged.Status,
		Observations: merged.Observations,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("wrote %s: %d of %d figures miss their target", path, len(missed), len(merged.Figures))
}
