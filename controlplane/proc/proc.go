// Package proc stops processes that are not the caller's children, as the
// local cluster's supervisor stops its own: SIGTERM, a grace period, then
// SIGKILL, guarded against pids that a stale state file names but another
// program now holds.
package proc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Terminate sends SIGTERM to pid and SIGKILL when it is still alive after
// grace.
func Terminate(ctx context.Context, pid int, grace time.Duration) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return err
	}
	WaitGone(ctx, pid, grace)
	if Alive(pid) {
		return syscall.Kill(pid, syscall.SIGKILL)
	}
	return nil
}

// WaitGone waits until pid no longer exists (or is a zombie awaiting its
// parent), ctx ends, or timeout passes.
func WaitGone(ctx context.Context, pid int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && Alive(pid) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Alive reports whether pid runs: it exists and is not a zombie.
func Alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// Field 3 is the state; Z is a zombie: exited, not yet reaped.
	for i := len(stat) - 1; i > 0; i-- {
		if stat[i] == ')' && i+2 < len(stat) {
			return stat[i+2] != 'Z'
		}
	}
	return true
}

// Cmdline is the process's arguments.
func Cmdline(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range bytes.Split(bytes.TrimRight(data, "\x00"), []byte{0}) {
		out = append(out, string(a))
	}
	return out
}

// HasArg reports whether pid's command line has arg as one of its arguments.
func HasArg(pid int, arg string) bool {
	for _, a := range Cmdline(pid) {
		if a == arg {
			return true
		}
	}
	return false
}

// HasArgContaining reports whether one of pid's arguments contains s.
func HasArgContaining(pid int, s string) bool {
	for _, a := range Cmdline(pid) {
		if bytes.Contains([]byte(a), []byte(s)) {
			return true
		}
	}
	return false
}

// Pids lists the pids of the running processes.
func Pids() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err == nil && fmt.Sprint(pid) == e.Name() {
			out = append(out, pid)
		}
	}
	return out
}
