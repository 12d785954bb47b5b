package local

import (
	"context"
	"fmt"
	"io"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kscale/kscale/controlplane"
	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/framework/binaries"
)

// ControlPlane is a running local control plane: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler under a supervisor.
type ControlPlane struct {
	Dir clusterdir.Dir
	// State is the supervisor's state when the cluster became ready.
	State *clusterdir.State
	// Config is the admin's client configuration.
	Config *rest.Config
	Client kubernetes.Interface

	mu sync.Mutex
	// fleetTargets are the metrics endpoints of the fleets started here,
	// which the cluster's Prometheus, when it runs one, scrapes.
	fleetTargets []string
}

// PrometheusURL is the cluster's Prometheus server, "" when it runs none.
func (c *ControlPlane) PrometheusURL() string { return c.State.PrometheusURL() }

// Endpoint is where one component serves its health and metrics.
type Endpoint struct {
	Health  string
	Metrics string
	PID     int
}

// Start brings up a local cluster in dir and waits until it is ready.
// Progress lines go to progress (nil for none). With opts.StopWithCaller the
// cluster stops when this process ends, however it ends.
func Start(ctx context.Context, dir string, opts controlplane.Options, progress io.Writer) (*ControlPlane, error) {
	kscale, err := binaries.Path(ctx, binaries.KScale)
	if err != nil {
		return nil, err
	}
	state, err := controlplane.Up(ctx, dir, opts, kscale, progress)
	if err != nil {
		return nil, err
	}
	return Attach(dir, state)
}

// Attach returns a handle on a cluster that is already running in dir, for
// example one started with `kscale cluster up`. state may be nil.
func Attach(dir string, state *clusterdir.State) (*ControlPlane, error) {
	d, err := clusterdir.Open(dir)
	if err != nil {
		return nil, err
	}
	if state == nil {
		if state, err = d.ReadState(); err != nil {
			return nil, err
		}
	}
	if state.Phase != clusterdir.PhaseReady {
		return nil, fmt.Errorf("cluster in %s is %s, not Ready", d, state.Phase)
	}
	cfg, err := d.RESTConfig("admin")
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &ControlPlane{Dir: d, State: state, Config: cfg, Client: client}, nil
}

// Endpoints returns the health and metrics URLs of each component, read
// afresh from the cluster folder (a restarted component has a new pid).
func (c *ControlPlane) Endpoints() (map[string]Endpoint, error) {
	state, err := c.Dir.ReadState()
	if err != nil {
		return nil, err
	}
	out := map[string]Endpoint{}
	for _, comp := range state.Components {
		out[comp.Name] = Endpoint{Health: comp.HealthURL, Metrics: comp.MetricsURL, PID: comp.PID}
	}
	return out, nil
}

// Stop stops the control plane. The folder stays.
func (c *ControlPlane) Stop(ctx context.Context) error {
	return controlplane.Down(ctx, c.Dir.Path())
}

// Restart restarts one component and waits until it is ready again.
func (c *ControlPlane) Restart(ctx context.Context, component string) error {
	state, err := controlplane.Restart(ctx, c.Dir.Path(), component)
	if err != nil {
		return err
	}
	c.State = state
	return nil
}
