package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestReporter(t *testing.T) {
	var out bytes.Buffer
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := New(&out, "nodes ready", 100, 2*time.Second)
	r.now = func() time.Time { return clock }
	r.start = clock

	step := func(d time.Duration, done int) {
		clock = clock.Add(d)
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
