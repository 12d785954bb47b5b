package progress

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Reporter prints the progress of one wait towards a known total.
type Reporter struct {
	out      io.Writer
	what     string
	total    int
	interval time.Duration
	now      func() time.Time

	mu      sync.Mutex
	start   time.Time
	last    time.Time
	printed int
}

// New returns a Reporter printing to out (nil for silence) at most once per
// interval, e.g. New(os.Stderr, "nodes ready", 5000, 2*time.Second).
func New(out io.Writer, what string, total int, interval time.Duration) *Reporter {
	r := &Reporter{out: out, what: what, total: total, interval: interval, now: time.Now}
	r.start = r.now()
	r.printed = -1
	return r
}

// Update reports done items. It prints when the interval has passed since the
// last line, and always on completion.
func (r *Reporter) Update(done int) {
	if r == nil || r.out == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	complete := done >= r.total
	if done == r.printed || (!complete && now.Sub(r.last) < r.interval) {
		return
	}
	r.last = now
	r.printed = done
	fmt.Fprintln(r.out, r.line(done, now))
}

func (r *Reporter) line(done int, now time.Time) string {
	elapsed := now.Sub(r.start)
	pct := 100.0
	if r.total > 0 {
		pct = 100 * float64(done) / float64(r.total)
	}
	s := fmt.Sprintf("%s %d/%d  %3.0f%%  %s", r.what, done, r.total, pct, elapsed.Round(time.Second))
	switch {
	case done >= r.total:
		s += "  done"
	case done > 0:
		eta := time.Duration(float64(elapsed) / float64(done) * float64(r.total-done))
		s += fmt.Sprintf("  ETA %s", eta.Round(time.Second))
	}
	return s
}
