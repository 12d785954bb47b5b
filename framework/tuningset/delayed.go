package tuningset

import (
	"context"
	"time"
)

// delayed is a tuning set with an initialDelay: every Execute with actions
// to start waits delay first, then paces them as the set's type does.
type delayed struct {
	env
	delay time.Duration
	set   TuningSet
}

func (d *delayed) Execute(ctx context.Context, actions int, action func(context.Context, int)) error {
	if err := checkExecute(actions, action); err != nil {
		return err
	}
	if actions > 0 {
		a := alarm{clock: d.clock}
		err := a.waitUntil(ctx, d.clock.Now().Add(d.delay))
		a.stop()
		if err != nil {
			return err
		}
	}
	return d.set.Execute(ctx, actions, action)
}
