package provider

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/measurements/metrics"
)

// Options are what a run asks of its provider: the suite flags that shape
// the cluster and its hollow nodes.
type Options struct {
	// Nodes is the node count the run wants; the existing provider takes 0
	// to mean every schedulable node there is.
	Nodes int
	// Kubeconfig is the test cluster's (kubemark, existing).
	Kubeconfig string
	// RootKubeconfig is the cluster the kubemark provider runs hollow-node
	// pods in.
	RootKubeconfig string
	// Hollow is the kind of hollow node: fleet (many per process) or
	// kubelet (the real kubelet morph, one process per node).
	Hollow string
	// NodesPerFleet is how many nodes one fleet process runs.
	NodesPerFleet int
	// MaxPods is each hollow node's pod capacity.
	MaxPods int
	// HollowArgs are extra kubemark flags for every hollow node
	// (--pod-start-delay=2s, ...).
	HollowArgs []string
	// Dir is the run's folder: the local provider puts its cluster in
	// Dir/cluster.
	Dir string
	// KeepCluster leaves the cluster and hollow nodes running at Teardown.
	KeepCluster bool
	// ControllerManagerQPS is the local control plane's controller-manager
	// client QPS and burst; 0 sizes it to the machine (local.SizeFor).
	ControllerManagerQPS int
	// Prometheus runs a Prometheus server with the local control plane
	// (controlplane.Options.Prometheus).
	Prometheus bool
	// Progress receives progress lines of long waits; nil is quiet.
	Progress io.Writer
}

// The kinds of hollow node.
const (
	HollowFleet   = "fleet"
	HollowKubelet = "kubelet"
)

// Defaults of the options that shape hollow nodes.
const (
	DefaultNodesPerFleet = 1000
	DefaultMaxPods       = 110
)

// CheckHollow checks the options that shape hollow nodes, for a provider
// that starts them (named in the messages), and fills in their defaults.
func (o *Options) CheckHollow(name string) error {
	if o.Hollow == "" {
		o.Hollow = HollowFleet
	}
	if o.Hollow != HollowFleet && o.Hollow != HollowKubelet {
		return fmt.Errorf("--hollow=%s: unknown kind of hollow node (allowed: %s, %s)", o.Hollow, HollowFleet, HollowKubelet)
	}
	if o.Nodes <= 0 {
		return fmt.Errorf("--nodes=%d: the %s provider needs a node count above 0", o.Nodes, name)
	}
	if o.NodesPerFleet < 0 {
		return fmt.Errorf("--nodes-per-fleet=%d: must be above 0", o.NodesPerFleet)
	}
	if o.NodesPerFleet == 0 {
		o.NodesPerFleet = DefaultNodesPerFleet
	}
	if o.MaxPods < 0 {
		return fmt.Errorf("--max-pods=%d: must be above 0", o.MaxPods)
	}
	if o.MaxPods == 0 {
		o.MaxPods = DefaultMaxPods
	}
	return nil
}

// Cluster is what a provider provisioned: where the test cluster is and
// what its hollow nodes are.
type Cluster struct {
	// Kubeconfig is an admin kubeconfig of the test cluster.
	Kubeconfig string
	// ClusterDir is the local cluster's folder, whose processes the
	// measurements observe; empty for other providers.
	ClusterDir string
	// Nodes is the count of schedulable nodes the run is sized for.
	Nodes int
	// Fleets are the endpoints of the fleets that run the hollow nodes
	// (usage reports, chaosMonkey); empty when there are none to reach.
	Fleets []string
	// Hollow, NodesReady and ProvisionSeconds go into the report.
	Hollow           *report.Hollow
	NodesReady       []metrics.Point
	ProvisionSeconds float64
	// HollowRestarts, when set, tells the hollow-node restarts seen since
	// provisioning, for the report.
	HollowRestarts func() []report.HollowRestart
}

// Provider provisions one run's cluster. Teardown removes what Provision
// made, and only that; it is safe after a Provision that failed half way.
type Provider interface {
	Provision(ctx context.Context) (*Cluster, error)
	Teardown(ctx context.Context) error
}

// Factory makes a provider for a run's options; an error is bad input.
type Factory func(Options) (Provider, error)

var (
	mu       sync.RWMutex
	registry = map[string]Factory{}
)

// Register makes a provider known by name, from its package's init.
func Register(name string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[name]; dup {
		panic("provider registered twice: " + name)
	}
	registry[name] = f
}

// Names are the registered providers, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	var out []string
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// New makes the named provider; an unknown name or options it cannot
// take are an error naming the flag.
func New(name string, o Options) (Provider, error) {
	mu.RLock()
	f, ok := registry[name]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("--provider=%s: unknown provider (allowed: %s)", name, strings.Join(Names(), ", "))
	}
	if o.Hollow != "" && o.Hollow != HollowFleet && o.Hollow != HollowKubelet {
		return nil, fmt.Errorf("--hollow=%s: unknown kind of hollow node (allowed: %s, %s)", o.Hollow, HollowFleet, HollowKubelet)
	}
	if o.Nodes < 0 {
		return nil, fmt.Errorf("--nodes=%d: must be 0 or more", o.Nodes)
	}
	return f(o)
}
