package local

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kscale/kscale/controlplane"
	"github.com/kscale/kscale/controlplane/freeport"
	"github.com/kscale/kscale/framework/binaries"
)

// FleetOptions shape one `kubemark --morph=fleet` process.
type FleetOptions struct {
	// Group becomes the value of HollowLabel on the fleet's nodes.
	Group      string
	Nodes      int
	NamePrefix string // default "<group>-"
	StartIndex int
	// Profile is kubelet (default) or light.
	Profile string
	// ExtraArgs are appended to the command line.
	ExtraArgs []string
	// ControlPlanePriority runs the process at the control plane's CPU
	// priority instead of HollowNice (see HollowNice).
	ControlPlanePriority bool
}

// FleetProcess is a running fleet: a kubemark process of --morph=fleet.
type FleetProcess struct {
	*HollowProcess
	Options FleetOptions
	// Endpoint is the fleet's HTTP base URL: /metrics, /status, /fail, /recover.
	Endpoint string
	binary   string
	args     []string
}

// StartFleet starts a fleet of hollow nodes whose nodes authenticate as
// system:node:<name> with certificates the fleet mints from the cluster CA.
func (c *ControlPlane) StartFleet(ctx context.Context, opts FleetOptions) (*FleetProcess, error) {
	if opts.Group == "" {
		opts.Group = "fleet"
	}
	if opts.NamePrefix == "" {
		opts.NamePrefix = opts.Group + "-"
	}
	if opts.Profile == "" {
		opts.Profile = "kubelet"
	}
	kubemark, err := binaries.Path(ctx, binaries.Kubemark)
	if err != nil {
		return nil, err
	}
	port, err := freeport.Pick()
	if err != nil {
		return nil, err
	}
	endpoint := "127.0.0.1:" + strconv.Itoa(port)
	args := []string{
		"--morph=fleet",
		"--nodes=" + strconv.Itoa(opts.Nodes),
		"--name-prefix=" + opts.NamePrefix,
		"--start-index=" + strconv.Itoa(opts.StartIndex),
		"--profile=" + opts.Profile,
		"--kubeconfig=" + c.Dir.AdminKubeconfig(),
		"--node-labels=" + HollowLabel + "=" + opts.Group,
		"--fleet-metrics-bind-address=" + endpoint,
	}
	if opts.Profile == "kubelet" {
		args = append(args, "--ca-cert-file="+c.Dir.CACert(), "--ca-key-file="+c.Dir.CAKey())
	}
	args = append(args, opts.ExtraArgs...)
	f := &FleetProcess{Options: opts, Endpoint: "http://" + endpoint, binary: kubemark, args: args}
	if err := f.start(ctx, c); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fleetTargets = append(c.fleetTargets, endpoint)
	if err := controlplane.WritePrometheusTargets(c.Dir, c.fleetTargets); err != nil {
		return f, fmt.Errorf("listing the fleet for Prometheus: %w", err)
	}
	return f, nil
}

func (f *FleetProcess) start(ctx context.Context, c *ControlPlane) error {
	logs := filepath.Join(c.Dir.Path(), "nodes")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		return fmt.Errorf("creating the folder of hollow-node logs: %w", err)
	}
	p, err := startHollow(f.binary, filepath.Join(logs, f.Options.Group+".fleet.log"), f.args, hollowNice(f.Options.ControlPlanePriority))
	if err != nil {
		return err
	}
	p.Node, p.Morph = f.Options.NamePrefix+"*", "fleet"
	f.HollowProcess = p
	return f.waitServing(ctx, fleetServingTimeout)
}

// fleetServingTimeout bounds the wait for a started fleet's endpoint; the
// fleet serves it within milliseconds of starting.
const fleetServingTimeout = 30 * time.Second

// waitServing waits until the fleet answers on its endpoint. From then on it
// handles SIGTERM: a Stop right after a start (a restarted fleet finds its
// Nodes already Ready) would otherwise end it before it could delete them.
func (f *FleetProcess) waitServing(ctx context.Context, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-f.exited:
			return false, fmt.Errorf("fleet %s exited before serving %s: %v (log %s)", f.Options.Group, f.Endpoint, f.err, f.LogFile)
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.Endpoint+"/healthz", nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil // not listening yet
		}
		resp.Body.Close()
		return true, nil
	})
	if err == nil {
		return nil
	}
	select {
	case <-f.exited:
		return err
	default:
		_ = f.Kill()
		return fmt.Errorf("waiting for fleet %s to serve %s (log %s): %w", f.Options.Group, f.Endpoint, f.LogFile, err)
	}
}

// Restart starts the same fleet again after it exited (see Kill).
func (f *FleetProcess) Restart(ctx context.Context, c *ControlPlane) error {
	select {
	case <-f.exited:
	default:
		return fmt.Errorf("fleet %s still running", f.Options.Group)
	}
	return f.start(ctx, c)
}

// Stop sends SIGTERM and waits for the fleet to exit (killing it after 30 s).
func (f *FleetProcess) Stop() error { return f.signal(syscall.SIGTERM, 30*time.Second) }

// Kill ends the fleet with SIGKILL: no clean-up, as a crash.
func (f *FleetProcess) Kill() error { return f.signal(syscall.SIGKILL, 10*time.Second) }

func (f *FleetProcess) signal(sig syscall.Signal, wait time.Duration) error {
	select {
	case <-f.exited:
		return fmt.Errorf("fleet %s had exited: %v (log %s)", f.Options.Group, f.err, f.LogFile)
	default:
	}
	_ = f.cmd.Process.Signal(sig)
	select {
	case <-f.exited:
	case <-time.After(wait):
		_ = f.cmd.Process.Kill()
		<-f.exited
		return fmt.Errorf("fleet %s did not exit within %s of %s", f.Options.Group, wait, sig)
	}
	return nil
}

// Call sends an HTTP request to the fleet's endpoint, e.g. Call("POST", "/fail?fraction=0.1").
func (f *FleetProcess) Call(ctx context.Context, method, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, f.Endpoint+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, body)
	}
	return body, nil
}
