package fleet

import (
	"context"
	"k8s.io/utils/clock"
	"sync"
	"testing"
	"time"
)

func TestSchedulerRunsHigherPriorityFirst(t *testing.T) {
	s := newScheduler(clock.RealClock{})
	var mu sync.Mutex
	var order []string
	record := func(name string) task {
		return func(context.Context) {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
		}
	}
	// Queue before the single worker starts: it must pick by priority, not
	// by arrival.
	s.Now(priorityEvents, record("event"))
	s.Now(priorityBackground, record("register"))
	s.Now(priorityPod, record("pod"))
	s.Now(priorityHeartbeat, record("lease"))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx, 1); close(done) }()
	deadline := time.After(5 * time.Second)
	for {
		mu.Lock()
		n := len(order)
		mu.Unlock()
		if n == 4 {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("ran only %v", order)
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	<-done
	want := []string{"lease", "pod", "register", "event"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order = %v, want %v", order, want)
		}
	}
}

func TestSchedulerTimersFireInOrderAndNotEarly(t *testing.T) {
	s := newScheduler(clock.RealClock{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, 2)

	start := time.Now()
	got := make(chan int, 3)
	for _, ms := range []int{60, 20, 40} {
		s.After(time.Duration(ms)*time.Millisecond, priorityPod, func(context.Context) {
			if e := time.Since(start); e < time.Duration(ms)*time.Millisecond {
				t.Errorf("task due at %dms ran at %v", ms, e)
			}
			got <- ms
		})
	}
	var order []int
	for range 3 {
		select {
		case ms := <-got:
			order = append(order, ms)
		case <-time.After(5 * time.Second):
			t.Fatalf("timers did not fire; got %v", order)
		}
	}
	if order[0] != 20 || order[1] != 40 || order[2] != 60 {
		t.Errorf("order = %v, want [20 40 60]", order)
	}
}

func TestSchedulerStopsWorkers(t *testing.T) {
	s := newScheduler(clock.RealClock{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx, 4); close(done) }()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	s.Now(priorityPod, func(context.Context) { t.Error("task ran after the scheduler stopped") })
	if n := s.Pending()[priorityPod]; n != 0 {
		t.Errorf("%d tasks queued after stop", n)
	}
}

// TestSchedulerKeepsWorkersForHeartbeats fills every non-heartbeat slot with
// tasks that block, then checks that a heartbeat still runs at once.
func TestSchedulerKeepsWorkersForHeartbeats(t *testing.T) {
	s := newScheduler(clock.RealClock{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{}, 100)
	for range 20 {
		s.Now(priorityBackground, func(context.Context) {
			started <- struct{}{}
			<-release
		})
	}
	go s.Run(ctx, 8) // 8 workers: 6 for others, 2 kept for heartbeats
	for range 6 {
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("background tasks did not start")
		}
	}
	select {
	case <-started:
		t.Fatal("a 7th background task took a worker kept for heartbeats")
	case <-time.After(100 * time.Millisecond):
	}
	ran := make(chan struct{})
	s.Now(priorityHeartbeat, func(context.Context) { close(ran) })
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("heartbeat waited behind blocked background tasks")
	}
}
