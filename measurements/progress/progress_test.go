package progress

import (
	"bytes"
	testingclock "k8s.io/utils/clock/testing"
	"strings"
	"testing"
	"time"
)

func TestReporter(t *testing.T) {
	var out bytes.Buffer
	clock := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r := New(&out, "nodes ready", 100, 2*time.Second)
	r.clock = clock
	r.start = clock.Now()

	step := func(d time.Duration, done int) {
		clock.Step(d)
		r.Update(done)
	}
	step(1*time.Second, 10)  // first update prints at once
	step(1*time.Second, 20)  // within the interval: quiet
	step(2*time.Second, 40)  // prints, ETA from the average rate
	step(0, 40)              // same count: quiet
	step(1*time.Second, 100) // completion always prints

	want := []string{
		"nodes ready 10/100   10%  1s  ETA 9s",
		"nodes ready 40/100   40%  4s  ETA 6s",
		"nodes ready 100/100  100%  5s  done",
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(got) != len(want) {
		t.Fatalf("got %d lines:\n%s\nwant:\n%s", len(got), out.String(), strings.Join(want, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestNilWriterIsQuiet(t *testing.T) {
	New(nil, "x", 1, 0).Update(1) // must not panic
	var r *Reporter
	r.Update(1)
}

// TestReporterNote: a note follows the count, a changed note or total is
// a new line once the interval passed, and the ETA uses the total given.
func TestReporterNote(t *testing.T) {
	var out bytes.Buffer
	clock := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r := New(&out, "pods running", 3000, 2*time.Second)
	r.clock = clock
	r.start = clock.Now()

	step := func(d time.Duration, done, total int, note string) {
		clock.Step(d)
		r.Report(done, total, note)
	}
	step(10*time.Second, 2801, 3000, "199 running but not ready")
	step(1*time.Second, 2801, 3000, "199 running but not ready") // the same line: quiet
	step(0, 2801, 3000, "150 running but not ready")             // a changed note within the interval: quiet
	step(2*time.Second, 2801, 3000, "150 running but not ready") // past the interval: prints
	step(5*time.Second, 3000, 4000, "")                          // a grown total
	step(1*time.Second, 4000, 4000, "")                          // completion always prints
	step(0, 4000, 4000, "3 terminating")                         // after it, a new note waits for the interval

	want := []string{
		"pods running 2801/3000, 199 running but not ready   93%  10s  ETA 1s",
		"pods running 2801/3000, 150 running but not ready   93%  13s  ETA 1s",
		"pods running 3000/4000   75%  18s  ETA 6s",
		"pods running 4000/4000  100%  19s  done",
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(got) != len(want) {
		t.Fatalf("got %d lines:\n%s\nwant:\n%s", len(got), out.String(), strings.Join(want, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, got[i], want[i])
		}
	}
}
