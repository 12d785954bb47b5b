package tuningset

import (
	"context"

	"golang.org/x/time/rate"
)

// globalQPSLoad takes one token per start from a bucket of burst tokens
// refilled at qps. The bucket belongs to the set, not to an Execute, so
// phases running in parallel against one set share qps between them.
type globalQPSLoad struct {
	env     env
	limiter *rate.Limiter
}

func newGlobalQPSLoad(e env, qps float64, burst int) *globalQPSLoad {
	return &globalQPSLoad{env: e, limiter: rate.NewLimiter(rate.Limit(qps), burst)}
}

func (g *globalQPSLoad) Execute(ctx context.Context, actions int, action func(context.Context, int)) error {
	if err := checkExecute(actions, action); err != nil {
		return err
	}
	l := g.env.launcher(ctx, action)
	a := alarm{clock: g.env.clock}
	defer a.stop()
	var err error
	for i := range actions {
		if err = ctx.Err(); err != nil {
			break
		}
		// Reservations are taken at the injected clock's time (the
		// limiter's Wait would read the real clock) and waited for as an
		// absolute deadline.
		now := g.env.clock.Now()
		r := g.limiter.ReserveN(now, 1) // always OK: burst >= 1
		if err = a.waitUntil(ctx, now.Add(r.DelayFrom(now))); err != nil {
			r.CancelAt(g.env.clock.Now()) // give the unused token back to the other phases
			break
		}
		l.launch(i, nil)
	}
	l.wait()
	return err
}
