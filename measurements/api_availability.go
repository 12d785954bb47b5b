package measurements

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kscale/kscale/measurements/metrics"
)

func init() { Register("APIAvailability", SLO, func(string) Measurement { return &apiAvailability{} }) }

// apiAvailability asks the apiserver's /readyz at a fixed frequency from
// start to gather and reports the share of answers that were ok, and the
// longest stretch without one: the availability a client saw, including
// restarts and overload.
//
// pause and unpause (as clusterloader2's) leave out the polls between
// them, so that a planned outage (RestartApiserver) is not counted.
//
// Params: action start|pause|unpause|gather; pollFrequency (default 1s); pollTimeout
// (default the poll frequency, capped at 5s: a hung answer counts as down);
// threshold, the minimum availability in percent (default 0, no verdict).
type apiAvailability struct {
	poller *poller

	mu         sync.Mutex
	ok, total  int
	downSince  time.Time // zero while available
	longest    time.Duration
	lastReason string
	paused     bool
}

func (a *apiAvailability) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "pause", "unpause", "gather")
	if err != nil {
		return nil, err
	}
	switch action {
	case "pause", "unpause":
		if a.poller == nil {
			return nil, fmt.Errorf("%s without start", action)
		}
		a.setPaused(action == "pause", env.now())
		return nil, nil
	case "start":
		freq, err := params.Duration("pollFrequency", time.Second)
		if err != nil {
			return nil, err
		}
		if freq <= 0 {
			return nil, fmt.Errorf("param pollFrequency: must be positive, got %s", freq)
		}
		timeout, err := params.Duration("pollTimeout", min(freq, 5*time.Second))
		if err != nil {
			return nil, err
		}
		client, err := unthrottledClient(env)
		if err != nil {
			return nil, err
		}
		a.poller.stop()
		a.mu.Lock()
		a.ok, a.total, a.downSince, a.longest, a.lastReason, a.paused = 0, 0, time.Time{}, 0, "", false
		a.mu.Unlock()
		a.poller = startPoller(context.WithoutCancel(ctx), freq, func(ctx context.Context, at time.Time) {
			a.poll(ctx, client, timeout, at)
		})
		return nil, nil
	}
	threshold, err := params.Float("threshold", 0)
	if err != nil {
		return nil, err
	}
	if a.poller == nil {
		return nil, fmt.Errorf("gather without start")
	}
	a.poller.stop()
	return a.summarise(threshold, env.now())
}

// unthrottledClient is a client of its own for a poller: the run's client
// rate limit would delay polls and count the wait as an outage.
func unthrottledClient(env *Env) (kubernetes.Interface, error) {
	if env.Config == nil {
		if env.Client == nil {
			return nil, notMeasuredf("no client for the cluster")
		}
		return env.Client, nil
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst, cfg.RateLimiter = -1, 0, nil
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the availability client: %w", err)
	}
	return client, nil
}

func (a *apiAvailability) poll(ctx context.Context, client kubernetes.Interface, timeout time.Duration, at time.Time) {
	a.mu.Lock()
	paused := a.paused
	a.mu.Unlock()
	if paused {
		return // nor is a poll that began in a pause and ends after it counted
	}
	pollCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := client.CoreV1().RESTClient().Get().AbsPath("/readyz").DoRaw(pollCtx)
	if ctx.Err() != nil {
		return // stopped: not an answer of the apiserver
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.paused {
		return
	}
	a.total++
	if err == nil && string(body) == "ok" {
		a.ok++
		if !a.downSince.IsZero() {
			a.longest = max(a.longest, at.Sub(a.downSince))
			a.downSince = time.Time{}
		}
		return
	}
	if err != nil {
		a.lastReason = err.Error()
	} else {
		a.lastReason = fmt.Sprintf("/readyz answered %q", body)
	}
	if a.downSince.IsZero() {
		a.downSince = at
	}
}

// setPaused starts or ends a pause; an outage under way when the pause
// starts ends there.
func (a *apiAvailability) setPaused(paused bool, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if paused && !a.paused && !a.downSince.IsZero() {
		a.longest = max(a.longest, now.Sub(a.downSince))
		a.downSince = time.Time{}
	}
	a.paused = paused
}

func (a *apiAvailability) summarise(threshold float64, now time.Time) ([]Summary, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.total == 0 {
		return nil, notMeasuredf("no poll of /readyz completed between start and gather")
	}
	longest := a.longest
	if !a.downSince.IsZero() {
		longest = max(longest, now.Sub(a.downSince))
	}
	pct := 100 * float64(a.ok) / float64(a.total)
	s := Summary{
		Name: "APIAvailability",
		PerfData: &metrics.PerfData{Version: metrics.PerfDataVersion, DataItems: []metrics.DataItem{{
			Data: map[string]float64{"AvailabilityPercentage": pct, "LongestUnavailablePeriod": longest.Seconds()},
			Unit: "%", Labels: map[string]string{"Metric": "cluster"},
		}}},
		Headline: map[string]float64{"availability %": pct, "longest unavailable s": longest.Seconds(), "polls": float64(a.total)},
	}
	if threshold > 0 {
		s.Thresholds = map[string]float64{"availability %": threshold}
		if pct < threshold {
			item := fmt.Sprintf("apiserver available %.2f%% of %d polls < %.2f%% (longest outage %s; last error: %s)",
				pct, a.total, threshold, longest.Round(time.Millisecond), a.lastReason)
			return []Summary{s}, violations([]string{item})
		}
	}
	return []Summary{s}, nil
}
