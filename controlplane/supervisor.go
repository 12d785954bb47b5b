package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/controlplane/clusterdir"
)

// How long a component gets to exit after SIGTERM before it is killed. The
// apiserver drains in-flight requests first; etcd syncs its WAL.
const stopGrace = 20 * time.Second

// Restart backoff for a component that keeps exiting.
const (
	minRestartDelay = 500 * time.Millisecond
	maxRestartDelay = 30 * time.Second
)

// supervisor owns the component processes of one cluster. Only the goroutine
// running Supervise touches state and procs; probes report back over channels.
type supervisor struct {
	dir    clusterdir.Dir
	binary string
	opts   *Options
	health *health
	state  *clusterdir.State
	procs  map[string]*process
	// exits receives every launched process once it has exited, until
	// stopping is closed.
	exits    chan *process
	stopping chan struct{}
}

// Supervise runs the cluster in dir until ctx is cancelled, then stops every
// component in reverse start order. It is the body of `kscale cluster
// supervise`; binary is the kscale executable to re-execute per component.
// The cluster folder must have been prepared by Up.
func Supervise(ctx context.Context, dirPath, binary string) error {
	dir, err := clusterdir.Open(dirPath)
	if err != nil {
		return err
	}
	lock, err := dir.TryLock()
	if errors.Is(err, clusterdir.ErrRunning) {
		return inputErrorf("a cluster is already running in %s", dir)
	}
	if err != nil {
		return err
	}
	defer lock.Unlock()

	opts, err := loadOptions(dir)
	if err != nil {
		return err
	}
	h, err := newHealth(dir, opts)
	if err != nil {
		return err
	}
	s := &supervisor{
		dir:      dir,
		binary:   binary,
		opts:     opts,
		health:   h,
		procs:    map[string]*process{},
		exits:    make(chan *process),
		stopping: make(chan struct{}),
		state: &clusterdir.State{
			SupervisorPID: os.Getpid(),
			Phase:         clusterdir.PhaseStarting,
			StartedAt:     time.Now(),
			APIServerURL:  apiServerURL(opts),
		},
	}
	for _, name := range opts.components() {
		healthURL, metricsURL := endpoints(opts, name)
		s.state.Components = append(s.state.Components, clusterdir.Component{
			Name: name, HealthURL: healthURL, MetricsURL: metricsURL, LogFile: dir.LogFile(name),
		})
	}
	s.publish()

	if err := s.start(ctx); err != nil {
		s.state.Phase = clusterdir.PhaseFailed
		s.state.Error = err.Error()
		s.publish()
		s.stopAll()
		if ctx.Err() != nil {
			return nil // stopped while starting: not a failure of the cluster
		}
		return err
	}
	now := time.Now()
	s.state.Phase = clusterdir.PhaseReady
	s.state.ReadyAt = &now
	s.publish()
	klog.InfoS("Cluster ready", "apiserver", s.state.APIServerURL, "after", now.Sub(s.state.StartedAt).Round(time.Millisecond))

	s.watch(ctx)

	s.state.Phase = clusterdir.PhaseStopping
	s.publish()
	s.stopAll()
	s.state.Phase = clusterdir.PhaseStopped
	s.publish()
	klog.InfoS("Cluster stopped")
	return nil
}

// start brings the components up in dependency order, those that depend on
// the same things together: etcd, the apiserver, then the controller-manager
// and the scheduler.
func (s *supervisor) start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.ReadyTimeout)
	defer cancel()
	for _, group := range startGroups(s.opts.components()) {
		for _, name := range group {
			if err := s.launch(name); err != nil {
				return err
			}
		}
		errs := make([]error, len(group))
		var wg sync.WaitGroup
		for i, name := range group {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.waitReady(ctx, s.procs[name])
			}()
		}
		wg.Wait()
		for i, name := range group {
			if errs[i] != nil {
				return errs[i]
			}
			s.markReady(name, s.procs[name])
		}
		if group[0] == clusterdir.APIServer {
			if err := s.releaseStaleLeases(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// releaseStaleLeases deletes the leader leases that the controller-manager
// and scheduler of an earlier run of this folder left behind. Their holders
// are gone — this supervisor holds the folder's lock and starts every
// component itself — but the new ones would wait out the lease (15 s) before
// leading. The scheduler releases its lease on a clean stop; the
// controller-manager only does so behind an alpha feature gate.
func (s *supervisor) releaseStaleLeases(ctx context.Context) error {
	for _, lease := range leaseNames {
		err := s.health.client.CoordinationV1().Leases("kube-system").Delete(ctx, lease, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("releasing stale lease kube-system/%s: %w", lease, err)
		}
	}
	return nil
}

func (s *supervisor) launch(name string) error {
	args, err := componentArgs(s.dir, s.opts, name)
	if err != nil {
		return err
	}
	// The Kubernetes components run in kscale's own binary; Prometheus is
	// its own program.
	argv := append([]string{s.binary, "cluster", "component", name, "--"}, args...)
	if name == clusterdir.Prometheus {
		argv = append([]string{s.opts.PrometheusBinary}, args...)
	}
	p, err := startComponent(s.dir, name, argv)
	if err != nil {
		return err
	}
	s.procs[name] = p
	go func() {
		select {
		case <-p.exited:
			select {
			case s.exits <- p:
			case <-s.stopping:
			}
		case <-s.stopping:
		}
	}()
	c := s.state.Component(name)
	c.PID = p.pid()
	c.Ready = false
	started := p.started
	c.StartedAt = &started
	s.publish()
	klog.V(1).InfoS("Started component", "component", name, "pid", p.pid())
	return nil
}

func (s *supervisor) markReady(name string, p *process) {
	if s.procs[name] != p { // a newer process replaced it meanwhile
		return
	}
	s.state.Component(name).Ready = true
	s.publish()
	klog.V(1).InfoS("Component ready", "component", name, "pid", p.pid(), "after", time.Since(p.started).Round(time.Millisecond))
}

// waitReady polls the component until it is ready, it exits, or ctx ends.
func (s *supervisor) waitReady(ctx context.Context, p *process) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		select {
		case <-p.exited:
			return p.exitError(s.dir)
		case <-ctx.Done():
			if last == nil {
				last = ctx.Err()
			}
			return fmt.Errorf("%s not ready: %v", p.name, last)
		case <-tick.C:
		}
		probeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		last = s.health.check(probeCtx, p.name, p.started)
		cancel()
		if last == nil {
			return nil
		}
	}
}

