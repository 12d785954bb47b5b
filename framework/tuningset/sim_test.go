package tuningset

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// trackingClock is a fake clock that knows the deadline of every pending
// timer, so a test can jump straight to the next deadline and observe start
// times exactly, with no grid to round them to.
type trackingClock struct {
	*testingclock.FakeClock
	mu      sync.Mutex
	pending map[*trackedTimer]struct{}
}

func newTrackingClock(t0 time.Time) *trackingClock {
	return &trackingClock{FakeClock: testingclock.NewFakeClock(t0), pending: map[*trackedTimer]struct{}{}}
}

type trackedTimer struct {
	clock.Timer
	c      *trackingClock
	target time.Time
}

func (c *trackingClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &trackedTimer{Timer: c.FakeClock.NewTimer(d), c: c, target: c.Now().Add(d)}
	c.pending[t] = struct{}{}
	return t
}

func (t *trackedTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.target = t.c.Now().Add(d)
	t.c.pending[t] = struct{}{}
	return t.Timer.Reset(d)
}

func (t *trackedTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	delete(t.c.pending, t)
	return t.Timer.Stop()
}

// advance moves time to the earliest pending deadline, firing its timers.
func (c *trackingClock) advance() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	var next time.Time
	for t := range c.pending {
		if next.IsZero() || t.target.Before(next) {
			next = t.target
		}
	}
	if next.IsZero() {
		return false
	}
	c.SetTime(next)
	for t := range c.pending {
		if !t.target.After(next) {
			delete(c.pending, t)
		}
	}
	return true
}

var simT0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// sim runs Executes on a trackingClock and records when each action started.
type sim struct {
	t     *testing.T
	clock *trackingClock

	mu       sync.Mutex
	launched []int // in launch order, seen synchronously by the spawn hook
	starts   []start
}

type start struct {
	tag   string
	index int
	at    time.Duration // since simT0
}

func newSim(t *testing.T) *sim {
	return &sim{t: t, clock: newTrackingClock(simT0)}
}

func (s *sim) opts(extra ...Option) []Option {
	return append([]Option{WithClock(s.clock), withSpawnHook(s.onSpawn)}, extra...)
}

func (s *sim) onSpawn(index int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.launched = append(s.launched, index)
}

// record is an action that notes its start and returns.
func (s *sim) record(ctx context.Context, index int) { s.recordAs("")(ctx, index) }

func (s *sim) recordAs(tag string) func(context.Context, int) {
	return func(_ context.Context, index int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.starts = append(s.starts, start{tag: tag, index: index, at: s.clock.Since(simT0)})
	}
}

// settled says whether time may move: every launched action has recorded
// its start and waiters timers are pending.
func (s *sim) settled(waiters int) bool {
	s.mu.Lock()
	done := len(s.launched) == len(s.starts)
	s.mu.Unlock()
	return done && s.clock.Waiters() == waiters
}

// run runs execs concurrently. Whenever every unfinished exec waits on its
// timer and every launched action has recorded its start, it moves time to
// the next deadline. It fails the test if they do not finish in 5 s of real
// time.
func (s *sim) run(execs ...func() error) []error {
	s.t.Helper()
	errs := make([]error, len(execs))
	var running atomic.Int64
	running.Store(int64(len(execs)))
	var wg sync.WaitGroup
	for i, exec := range execs {
		wg.Go(func() {
			defer running.Add(-1)
			errs[i] = exec()
		})
	}
	giveUp := time.Now().Add(5 * time.Second)
	for n := running.Load(); n > 0; n = running.Load() {
		if time.Now().After(giveUp) {
			s.t.Fatalf("Execute did not finish; fake time %v, starts %v", s.clock.Since(simT0), s.startsCopy())
		}
		if !s.settled(int(n)) || !s.clock.advance() {
			runtime.Gosched()
		}
	}
	wg.Wait()
	return errs
}

func (s *sim) startsCopy() []start {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.starts)
}

func (s *sim) launchedCopy() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.launched)
}

// startAt maps index to start offset for the actions tagged tag.
func (s *sim) startAt(tag string) map[int]time.Duration {
	m := map[int]time.Duration{}
	for _, st := range s.startsCopy() {
		if st.tag == tag {
			if _, dup := m[st.index]; dup {
				s.t.Errorf("action %q/%d started twice", tag, st.index)
			}
			m[st.index] = st.at
		}
	}
	return m
}

// eventually polls cond in real time, for the tests whose actions block.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	giveUp := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(giveUp) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func upTo(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
