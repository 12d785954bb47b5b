package fleet

import (
	"container/heap"
	"context"
	"k8s.io/utils/clock"
	"sync"
	"time"
)

// Priorities of fleet work. Workers always take the highest first: lease
// renewals must not wait behind registrations, or nodes of a big fleet go
// NotReady while others are still registering.
type priority int

const (
	priorityHeartbeat  priority = iota // lease renewals
	priorityPod                        // pod status, deletions
	priorityStartup                    // a registering node's next steps to Ready: before the next node registers
	priorityBackground                 // registration, node status reports, watches
	priorityEvents                     // events: the kubelet sends them asynchronously too
	numPriorities
)

// task is one unit of fleet work, usually one API call.
type task func(ctx context.Context)

type timed struct {
	at  time.Time
	pri priority
	fn  task
}

type timerHeap []timed

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)        { *h = append(*h, x.(timed)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

// scheduler runs tasks at given times on a fixed pool of workers, by
// priority. One timer goroutine and the workers serve every node, so a node
// costs no goroutine of its own for its periodic work.
type scheduler struct {
	mu     sync.Mutex
	timers timerHeap
	queues [numPriorities][]task
	wake   chan struct{} // the timer goroutine: the earliest timer changed
	ready  *sync.Cond    // workers: a queue got a task, or a worker freed up
	closed bool
	clock  clock.Clock
	// Workers kept for heartbeats: other tasks may occupy at most
	// maxOthers workers at once, so a burst of slow calls (registrations
	// against a loaded apiserver) never leaves a lease renewal waiting for
	// a worker.
	maxOthers  int
	busyOthers int
}

func newScheduler(clk clock.Clock) *scheduler {
	s := &scheduler{wake: make(chan struct{}, 1), clock: clk}
	s.ready = sync.NewCond(&s.mu)
	return s
}

// At runs fn at time at (or as soon after as a worker is free).
func (s *scheduler) At(at time.Time, pri priority, fn task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if !at.After(s.clock.Now()) {
		s.queues[pri] = append(s.queues[pri], fn)
		s.ready.Signal()
		return
	}
	heap.Push(&s.timers, timed{at: at, pri: pri, fn: fn})
	if s.timers[0].at.Equal(at) {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// After runs fn after d.
func (s *scheduler) After(d time.Duration, pri priority, fn task) {
	s.At(s.clock.Now().Add(d), pri, fn)
}

// Now runs fn as soon as a worker is free.
func (s *scheduler) Now(pri priority, fn task) { s.At(time.Time{}, pri, fn) }

// Run starts the timer goroutine and workers, and returns once ctx is done
// and every worker has finished its current task.
func (s *scheduler) Run(ctx context.Context, workers int) {
	s.mu.Lock()
	s.maxOthers = max(1, workers-max(1, workers/4))
	s.mu.Unlock()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				fn, pri, ok := s.next()
				if !ok {
					return
				}
				fn(ctx)
				if pri != priorityHeartbeat {
					s.mu.Lock()
					s.busyOthers--
					s.ready.Signal()
					s.mu.Unlock()
				}
			}
		}()
	}
	timer := s.clock.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		timer.Reset(s.release())
		select {
		case <-ctx.Done():
			s.mu.Lock()
			s.closed = true
			s.ready.Broadcast()
			s.mu.Unlock()
			wg.Wait()
			return
		case <-timer.C():
		case <-s.wake:
		}
	}
}

// release moves due timers to their queues and returns the wait until the
// next one.
func (s *scheduler) release() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	for len(s.timers) > 0 && !s.timers[0].at.After(now) {
		t := heap.Pop(&s.timers).(timed)
		s.queues[t.pri] = append(s.queues[t.pri], t.fn)
		s.ready.Signal()
	}
	if len(s.timers) == 0 {
		return time.Hour
	}
	return s.timers[0].at.Sub(now)
}

// next blocks until a task may run and returns the one of highest priority.
func (s *scheduler) next() (task, priority, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.closed {
			return nil, 0, false
		}
		for p := range s.queues {
			pri := priority(p)
			if pri != priorityHeartbeat && s.busyOthers >= s.maxOthers {
				break
			}
			if q := s.queues[p]; len(q) > 0 {
				fn := q[0]
				q[0] = nil
				s.queues[p] = q[1:]
				if len(s.queues[p]) == 0 {
					s.queues[p] = q[:0:0] // let a drained backing array go
				}
				if pri != priorityHeartbeat {
					s.busyOthers++
				}
				return fn, pri, true
			}
		}
		s.ready.Wait()
	}
}

// Pending returns the number of queued (due, not yet running) tasks per priority.
func (s *scheduler) Pending() [numPriorities]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n [numPriorities]int
	for p := range s.queues {
		n[p] = len(s.queues[p])
	}
	return n
}
