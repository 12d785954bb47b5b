package tuningset

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/config"
)

var global4qps = config.TuningSet{Name: "g", GlobalQPSLoad: &config.GlobalQPSLoad{QPS: 4, Burst: 1}}

// Two phases running at once against one globalQPSLoad set share its qps:
// together they start one action per 250ms, not two.
func TestGlobalQPSLoadIsSharedThroughRegistry(t *testing.T) {
	s := newSim(t)
	r, err := NewRegistry([]config.TuningSet{global4qps}, s.opts()...)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := r.Get("g")
	b, _ := r.Get("g")
	errs := s.run(
		func() error { return a.Execute(context.Background(), 4, s.recordAs("a")) },
		func() error { return b.Execute(context.Background(), 4, s.recordAs("b")) },
	)
	for _, err := range errs {
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
	}
	var all []time.Duration
	for _, tag := range []string{"a", "b"} {
		at := s.startAt(tag)
		if len(at) != 4 {
			t.Fatalf("phase %s started %d actions, want 4", tag, len(at))
		}
		for i := 1; i < 4; i++ {
			if at[i] <= at[i-1] {
				t.Errorf("phase %s: action %d at %v, not after action %d at %v", tag, i, at[i], i-1, at[i-1])
			}
		}
		for _, d := range at {
			all = append(all, d)
		}
	}
	slices.Sort(all)
	want := make([]time.Duration, 8)
	for i := range want {
		want[i] = time.Duration(i) * 250 * time.Millisecond
	}
	if !slices.Equal(all, want) {
		t.Errorf("combined starts %v, want %v", all, want)
	}
}

// Sets built by New do not share a bucket: the Registry is what shares.
func TestGlobalQPSLoadFromNewIsPrivate(t *testing.T) {
	s := newSim(t)
	a, err := New(global4qps, s.opts()...)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(global4qps, s.opts()...)
	s.run(
		func() error { return a.Execute(context.Background(), 3, s.recordAs("a")) },
		func() error { return b.Execute(context.Background(), 3, s.recordAs("b")) },
	)
	for _, tag := range []string{"a", "b"} {
		at := s.startAt(tag)
		for i, want := range []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond} {
			if at[i] != want {
				t.Errorf("phase %s action %d at %v, want %v", tag, i, at[i], want)
			}
		}
	}
}
