package tuningset

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/config"
)

// Actions block until released, so the test sees exactly how many the set
// keeps in flight and that a freed slot is refilled at once.
func TestParallelismLimitedLoadNeverExceedsLimit(t *testing.T) {
	const limit, n = 3, 10
	var (
		mu                  sync.Mutex
		launched            []int // launch order, seen synchronously
		started             []int
		inFlight, maxFlight int
	)
	hook := withSpawnHook(func(i int) { mu.Lock(); launched = append(launched, i); mu.Unlock() })
	ts, err := New(config.TuningSet{Name: "p", ParallelismLimitedLoad: &config.ParallelismLimitedLoad{ParallelismLimit: limit}}, hook)
	if err != nil {
		t.Fatal(err)
	}
	release := make([]chan struct{}, n)
	for i := range release {
		release[i] = make(chan struct{})
	}
	action := func(_ context.Context, i int) {
		mu.Lock()
		started = append(started, i)
		inFlight++
		maxFlight = max(maxFlight, inFlight)
		mu.Unlock()
		<-release[i]
		mu.Lock()
		inFlight--
		mu.Unlock()
	}
	state := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return len(started), inFlight
	}
	done := make(chan error, 1)
	go func() { done <- ts.Execute(context.Background(), n, action) }()

	for r := range n {
		want := min(n, limit+r)
		eventually(t, "slots to fill", func() bool { s, _ := state(); return s == want })
		time.Sleep(5 * time.Millisecond) // room for a wrong extra start to show
		if s, f := state(); s != want || f != min(limit, n-r) {
			t.Fatalf("after %d releases: %d started, %d in flight; want %d and %d", r, s, f, want, min(limit, n-r))
		}
		select {
		case err := <-done:
			t.Fatalf("Execute returned (%v) with actions in flight", err)
		default:
		}
		close(release[r])
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Execute did not return after every action finished")
	}
	if maxFlight != limit {
		t.Errorf("max in flight %d, want %d", maxFlight, limit)
	}
	if !slices.Equal(launched, upTo(n)) {
		t.Errorf("launch order %v, want %v", launched, upTo(n))
	}
}
