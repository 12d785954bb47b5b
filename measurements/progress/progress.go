package progress

import (
	"fmt"
	"io"
	"k8s.io/utils/clock"
	"sync"
	"time"
)

// Reporter prints the progress of one wait towards a known total.
type Reporter struct {
	out      io.Writer
	what     string
	total    int
	interval time.Duration
	clock    clock.PassiveClock

	mu    sync.Mutex
	start time.Time
	last  time.Time
	// printed is what the last line said.
	printed line
}

// line is what a progress line says.
type line struct {
	done, total int
	note        string
}

// New returns a Reporter printing to out (nil for silence) at most once per
// interval, e.g. New(os.Stderr, "nodes ready", 5000, 2*time.Second).
func New(out io.Writer, what string, total int, interval time.Duration) *Reporter {
	r := &Reporter{out: out, what: what, total: total, interval: interval, clock: clock.RealClock{}}
	r.start = r.clock.Now()
	r.printed = line{done: -1}
	return r
}

// Update reports done items. It prints when the interval has passed since the
// last line, and always on completion.
func (r *Reporter) Update(done int) {
	if r == nil {
		return
	}
	r.Report(done, r.total, "")
}

// Report is Update with the total as it is now (a wait whose target grew)
// and a note on what the count leaves out ("199 running but not ready"),
// printed after the count. A line that would say what the last one said
// is not printed.
func (r *Reporter) Report(done, total int, note string) {
	if r == nil || r.out == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	l := line{done: done, total: total, note: note}
	// Reaching the total prints at once, once; a note that changes after
	// waits for the interval like any other line.
	complete := done >= total && (done != r.printed.done || total != r.printed.total)
	if l == r.printed || (!complete && now.Sub(r.last) < r.interval) {
		return
	}
	r.last = now
	r.printed = l
	fmt.Fprintln(r.out, r.line(l, now))
}

func (r *Reporter) line(l line, now time.Time) string {
	elapsed := now.Sub(r.start)
	pct := 100.0
	if l.total > 0 {
		pct = 100 * float64(l.done) / float64(l.total)
	}
	s := fmt.Sprintf("%s %d/%d", r.what, l.done, l.total)
	if l.note != "" {
		s += ", " + l.note
	}
	s += fmt.Sprintf("  %3.0f%%  %s", pct, elapsed.Round(time.Second))
	switch {
	case l.done >= l.total:
		s += "  done"
	case l.done > 0:
		eta := time.Duration(float64(elapsed) / float64(l.done) * float64(l.total-l.done))
		s += fmt.Sprintf("  ETA %s", eta.Round(time.Second))
	}
	return s
}
