package tuningset

import "context"

// parallelismLimitedLoad starts actions as fast as possible with at most
// limit in flight, which bounds load by concurrency rather than by rate.
// The limit holds per Execute: two phases naming the set each get limit.
type parallelismLimitedLoad struct {
	env   env
	limit int
}

func (p *parallelismLimitedLoad) Execute(ctx context.Context, actions int, action func(context.Context, int)) error {
	if err := checkExecute(actions, action); err != nil {
		return err
	}
	l := p.env.launcher(ctx, action)
	slots := make(chan struct{}, p.limit)
	free := func() { <-slots }
	var err error
	for i := range actions {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		// Checked even when a slot was free: select picks at random when
		// both are ready, and no action may start after ctx ended.
		if err = ctx.Err(); err != nil {
			break
		}
		l.launch(i, free)
	}
	l.wait()
	return err
}
