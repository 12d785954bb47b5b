package measurements

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

func init() {
	for _, p := range []struct{ method, kind string }{
		{"CPUProfile", "profile"}, {"MemoryProfile", "heap"}, {"BlockProfile", "block"},
	} {
		Register(p.method, Informational, func(string) Measurement { return &profile{method: p.method, kind: p.kind} })
	}
}

const (
	// profileInterval is how often a profile is taken between start and
	// gather, clusterloader2's period.
	profileInterval = 5 * time.Minute
	// cpuProfileSeconds is how long a CPU profile samples.
	cpuProfileSeconds = 30
)

// profile is CPUProfile, MemoryProfile and BlockProfile: between `start`
// and `gather` the pprof profile of kind of the component named by
// componentName (kube-apiserver, kube-controller-manager, kube-scheduler,
// etcd) is taken every profileInterval, and once more at gather when none
// was, and each is saved in the report folder as
// <Method>_<component>_<time>.pprof. The component is reached at its own
// endpoint on the local provider, and the apiserver through the run's
// client elsewhere; a component the run cannot reach is not measured.
type profile struct {
	method, kind string
	// interval and seconds override profileInterval and cpuProfileSeconds
	// (tests).
	interval time.Duration
	seconds  int

	mu        sync.Mutex
	component string
	fetch     func(ctx context.Context, path string) ([]byte, error)
	files     map[string][]byte
	errs      []error
	poller    *poller
}

func (p *profile) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather")
	if err != nil {
		return nil, err
	}
	if action == "start" {
		name, err := params.String("componentName", "")
		if err != nil {
			return nil, err
		}
		if name == "" {
			return nil, errors.New("param componentName is required (kube-apiserver, kube-controller-manager, kube-scheduler or etcd)")
		}
		return nil, p.start(ctx, env, name)
	}
	return p.gather(ctx, env)
}

func (p *profile) start(ctx context.Context, env *Env, name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.poller != nil {
		klog.V(2).InfoS("Profile already started", "method", p.method, "component", p.component)
		return nil
	}
	p.component, p.files, p.errs = name, map[string][]byte{}, nil
	p.fetch = profileFetcher(env, name)
	if p.fetch == nil {
		return nil // not measured, said at gather
	}
	interval := p.interval
	if interval <= 0 {
		interval = profileInterval
	}
	p.poller = startPollerLater(ctx, interval, func(ctx context.Context, _ time.Time) { p.take(ctx, env) })
	return nil
}

// profileFetcher returns how to GET a pprof path of the named component,
// or nil when the run cannot reach it.
func profileFetcher(env *Env, name string) func(context.Context, string) ([]byte, error) {
	if env == nil {
		return nil
	}
	if c := env.Component(name); c != nil && c.MetricsURL != "" {
		base, err := url.Parse(c.MetricsURL)
		if err != nil {
			return nil
		}
		return func(ctx context.Context, path string) ([]byte, error) {
			u := *base
			u.Path, u.RawQuery = "", ""
			return c.Get(ctx, u.String()+path)
		}
	}
	if name == "kube-apiserver" && env.Client != nil {
		return func(ctx context.Context, path string) ([]byte, error) {
			p, query, _ := strings.Cut(path, "?")
			req := env.Client.CoreV1().RESTClient().Get().AbsPath(p)
			if v, err := url.ParseQuery(query); err == nil {
				for k, vs := range v {
					req = req.Param(k, vs[0])
				}
			}
			return req.DoRaw(ctx)
		}
	}
	return nil
}

// take saves one profile, or keeps why it could not.
func (p *profile) take(ctx context.Context, env *Env) {
	path := "/debug/pprof/" + p.kind
	if p.kind == "profile" {
		seconds := p.seconds
		if seconds <= 0 {
			seconds = cpuProfileSeconds
		}
		path += fmt.Sprintf("?seconds=%d", seconds)
	}
	body, err := p.fetch(ctx, path)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			p.errs = append(p.errs, fmt.Errorf("%s of %s: %w", p.kind, p.component, err))
		}
		return
	}
	name := fmt.Sprintf("%s_%s_%s.pprof", p.method, p.component, env.now().UTC().Format("2006-01-02T15-04-05Z"))
	p.files[name] = body
}

func (p *profile) gather(ctx context.Context, env *Env) ([]Summary, error) {
	p.mu.Lock()
	component, fetch, polling := p.component, p.fetch, p.poller
	p.mu.Unlock()
	if component == "" {
		return nil, fmt.Errorf("%s was not started", p.method)
	}
	if fetch == nil {
		return nil, notMeasuredf("the run cannot reach %s's pprof endpoint (the local provider's components, or the apiserver through the run's client)", component)
	}
	polling.stop()
	p.mu.Lock()
	taken := len(p.files)
	p.mu.Unlock()
	if taken == 0 {
		p.take(ctx, env)
	}
	p.mu.Lock()
	defer func() {
		p.component, p.fetch, p.poller, p.files = "", nil, nil, nil
		p.mu.Unlock()
	}()
	if len(p.files) == 0 {
		return nil, notMeasuredf("no %s profile of %s: %v", p.kind, component, errors.Join(p.errs...))
	}
	s := Summary{
		Name:     p.method + "_" + component,
		Files:    p.files,
		Headline: map[string]float64{"profiles": float64(len(p.files))},
	}
	if len(p.errs) > 0 {
		klog.InfoS("Some profiles could not be taken", "method", p.method, "component", component, "errors", errors.Join(p.errs...))
	}
	return []Summary{s}, nil
}
