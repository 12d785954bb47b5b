package tuningset

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// alarm waits for absolute deadlines with one reusable timer. Waiting for a
// deadline, rather than sleeping a gap, keeps the schedule anchored: time
// lost to a late wake-up is not added to every later start.
type alarm struct {
	clock clock.Clock
	timer clock.Timer
}

// waitUntil returns nil at deadline, at once if the deadline has passed (a
// late schedule catches up instead of drifting), or ctx.Err() when ctx has
// ended, even if the deadline came at the same moment.
func (a *alarm) waitUntil(ctx context.Context, deadline time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d := deadline.Sub(a.clock.Now())
	if d <= 0 {
		return nil
	}
	if a.timer == nil {
		a.timer = a.clock.NewTimer(d)
	} else {
		a.timer.Reset(d)
	}
	select {
	case <-a.timer.C():
		return ctx.Err()
	case <-ctx.Done():
		a.stop()
		return ctx.Err()
	}
}

// stop releases the timer; a stopped alarm may be used again.
func (a *alarm) stop() {
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
}
