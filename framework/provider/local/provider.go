package local

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"k8s.io/klog/v2"

	"github.com/kscale/kscale/controlplane"
	"github.com/kscale/kscale/framework/provider"
	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/measurements/procstat"
)

func init() { provider.Register("local", NewProvider) }

// hollowNamePrefix names the provider's hollow nodes: hollow-node-0, -1, ...
const hollowNamePrefix = "hollow-node-"

// Provider is the local provider: a control plane on this machine
// (`kscale cluster up` in the run's folder) and hollow nodes as processes
// beside it, fleets or kubelet morphs.
type Provider struct {
	o        provider.Options
	cluster  *ControlPlane
	fleets   []*FleetProcess
	kubelets *NodeGroup
}

// NewProvider checks the options for the local provider.
func NewProvider(o provider.Options) (provider.Provider, error) {
	if err := o.CheckHollow("local"); err != nil {
		return nil, err
	}
	if o.ControllerManagerQPS < 0 {
		return nil, fmt.Errorf("--controller-manager-qps=%d: must be 0 (sized to the machine) or more", o.ControllerManagerQPS)
	}
	if o.Dir == "" {
		return nil, errors.New("local provider: a folder for the cluster is required")
	}
	return &Provider{o: o}, nil
}

// Provision starts the control plane, then the hollow nodes, and waits for
// every node to be Ready, printing progress. The hollow nodes' cost is read
// when the last one is Ready.
func (p *Provider) Provision(ctx context.Context) (*provider.Cluster, error) {
	start := time.Now()
	opts := controlplane.DefaultOptions()
	opts.APIServerPort = 0
	qps := p.o.ControllerManagerQPS
	if qps == 0 {
		qps = SizeFor(runtime.NumCPU()).ControllerManagerQPS
	}
	opts.ControllerManagerQPS, opts.ControllerManagerBurst = float32(qps), qps
	opts.StopWithCaller = !p.o.KeepCluster
	opts.Prometheus = p.o.Prometheus
	dir := filepath.Join(p.o.Dir, "cluster")
	klog.InfoS("Starting the local control plane", "dir", dir)
	c, err := Start(ctx, dir, opts, p.o.Progress)
	if err != nil {
		return nil, fmt.Errorf("starting the local control plane: %w", err)
	}
	p.cluster = c

	nodesStarted := time.Now()
	hollow := &report.Hollow{Kind: p.o.Hollow, Nodes: p.o.Nodes}
	var procs []*HollowProcess
	out := &provider.Cluster{Kubeconfig: c.Dir.AdminKubeconfig(), ClusterDir: c.Dir.Path(), Nodes: p.o.Nodes, Hollow: hollow}
	switch p.o.Hollow {
	case provider.HollowKubelet:
		g, err := c.StartNodes(ctx, p.o.Nodes, NodeOptions{Group: "kubelet", NamePrefix: hollowNamePrefix, MaxPods: p.o.MaxPods, ExtraArgs: p.o.HollowArgs})
		if err != nil {
			return nil, fmt.Errorf("starting %d kubelet-morph hollow nodes: %w", p.o.Nodes, err)
		}
		p.kubelets = g
		procs = g.Processes
	default:
		for first := 0; first < p.o.Nodes; first += p.o.NodesPerFleet {
			args := append(append([]string{}, p.o.HollowArgs...), "--max-pods="+strconv.Itoa(p.o.MaxPods))
			f, err := c.StartFleet(ctx, FleetOptions{
				Group:      "fleet-" + strconv.Itoa(len(p.fleets)),
				Nodes:      min(p.o.NodesPerFleet, p.o.Nodes-first),
				NamePrefix: hollowNamePrefix,
				StartIndex: first,
				ExtraArgs:  args,
			})
			if err != nil {
				return nil, fmt.Errorf("starting the fleet of nodes %d..: %w", first, err)
			}
			p.fleets = append(p.fleets, f)
			out.Fleets = append(out.Fleets, f.Endpoint)
			procs = append(procs, f.HollowProcess)
		}
	}
	pids := make([]int, len(procs))
	for i, proc := range procs {
		pids[i] = proc.PID
	}
	hollow.Processes = len(pids)
	before := samples(pids)
	waitCtx, stop := UntilExit(ctx, procs...)
	defer stop()
	points, err := TrackNodesReady(waitCtx, c.Client, HollowLabel, p.o.Nodes, p.o.Progress)
	out.NodesReady = points
	if err != nil {
		return out, err
	}
	for _, u := range usage(before, samples(pids)) {
		hollow.CPUCores += u.Cores
		hollow.RSSBytes += float64(u.RSS)
	}
	out.ProvisionSeconds = time.Since(start).Seconds()
	klog.InfoS("Hollow nodes Ready", "nodes", p.o.Nodes, "processes", len(pids), "after", time.Since(nodesStarted).Round(time.Millisecond))
	return out, nil
}

// Teardown stops the hollow nodes, then the control plane, unless the
// cluster is to be kept. The cluster folder (logs, certificates) stays.
func (p *Provider) Teardown(ctx context.Context) error {
	if p.cluster == nil {
		return nil
	}
	if p.o.KeepCluster {
		klog.InfoS("Keeping the local cluster", "kubeconfig", p.cluster.Dir.AdminKubeconfig())
		return nil
	}
	var errs []error
	for _, f := range p.fleets {
		if err := f.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if p.kubelets != nil {
		if err := p.kubelets.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := p.cluster.Stop(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stopping the local control plane: %w", err))
	}
	return errors.Join(errs...)
}

// samples reads the processes; one that cannot be read is left out.
func samples(pids []int) map[int]procstat.Sample {
	out := map[int]procstat.Sample{}
	for _, pid := range pids {
		if s, err := procstat.Read(pid); err == nil {
			out[pid] = s
		}
	}
	return out
}

func usage(before, after map[int]procstat.Sample) []procstat.Usage {
	var out []procstat.Usage
	for pid, b := range after {
		if a, ok := before[pid]; ok {
			out = append(out, procstat.Between(a, b))
		}
	}
	return out
}
