package measurements

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/klog/v2"
)

func init() {
	Register("RestartApiserver", Informational, func(string) Measurement { return &restartAPIServer{} })
}

const (
	// clusterloader2's defaults.
	restartDefaultDownSeconds  = 30
	restartDefaultReadyTimeout = 10 * time.Minute
	restartReadyzPoll          = 2 * time.Second
)

// restartAPIServer is RestartApiserver: the apiserver is stopped, kept
// down for downSeconds, started again, and waited for until its /readyz
// answers ok (readyTimeout). On the local provider the cluster's supervisor
// does the restart; a run that cannot restart its apiserver reports it not
// measured.
type restartAPIServer struct {
	// poll overrides restartReadyzPoll (tests).
	poll time.Duration
}

func (r *restartAPIServer) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	down, err := params.Int("downSeconds", restartDefaultDownSeconds)
	if err != nil {
		return nil, err
	}
	if down < 0 {
		return nil, fmt.Errorf("param downSeconds: %d is negative", down)
	}
	readyTimeout, err := params.Duration("readyTimeout", restartDefaultReadyTimeout)
	if err != nil {
		return nil, err
	}
	if env == nil || env.RestartComponent == nil {
		return nil, notMeasuredf("the run cannot restart the apiserver: only a local cluster's supervisor can")
	}
	apiserver := env.Component("kube-apiserver")
	if apiserver == nil || apiserver.HealthURL == "" {
		return nil, notMeasuredf("the run does not know the apiserver's /readyz")
	}
	began := env.now()
	if err := env.RestartComponent(ctx, "kube-apiserver", time.Duration(down)*time.Second); err != nil {
		return nil, fmt.Errorf("restarting kube-apiserver: %w", err)
	}
	poll := r.poll
	if poll <= 0 {
		poll = restartReadyzPoll
	}
	tctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	err = waitPoll(tctx, poll, func(ctx context.Context) (bool, error) {
		_, err := apiserver.Get(ctx, apiserver.HealthURL)
		return err == nil, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("kube-apiserver not ready %v after its restart", readyTimeout)
		}
		return nil, err
	}
	took := env.now().Sub(began)
	klog.InfoS("RestartApiserver: kube-apiserver ready again", "down", time.Duration(down)*time.Second, "took", took.Round(time.Millisecond))
	return []Summary{{Headline: map[string]float64{
		"down s": float64(down), "restart to ready s": took.Seconds() - float64(down),
	}}}, nil
}
