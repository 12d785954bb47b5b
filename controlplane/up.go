package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/kscale/kscale/controlplane/clusterdir"
)

// Up prepares the cluster folder, starts a detached supervisor process
// (`<binary> cluster supervise --dir DIR`) and returns once every component is
// ready: etcd healthy, the apiserver's /readyz ok, and the controller-manager
// and scheduler holding their leader leases. Progress lines go to progress.
//
// Bad input — invalid options, a busy port, a broken folder, a cluster already
// running in the folder — is an *InputError, and nothing is started. When the
// cluster fails to come up, every process it started is stopped again.
func Up(ctx context.Context, dirPath string, o Options, binary string, progress io.Writer) (*clusterdir.State, error) {
	dir, err := Prepare(dirPath, &o)
	if err != nil {
		return nil, err
	}
	supervisor, err := spawnSupervisor(dir, binary, o.StopWithCaller)
	if err != nil {
		return nil, err
	}
	state, err := waitForReady(ctx, dir, supervisor, o.ReadyTimeout, progress)
	if err != nil {
		supervisor.stop(stopGrace + 10*time.Second)
		return nil, err
	}
	return state, nil
}

// Prepare validates the options and the folder, claims the ports (picking
// free ones for zero ports, so o is updated), and writes certificates,
// kubeconfigs and options into the folder. It is the part of Up before the
// supervisor starts; `kscale cluster up --foreground` runs Supervise itself
// after it.
func Prepare(dirPath string, o *Options) (clusterdir.Dir, error) {
	if err := o.Validate(); err != nil {
		return "", err
	}
	if err := findPrometheus(o); err != nil {
		return "", err
	}
	dir, err := clusterdir.Open(dirPath)
	if err != nil {
		return "", &InputError{Msg: err.Error()}
	}
	if err := dir.Check(); err != nil {
		return "", &InputError{Msg: err.Error()}
	}
	if running, err := dir.Running(); err != nil {
		return "", &InputError{Msg: err.Error()}
	} else if running {
		return "", alreadyRunning(dir)
	}
	if err := o.claimPorts(); err != nil {
		return "", err
	}
	if err := prepare(dir, o); err != nil {
		return "", err
	}
	if err := saveOptions(dir, o); err != nil {
		return "", err
	}
	// A state file left by an earlier run must not be mistaken for this one.
	if err := os.Remove(dir.StateFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	return dir, nil
}

func alreadyRunning(dir clusterdir.Dir) error {
	msg := fmt.Sprintf("a cluster is already running in %s", dir)
	if s, err := dir.ReadState(); err == nil {
		msg += fmt.Sprintf(" (supervisor pid %d, apiserver %s)", s.SupervisorPID, s.APIServerURL)
	}
	return &InputError{Msg: msg + "; `kscale cluster down --dir " + dir.Path() + "` stops it"}
}

// spawnSupervisor starts the supervisor in its own session, so it outlives
// the `up` command and no terminal signal reaches it by accident.
func spawnSupervisor(dir clusterdir.Dir, binary string, stopWithCaller bool) (*process, error) {
	logFile, err := os.OpenFile(dir.LogFile("supervisor"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening supervisor log: %w", err)
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "\n==== %s supervisor starting\n", time.Now().Format(time.RFC3339))
	cmd := exec.Command(binary, "cluster", "supervise", "--dir", dir.Path())
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if stopWithCaller {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the cluster supervisor %s: %w", binary, err)
	}
	p := &process{name: "supervisor", cmd: cmd, started: time.Now(), exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// waitForReady follows the state file until the cluster is Ready, fails, or
// the supervisor exits; it prints each component as it becomes ready.
func waitForReady(ctx context.Context, dir clusterdir.Dir, supervisor *process, timeout time.Duration, progress io.Writer) (*clusterdir.State, error) {
	// The supervisor enforces the timeout itself; this one only guards
	// against a supervisor that hangs.
	deadline := time.NewTimer(timeout + 30*time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	reported := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the cluster: %w", ctx.Err())
		case <-deadline.C:
			return nil, fmt.Errorf("cluster not ready after %s; logs in %s", timeout, dir.LogDir())
		case <-supervisor.exited:
			if s, err := dir.ReadState(); err == nil && s.Phase == clusterdir.PhaseFailed {
				return nil, fmt.Errorf("cluster failed to start: %s", s.Error)
			}
			return nil, supervisor.exitError(dir)
		case <-tick.C:
		}
		s, err := dir.ReadState()
		if errors.Is(err, clusterdir.ErrNoState) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if s.SupervisorPID != supervisor.pid() {
			continue
		}
		for _, c := range s.Components {
			if c.Ready && !reported[c.Name] && progress != nil {
				reported[c.Name] = true
				fmt.Fprintf(progress, "%-24s ready  %6.1fs  pid %d\n", c.Name, time.Since(s.StartedAt).Seconds(), c.PID)
			}
		}
		switch s.Phase {
		case clusterdir.PhaseReady:
			return s, nil
		case clusterdir.PhaseFailed:
			return nil, fmt.Errorf("cluster failed to start: %s", s.Error)
		}
	}
}
