package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/controlplane/freeport"
	"github.com/kscale/kscale/framework/binaries"
)

// HollowNice is the nice value hollow-node processes run at: they stand in
// for kubelets that have machines of their own, so a machine short of CPU
// slows them rather than the control plane under test. A comparison of node
// kinds, where each node's own speed is what is measured, runs them at the
// control plane's priority instead (ControlPlanePriority): there a kubelet
// starved by the control plane would stand for no kubelet of a real cluster.
const HollowNice = 10

// hollowNice is the nice value of a hollow process.
func hollowNice(controlPlanePriority bool) int {
	if !controlPlanePriority {
		return HollowNice
	}
	// The control plane's processes inherit this process's priority.
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		return 0
	}
	return 20 - prio // the system call answers 20 - nice
}

// HollowLabel is put on every Node that a hollow node of this provider
// registers, with the group's name as value, so the provider can find (and
// only ever touch) its own nodes.
const HollowLabel = "kscale.io/hollow-node"

// NodeOptions shape hollow nodes started as kubemark processes.
type NodeOptions struct {
	// Group names this set of nodes; it becomes the value of HollowLabel.
	Group string
	// NamePrefix is followed by the node's index: hollow-node-0, -1, ...
	NamePrefix string
	// Morphs to run per node: "kubelet", and optionally "proxy".
	Morphs []string
	// MaxPods is the kubelet's --max-pods.
	MaxPods int
	// ExtraArgs are appended to every kubemark command line.
	ExtraArgs []string
	// ControlPlanePriority runs the processes at the control plane's CPU
	// priority instead of HollowNice (see HollowNice).
	ControlPlanePriority bool
}

func (o *NodeOptions) defaults() {
	if o.Group == "" {
		o.Group = "default"
	}
	if o.NamePrefix == "" {
		o.NamePrefix = "hollow-node-"
	}
	if len(o.Morphs) == 0 {
		o.Morphs = []string{"kubelet"}
	}
	if o.MaxPods == 0 {
		o.MaxPods = 110
	}
}

// HollowProcess is one kubemark process.
type HollowProcess struct {
	Node    string
	Morph   string
	PID     int
	LogFile string
	cmd     *exec.Cmd
	exited  chan struct{}
	err     error
}

// Exited is closed when the process has ended.
func (p *HollowProcess) Exited() <-chan struct{} { return p.exited }

// Err is how the process ended; valid after Exited is closed.
func (p *HollowProcess) Err() error { return p.err }

// NodeGroup is a set of hollow nodes running as processes.
type NodeGroup struct {
	Names     []string
	Processes []*HollowProcess
}

// StartNodes starts count hollow nodes, each authenticating as
// system:node:<name> in group system:nodes with a certificate minted by the
// cluster CA, so the Node authorizer and NodeRestriction treat them as real
// kubelets. It returns without waiting for the nodes to be Ready.
func (c *ControlPlane) StartNodes(ctx context.Context, count int, opts NodeOptions) (*NodeGroup, error) {
	opts.defaults()
	kubemark, err := binaries.Path(ctx, binaries.Kubemark)
	if err != nil {
		return nil, err
	}
	ca, err := c.Dir.LoadCA()
	if err != nil {
		return nil, err
	}
	nodesDir := filepath.Join(c.Dir.Path(), "nodes", opts.Group)
	if err := os.MkdirAll(nodesDir, 0o700); err != nil {
		return nil, err
	}
	g := &NodeGroup{}
	for i := range count {
		name := opts.NamePrefix + strconv.Itoa(i)
		kubeconfig := filepath.Join(nodesDir, name+".kubeconfig")
		if err := clusterdir.MintKubeconfigWith(ca, c.State.APIServerURL, kubeconfig, "system:node:"+name, "system:nodes"); err != nil {
			g.Stop()
			return nil, fmt.Errorf("minting credentials for %s: %w", name, err)
		}
		for _, morph := range opts.Morphs {
			args := []string{
				"--morph=" + morph,
				"--name=" + name,
				"--kubeconfig=" + kubeconfig,
			}
			if morph == "kubelet" {
				port, err := freeport.Pick()
				if err != nil {
					g.Stop()
					return nil, err
				}
				args = append(args,
					"--kubelet-port="+strconv.Itoa(port),
					"--kubelet-read-only-port=0",
					"--max-pods="+strconv.Itoa(opts.MaxPods),
					"--node-labels="+HollowLabel+"="+opts.Group,
				)
			}
			args = append(args, opts.ExtraArgs...)
			p, err := startHollow(kubemark, filepath.Join(nodesDir, name+"."+morph+".log"), args, hollowNice(opts.ControlPlanePriority))
			if err != nil {
				g.Stop()
				return nil, err
			}
			p.Node, p.Morph = name, morph
			g.Processes = append(g.Processes, p)
		}
		g.Names = append(g.Names, name)
	}
	return g, nil
}

func startHollow(binary, logPath string, args []string, nice int) (*HollowProcess, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(binary, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting kubemark %s: %w", strings.Join(args, " "), err)
	}
	// Every thread of the new process group is set; threads made later
	// inherit it.
	if err := syscall.Setpriority(syscall.PRIO_PGRP, cmd.Process.Pid, nice); err != nil {
		klog.V(1).InfoS("Could not set the hollow node's CPU priority", "pid", cmd.Process.Pid, "nice", nice, "err", err)
	}
	p := &HollowProcess{PID: cmd.Process.Pid, LogFile: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Stop sends SIGTERM to every process, waits for them to clean up, and kills
// those still running after ten seconds. It returns the processes that had
// already failed before Stop.
func (g *NodeGroup) Stop() error {
	var failed []error
	for _, p := range g.Processes {
		select {
		case <-p.exited:
			failed = append(failed, fmt.Errorf("%s %s exited early: %v (log %s)", p.Morph, p.Node, p.err, p.LogFile))
		default:
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	var wg sync.WaitGroup
	for _, p := range g.Processes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-p.exited:
			case <-time.After(10 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}()
	}
	wg.Wait()
	sort.Slice(failed, func(i, j int) bool { return failed[i].Error() < failed[j].Error() })
	return errors.Join(failed...)
}

// UntilExit returns a context that is cancelled, with the exit as its cause,
// when any of the processes ends: a wait for their nodes then fails at once
// with the reason instead of at its timeout.
func UntilExit(ctx context.Context, procs ...*HollowProcess) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	for _, p := range procs {
		go func() {
			select {
			case <-p.exited:
				cancel(fmt.Errorf("%s %s exited: %v (log %s)", p.Morph, p.Node, p.err, p.LogFile))
			case <-ctx.Done():
			}
		}()
	}
	return ctx, func() { cancel(context.Canceled) }
}
