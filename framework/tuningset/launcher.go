package tuningset

import (
	"context"
	"sync"
)

// launcher runs each action in its own goroutine and waits for all of them,
// so the tuning-set types only decide when an action starts.
type launcher struct {
	ctx     context.Context
	action  func(context.Context, int)
	onSpawn func(index int)
	wg      sync.WaitGroup
}

func (e env) launcher(ctx context.Context, action func(context.Context, int)) *launcher {
	return &launcher{ctx: ctx, action: action, onSpawn: e.onSpawn}
}

// launch starts action index; done, when not nil, runs after the action
// returns (parallelismLimitedLoad frees its slot there).
func (l *launcher) launch(index int, done func()) {
	if l.onSpawn != nil {
		l.onSpawn(index)
	}
	l.wg.Go(func() {
		if done != nil {
			defer done()
		}
		l.action(l.ctx, index)
	})
}

func (l *launcher) wait() { l.wg.Wait() }
