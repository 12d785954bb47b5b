package executor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/framework/config"
)

// NodeFailer stops and resumes nodes for the config's chaosMonkey: for
// hollow nodes, their fleet stops and resumes the nodes' heartbeats, so the
// node lifecycle controller sees them go NotReady as it would a crashed
// kubelet.
type NodeFailer interface {
	// Fail stops the nodes and returns those it stopped, also when it
	// could not stop them all: the monkey recovers exactly those.
	Fail(ctx context.Context, nodes []string) ([]string, error)
	Recover(ctx context.Context, nodes []string) error
}

// ErrNoNodeFailer is returned by New for a config with a nodeFailure and no
// NodeFailer: the run could not do what the config asks.
var ErrNoNodeFailer = errors.New("chaosMonkey.nodeFailure needs nodes kscale can fail: hollow nodes of fleets it knows (--fleet)")

// chaosMonkey fails failureRate of the nodes every interval (stretched by
// up to jitterFactor), each for simulatedDowntime, while the steps run —
// clusterloader2's node killer, with heartbeats stopped instead of
// machines. Failures overlap when the downtime is longer than the interval;
// a node already down is not picked again. Every failed node is recovered
// before the run ends.
type chaosMonkey struct {
	cfg      config.NodeFailure
	excluded []string
	client   kubernetes.Interface
	failer   NodeFailer
	rand     *rand.Rand

	mu   sync.Mutex
	down map[string]bool
	wg   sync.WaitGroup
}

func newChaosMonkey(cm config.ChaosMonkey, client kubernetes.Interface, failer NodeFailer) *chaosMonkey {
	return &chaosMonkey{
		cfg: *cm.NodeFailure, excluded: cm.ExcludedNodes, client: client, failer: failer,
		rand: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())), down: map[string]bool{},
	}
}

// startChaosMonkey runs the config's chaos monkey in the background and
// returns the function that stops it and waits until every node it failed
// is recovered.
func (e *Executor) startChaosMonkey(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	monkey := newChaosMonkey(e.compiled.Config.ChaosMonkey, e.opts.Client, e.opts.NodeFailer)
	done := make(chan struct{})
	go func() {
		defer close(done)
		monkey.run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// run fails nodes until ctx ends, then waits for every failed node to be
// recovered.
func (c *chaosMonkey) run(ctx context.Context) {
	defer c.wg.Wait()
	for {
		gap := c.cfg.Interval.Std()
		if c.cfg.JitterFactor > 0 {
			gap += time.Duration(c.rand.Float64() * c.cfg.JitterFactor * float64(gap))
		}
		t := time.NewTimer(gap)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if err := c.failSome(ctx); err != nil && ctx.Err() == nil {
			klog.ErrorS(err, "Chaos monkey: failing nodes")
		}
	}
}

// failSome picks ceil(failureRate × nodes) nodes that are up and not
// excluded, fails them, and recovers them after the downtime (or when the
// run ends, whichever is first).
func (c *chaosMonkey) failSome(ctx context.Context) error {
	list, err := c.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	want := int(math.Ceil(c.cfg.FailureRate * float64(len(list.Items))))
	c.mu.Lock()
	var candidates []string
	for _, n := range list.Items {
		// A node that is not Ready (its fleet gone, or failing already)
		// has nothing left to lose.
		if !c.down[n.Name] && !slices.Contains(c.excluded, n.Name) && !controlPlane(&n) && nodeReady(&n) {
			candidates = append(candidates, n.Name)
		}
	}
	c.rand.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
	picked := candidates[:min(want, len(candidates))]
	for _, n := range picked {
		c.down[n] = true
	}
	c.mu.Unlock()
	if len(picked) == 0 {
		return nil
	}
	klog.InfoS("Chaos monkey: failing nodes", "count", len(picked), "downtime", c.cfg.SimulatedDowntime.Std())
	failed, err := c.failer.Fail(ctx, picked)
	c.release(slices.DeleteFunc(slices.Clone(picked), func(n string) bool { return slices.Contains(failed, n) }))
	if len(failed) == 0 {
		return err
	}
	if err != nil {
		klog.ErrorS(err, "Chaos monkey: some nodes could not be failed", "failed", len(failed), "picked", len(picked))
	}
	picked = failed
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		t := time.NewTimer(c.cfg.SimulatedDowntime.Std())
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		// Recovery outlives a cancelled run: no node stays failed.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := c.failer.Recover(rctx, picked); err != nil {
			klog.ErrorS(err, "Chaos monkey: recovering nodes", "nodes", picked)
		}
		c.release(picked)
	}()
	return nil
}

func (c *chaosMonkey) release(nodes []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range nodes {
		delete(c.down, n)
	}
}

// nodeReady says whether the node's Ready condition is True.
func nodeReady(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// controlPlane says whether a node runs the control plane, which the
// monkey leaves alone as clusterloader2's does.
func controlPlane(n *v1.Node) bool {
	_, cp := n.Labels["node-role.kubernetes.io/control-plane"]
	_, master := n.Labels["node-role.kubernetes.io/master"]
	return cp || master
}
