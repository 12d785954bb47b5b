package tuningset

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/config"
)

type planned struct {
	index int
	at    time.Duration
}

// planOf returns the plan a seeded set would follow for n actions.
func planOf(t *testing.T, spec config.TuningSet, seed uint64, n int) []planned {
	t.Helper()
	ts, err := New(spec, WithRandSource(rand.NewPCG(seed, 0)))
	if err != nil {
		t.Fatal(err)
	}
	var p []planned
	for i, at := range ts.(*scheduled).planner.plan(n) {
		p = append(p, planned{i, at})
	}
	return p
}

func gaps(p []planned) []float64 {
	g := make([]float64, 0, len(p))
	for k := 1; k < len(p); k++ {
		g = append(g, (p[k].at - p[k-1].at).Seconds())
	}
	return g
}

func meanStd(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)))
}

func within(got, want, relTol float64) bool { return math.Abs(got-want) <= relTol*want }

func TestRandomizedLoadPlan(t *testing.T) {
	const n, avg = 20000, 100.0
	p := planOf(t, config.TuningSet{Name: "r", RandomizedLoad: &config.RandomizedLoad{AverageQPS: avg}}, 1, n)
	checkIndexOrderFromZero(t, p, n)
	g := gaps(p)
	lo, hi := slices.Min(g), slices.Max(g)
	if lo < 0 || hi > 2/avg {
		t.Errorf("gaps span [%v, %v], want within [0, %v)", lo, hi, 2/avg)
	}
	if lo > 0.02/avg || hi < 1.98/avg {
		t.Errorf("gaps span [%v, %v], want them to cover nearly all of [0, %v)", lo, hi, 2/avg)
	}
	// Uniform on [0, 2/avg): mean 1/avg, standard deviation 1/(avg*sqrt(3)).
	mean, std := meanStd(g)
	if !within(mean, 1/avg, 0.02) || !within(std, 1/(avg*math.Sqrt(3)), 0.03) {
		t.Errorf("gap mean %v std %v, want about %v and %v", mean, std, 1/avg, 1/(avg*math.Sqrt(3)))
	}
}

func TestPoissonLoadPlan(t *testing.T) {
	const n, rate = 20000, 100.0
	p := planOf(t, config.TuningSet{Name: "p", PoissonLoad: &config.PoissonLoad{ExpectedActionsPerSecond: rate}}, 2, n)
	checkIndexOrderFromZero(t, p, n)
	g := gaps(p)
	if slices.Min(g) < 0 {
		t.Errorf("negative gap %v", slices.Min(g))
	}
	// Exponential: standard deviation equals the mean (a uniform gap would
	// have mean/sqrt(3)), and about e^-3 of the gaps exceed 3 means.
	mean, std := meanStd(g)
	if !within(mean, 1/rate, 0.03) || !within(std, 1/rate, 0.05) {
		t.Errorf("gap mean %v std %v, want both about %v", mean, std, 1/rate)
	}
	long := 0
	for _, x := range g {
		if x > 3/rate {
			long++
		}
	}
	if frac := float64(long) / float64(len(g)); !within(frac, math.Exp(-3), 0.15) {
		t.Errorf("%.4f of gaps exceed 3 means, want about %.4f", frac, math.Exp(-3))
	}
}

func TestRandomizedTimeLimitedLoadPlan(t *testing.T) {
	const n, limit = 20000, time.Second
	p := planOf(t, config.TuningSet{Name: "rt", RandomizedTimeLimitedLoad: &config.RandomizedTimeLimitedLoad{TimeLimit: config.Duration(limit)}}, 3, n)
	if len(p) != n {
		t.Fatalf("plan has %d starts, want %d", len(p), n)
	}
	seen := make([]bool, n)
	inOrder, firstQuarter := true, 0
	var offsets []float64
	for k, st := range p {
		if st.index < 0 || st.index >= n || seen[st.index] {
			t.Fatalf("index %d out of range or planned twice", st.index)
		}
		seen[st.index] = true
		if st.at < 0 || st.at >= limit {
			t.Errorf("index %d at %v, want within [0, %v)", st.index, st.at, limit)
		}
		if k > 0 && st.at < p[k-1].at {
			t.Fatalf("plan not in order of start: %v after %v", st.at, p[k-1].at)
		}
		if st.index != k {
			inOrder = false
		}
		if st.at < limit/4 {
			firstQuarter++
		}
		offsets = append(offsets, st.at.Seconds())
	}
	if inOrder {
		t.Error("indices start in index order, want random order")
	}
	mean, _ := meanStd(offsets)
	if frac := float64(firstQuarter) / n; !within(mean, 0.5, 0.02) || !within(frac, 0.25, 0.05) {
		t.Errorf("mean offset %vs, %.3f in the first quarter; want about 0.5s and 0.25", mean, frac)
	}

	zero := planOf(t, config.TuningSet{Name: "rt0", RandomizedTimeLimitedLoad: &config.RandomizedTimeLimitedLoad{}}, 3, 3)
	if !slices.Equal(zero, []planned{{0, 0}, {1, 0}, {2, 0}}) {
		t.Errorf("timeLimit 0 plan %v, want every index at 0 in index order", zero)
	}
}

func checkIndexOrderFromZero(t *testing.T, p []planned, n int) {
	t.Helper()
	if len(p) != n {
		t.Fatalf("plan has %d starts, want %d", len(p), n)
	}
	for k, st := range p {
		if st.index != k {
			t.Fatalf("start %d is index %d, want index order", k, st.index)
		}
	}
	if p[0].at != 0 {
		t.Errorf("first start at %v, want 0", p[0].at)
	}
}

var randomSpecs = []config.TuningSet{
	{Name: "randomized", RandomizedLoad: &config.RandomizedLoad{AverageQPS: 20}},
	{Name: "randomizedTimeLimited", RandomizedTimeLimitedLoad: &config.RandomizedTimeLimitedLoad{TimeLimit: config.Duration(time.Second)}},
	{Name: "poisson", PoissonLoad: &config.PoissonLoad{ExpectedActionsPerSecond: 20}},
}

// Execute must start every action exactly at its planned time, and one seed
// must always give one plan.
func TestRandomizedExecuteFollowsSeededPlan(t *testing.T) {
	const n = 25
	for _, spec := range randomSpecs {
		t.Run(spec.Name, func(t *testing.T) {
			want := planOf(t, spec, 42, n)
			if again := planOf(t, spec, 42, n); !slices.Equal(again, want) {
				t.Fatal("same seed gave a different plan")
			}
			if other := planOf(t, spec, 43, n); slices.Equal(other, want) {
				t.Fatal("another seed gave the same plan")
			}

			s := newSim(t)
			ts, err := New(spec, s.opts(WithRandSource(rand.NewPCG(42, 0)))...)
			if err != nil {
				t.Fatal(err)
			}
			if errs := s.run(func() error { return ts.Execute(context.Background(), n, s.record) }); errs[0] != nil {
				t.Fatalf("Execute: %v", errs[0])
			}
			launched, at := s.launchedCopy(), s.startAt("")
			if len(launched) != n || len(at) != n {
				t.Fatalf("launched %d, started %d, want %d", len(launched), len(at), n)
			}
			for k, p := range want {
				if launched[k] != p.index || at[p.index] != p.at {
					t.Errorf("start %d: index %d at %v, want index %d at %v", k, launched[k], at[launched[k]], p.index, p.at)
				}
			}
		})
	}
}
