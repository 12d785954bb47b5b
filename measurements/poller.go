package measurements

import (
	"context"
	"sync"
	"time"
)

// poller calls a function at a fixed interval in the background from start
// until stop, for the measurements that sample between their start and
// gather actions (resource usage, availability).
type poller struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// startPoller calls sample once before it returns, so that even a gather
// right after start has a sample, and then every interval until stop is
// called or ctx ends. ctx is the run's context, not one call's: the poller
// outlives the start action that made it.
func startPoller(ctx context.Context, interval time.Duration, sample func(ctx context.Context, at time.Time)) *poller {
	ctx, cancel := context.WithCancel(ctx)
	sample(ctx, time.Now())
	return pollEvery(ctx, cancel, interval, sample)
}

// startPollerLater is startPoller without the sample at start: the first
// comes one interval later (a sample that takes long, a CPU profile).
func startPollerLater(ctx context.Context, interval time.Duration, sample func(ctx context.Context, at time.Time)) *poller {
	ctx, cancel := context.WithCancel(ctx)
	return pollEvery(ctx, cancel, interval, sample)
}

func pollEvery(ctx context.Context, cancel context.CancelFunc, interval time.Duration, sample func(ctx context.Context, at time.Time)) *poller {
	p := &poller{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case at := <-t.C:
				sample(ctx, at)
			}
		}
	}()
	return p
}

// stop ends the polling and waits until no sample is running, so the caller
// may read what the samples wrote without a race.
func (p *poller) stop() {
	if p == nil {
		return
	}
	p.once.Do(p.cancel)
	<-p.done
}