type readyEvent struct {
	name string
	proc *process
}

// dependencies: a component is only (re)started while these are ready. A
// controller-manager restarted while the apiserver is down would only crash
// again and climb its backoff.
var dependencies = map[string][]string{
	clusterdir.APIServer:         {clusterdir.Etcd},
	clusterdir.ControllerManager: {clusterdir.APIServer},
	clusterdir.Scheduler:         {clusterdir.APIServer},
	clusterdir.Prometheus:        {clusterdir.APIServer},
}

// startGroups orders the components by the depth of their dependencies.
func startGroups(components []string) [][]string {
	depth := map[string]int{}
	var groups [][]string
	for _, name := range components { // dependencies come first in this list
		d := 0
		for _, dep := range dependencies[name] {
			d = max(d, depth[dep]+1)
		}
		depth[name] = d
		if d == len(groups) {
			groups = append(groups, nil)
		}
		groups[d] = append(groups[d], name)
	}
	return groups
}

// watch restarts any component that exits, until ctx ends: after a backoff
// that doubles per consecutive failure, and once its dependencies are ready.
// A restarted component is marked ready again once its probe passes.
func (s *supervisor) watch(ctx context.Context) {
	ready := make(chan readyEvent)
	var probes sync.WaitGroup
	defer probes.Wait()
	probeCtx, cancelProbes := context.WithCancel(ctx)
	defer cancelProbes()

	delay := map[string]time.Duration{}
	due := map[string]time.Time{} // components waiting to be restarted
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := s.restartDue(due, func(name string, p *process) {
			probes.Add(1)
			go func() {
				defer probes.Done()
				if err := s.waitReady(probeCtx, p); err != nil {
					klog.ErrorS(err, "Restarted component not ready", "component", name)
					return
				}
				select {
				case ready <- readyEvent{name, p}:
				case <-probeCtx.Done():
				}
			}()
		})
		timer.Reset(next)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case ev := <-ready:
			s.markReady(ev.name, ev.proc)
			delay[ev.name] = 0
		case old := <-s.exits:
			name := old.name
			if s.procs[name] != old {
				continue
			}
			klog.ErrorS(old.exitError(s.dir), "Component exited; restarting", "component", name)
			s.state.Component(name).Ready = false
			s.state.Component(name).PID = 0
			s.publish()
			d := max(delay[name], minRestartDelay)
			delay[name] = min(2*d, maxRestartDelay)
			due[name] = time.Now().Add(d)
		}
	}
}

// restartDue launches the waiting components that are due and whose
// dependencies are ready, and returns how long until the next check.
func (s *supervisor) restartDue(due map[string]time.Time, launched func(string, *process)) time.Duration {
	next := time.Hour
	now := time.Now()
	for _, name := range s.opts.components() {
		at, waiting := due[name]
		if !waiting {
			continue
		}
		if wait := at.Sub(now); wait > 0 {
			next = min(next, wait)
			continue
		}
		if s.held(name) {
			next = min(next, holdPoll)
			continue
		}
		if !s.dependenciesReady(name) {
			next = min(next, 200*time.Millisecond) // a ready event will come; poll as a backstop
			continue
		}
		delete(due, name)
		s.state.Component(name).Restarts++
		if err := s.launch(name); err != nil {
			klog.ErrorS(err, "Restarting component failed", "component", name)
			due[name] = now.Add(maxRestartDelay)
			next = min(next, maxRestartDelay)
			continue
		}
		launched(name, s.procs[name])
	}
	return next
}

// holdPoll is how often a held component's hold file is looked at.
const holdPoll = 200 * time.Millisecond

// held reports whether the component's hold file (clusterdir.HoldFile)
// keeps it from being restarted.
func (s *supervisor) held(name string) bool {
	_, err := os.Stat(s.dir.HoldFile(name))
	return err == nil
}

func (s *supervisor) dependenciesReady(name string) bool {
	for _, dep := range dependencies[name] {
		if !s.state.Component(dep).Ready {
			return false
		}
	}
	return true
}

// stopAll stops the components in reverse start order; those started
// together stop together.
func (s *supervisor) stopAll() {
	close(s.stopping)
	groups := startGroups(s.opts.components())
	for i := len(groups) - 1; i >= 0; i-- {
		var wg sync.WaitGroup
		for _, name := range groups[i] {
			p, ok := s.procs[name]
			if !ok {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				p.stop(stopGrace)
				klog.InfoS("Stopped component", "component", name, "took", time.Since(start).Round(time.Millisecond))
			}()
		}
		wg.Wait()
		for _, name := range groups[i] {
			c := s.state.Component(name)
			c.PID = 0
			c.Ready = false
		}
		s.publish()
	}
}

func (s *supervisor) publish() {
	if err := s.dir.WriteState(s.state); err != nil {
		klog.ErrorS(err, "Writing cluster state")
	}
}
