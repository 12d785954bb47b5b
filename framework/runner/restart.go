package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kscale/kscale/controlplane/clusterdir"
)

// restartExitTimeout bounds how long a stopped component may take to exit
// (the apiserver drains its requests first).
const restartExitTimeout = time.Minute

// restarter restarts the components of the local cluster in dir through
// its supervisor: the component's hold file keeps the supervisor from
// starting it again, SIGTERM stops it, and once it has exited and down has
// passed the hold file goes and the supervisor starts it as after any exit.
func restarter(dir clusterdir.Dir) func(ctx context.Context, name string, down time.Duration) error {
	return func(ctx context.Context, name string, down time.Duration) error {
		state, err := dir.ReadState()
		if err != nil {
			return fmt.Errorf("reading the cluster's state: %w", err)
		}
		c := state.Component(name)
		if c == nil || c.PID == 0 {
			return fmt.Errorf("%s is not running in %s", name, dir)
		}
		pid := c.PID
		hold := dir.HoldFile(name)
		if err := os.MkdirAll(filepath.Dir(hold), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(hold, nil, 0o644); err != nil {
			return err
		}
		defer os.Remove(hold)
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			return fmt.Errorf("stopping %s (pid %d): %w", name, pid, err)
		}
		// The supervisor clears the PID once it has reaped the process.
		exitCtx, cancel := context.WithTimeout(ctx, restartExitTimeout)
		defer cancel()
		for {
			s, err := dir.ReadState()
			if err == nil && s.Component(name) != nil && s.Component(name).PID != pid {
				break
			}
			select {
			case <-exitCtx.Done():
				return fmt.Errorf("%s (pid %d) did not exit within %v of SIGTERM", name, pid, restartExitTimeout)
			case <-time.After(100 * time.Millisecond):
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(down):
		}
		return nil
	}
}
