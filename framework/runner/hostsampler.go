package runner

import (
	"context"
	"k8s.io/utils/clock"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/kscale/kscale/measurements"
	"github.com/kscale/kscale/measurements/procstat"
)

// hostSampleInterval is how often the host's CPU is read: fine enough for
// a violating window of a few seconds (a mean over an interval that
// overlaps the window stands for it), cheap (one small file read).
const hostSampleInterval = 5 * time.Second

// hostSample is the machine's cumulative CPU time at an instant.
type hostSample struct {
	At  time.Time
	CPU procstat.MachineCPU
}

// hostSampler reads the machine's CPU time from start until stop, so that
// a violation can be told apart from a host too busy to run the cluster
// (see saturation.go). read and the clock are injected for tests.
type hostSampler struct {
	read  func() (procstat.MachineCPU, error)
	clock clock.PassiveClock

	mu      sync.Mutex
	samples []hostSample
	// failed keeps a read error from being logged every interval.
	failed bool
	cancel context.CancelFunc
	done   chan struct{}
}

func newHostSampler(read func() (procstat.MachineCPU, error), clk clock.PassiveClock) *hostSampler {
	return &hostSampler{read: read, clock: clk}
}

// runsLocally reports whether the run's cluster has a process on this
// machine: only then does this machine's load bear on what was measured.
func runsLocally(components []measurements.Component) bool {
	for _, c := range components {
		if c.PID > 0 {
			return true
		}
	}
	return false
}

// start samples at once, then every interval until ctx ends or stop.
func (h *hostSampler) start(ctx context.Context, interval time.Duration) {
	ctx, h.cancel = context.WithCancel(ctx)
	h.done = make(chan struct{})
	h.sample()
	go func() {
		defer close(h.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				h.sample()
			}
		}
	}()
}

// stop ends the sampling with a last sample, so that a window ending at
// the last gather is covered. Safe on nil, before start and more than
// once.
func (h *hostSampler) stop() {
	if h == nil || h.cancel == nil {
		return
	}
	h.cancel()
	<-h.done
	h.cancel = nil
	h.sample()
}

// sample reads the machine once. A failed read is skipped: the windows
// around it are covered by the neighbouring samples.
func (h *hostSampler) sample() {
	cpu, err := h.read()
	at := h.clock.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		if !h.failed {
			klog.InfoS("Cannot read the host's CPU time; violations will not say whether the host was saturated", "err", err)
		}
		h.failed = true
		return
	}
	h.samples = append(h.samples, hostSample{At: at, CPU: cpu})
}

// Samples returns the samples so far, oldest first; nil on a nil sampler.
func (h *hostSampler) Samples() []hostSample {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hostSample(nil), h.samples...)
}
