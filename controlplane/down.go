package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/controlplane/proc"
)

// ErrNotRunning means no supervisor holds the cluster folder.
var ErrNotRunning = errors.New("no cluster is running")

// Down stops the cluster in dirPath: the supervisor stops every component in
// reverse start order and exits. Nothing in the folder is removed, so a later
// Up starts the same cluster (same CA, same etcd data) again.
func Down(ctx context.Context, dirPath string) error {
	dir, err := clusterdir.Open(dirPath)
	if err != nil {
		return &InputError{Msg: err.Error()}
	}
	if _, err := os.Stat(dir.Path()); err != nil {
		return &InputError{Msg: fmt.Sprintf("no cluster folder at %s", dir)}
	}
	running, err := dir.Running()
	if err != nil {
		return err
	}
	state, stateErr := dir.ReadState()
	if !running {
		// A supervisor killed with SIGKILL leaves no lock; its children got
		// SIGTERM from the kernel (Pdeathsig). Make sure none lingers.
		if stateErr == nil {
			killComponents(state)
		}
		return ErrNotRunning
	}
	if stateErr != nil {
		return fmt.Errorf("cluster in %s runs but its state is unreadable: %w", dir, stateErr)
	}
	if err := syscall.Kill(state.SupervisorPID, syscall.SIGTERM); err != nil {
		return fmt.Errorf("signalling supervisor pid %d: %w", state.SupervisorPID, err)
	}
	// The supervisor gives each group of components stopGrace; wait a
	// little longer than all of that.
	names := make([]string, len(state.Components))
	for i, c := range state.Components {
		names[i] = c.Name
	}
	deadline := time.Now().Add(time.Duration(len(startGroups(names)))*stopGrace + 30*time.Second)
	for {
		running, err := dir.Running()
		if err != nil {
			return err
		}
		if !running {
			break
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(state.SupervisorPID, syscall.SIGKILL)
			killComponents(state)
			return fmt.Errorf("supervisor pid %d did not stop in time; killed it", state.SupervisorPID)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	proc.WaitGone(ctx, state.SupervisorPID, 5*time.Second)
	return nil
}

// killComponents kills component processes a dead supervisor left behind.
func killComponents(state *clusterdir.State) {
	for _, c := range state.Components {
		if c.PID > 0 && isComponent(c.PID) {
			_ = syscall.Kill(c.PID, syscall.SIGKILL)
		}
	}
}

// isComponent guards against killing an unrelated process that reused a pid
// recorded in a stale state file.
func isComponent(pid int) bool { return proc.HasArg(pid, "component") }

// Restart stops one component and waits until the supervisor has started it
// again and it is ready — the same thing that happens when a component
// crashes. Hollow nodes and clients see what they would see in a real cluster
// when that component restarts.
func Restart(ctx context.Context, dirPath, component string) (*clusterdir.State, error) {
	dir, err := clusterdir.Open(dirPath)
	if err != nil {
		return nil, &InputError{Msg: err.Error()}
	}
	allowed := clusterdir.AllComponents()
	if !slices.Contains(allowed, component) {
		return nil, inputErrorf("unknown component %q: allowed values are %v", component, allowed)
	}
	running, err := dir.Running()
	if err != nil {
		return nil, err
	}
	if !running {
		return nil, ErrNotRunning
	}
	state, err := dir.ReadState()
	if err != nil {
		return nil, err
	}
	old := state.Component(component)
	if old == nil {
		return nil, inputErrorf("this cluster runs no %s (cluster up --prometheus starts one)", component)
	}
	if old.PID == 0 {
		return nil, fmt.Errorf("%s is not running", component)
	}
	if err := proc.Terminate(ctx, old.PID, stopGrace); err != nil {
		return nil, fmt.Errorf("stopping %s (pid %d): %w", component, old.PID, err)
	}
	timeout := 2*stopGrace + time.Minute
	deadline := time.After(timeout)
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline:
			return nil, fmt.Errorf("%s not ready again after %s", component, timeout)
		case <-time.After(100 * time.Millisecond):
		}
		s, err := dir.ReadState()
		if err != nil {
			continue
		}
		c := s.Component(component)
		if c.PID != 0 && c.PID != old.PID && c.Ready {
			return s, nil
		}
	}
}
