package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestUntilExitCancelsWithTheExit(t *testing.T) {
	dir := t.TempDir()
	running, err := startHollow("/bin/sh", filepath.Join(dir, "running.log"), []string{"-c", "sleep 30"}, HollowNice)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = running.cmd.Process.Kill(); <-running.exited })
	failing, err := startHollow("/bin/sh", filepath.Join(dir, "failing.log"), []string{"-c", "exit 3"}, HollowNice)
	if err != nil {
		t.Fatal(err)
	}
	failing.Morph, failing.Node = "kubelet", "hollow-node-2"

	ctx, stop := UntilExit(context.Background(), running, failing)
	defer stop()
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("the context was not cancelled when a process exited")
	}
	cause := context.Cause(ctx).Error()
	for _, want := range []string{"kubelet hollow-node-2 exited", "exit status 3", "failing.log"} {
		if !strings.Contains(cause, want) {
			t.Errorf("cause %q does not say %q", cause, want)
		}
	}
}

func TestUntilExitStaysOpenWhileProcessesRun(t *testing.T) {
	running, err := startHollow("/bin/sh", filepath.Join(t.TempDir(), "running.log"), []string{"-c", "sleep 30"}, HollowNice)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = running.cmd.Process.Kill(); <-running.exited })

	ctx, stop := UntilExit(context.Background(), running)
	select {
	case <-ctx.Done():
		t.Fatalf("cancelled while the process runs: %v", context.Cause(ctx))
	case <-time.After(200 * time.Millisecond):
	}
	stop()
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("cause after stop = %v, want context.Canceled", context.Cause(ctx))
	}
}

// TestHollowProcessesRunAtTheirPriority: hollow processes run at HollowNice,
// or at this process's priority (the control plane's) when asked.
func TestHollowProcessesRunAtTheirPriority(t *testing.T) {
	own, err := niceOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		controlPlane bool
		want         int
	}{{false, HollowNice}, {true, own}} {
		p, err := startHollow("/bin/sh", filepath.Join(t.TempDir(), "p.log"), []string{"-c", "sleep 30"}, hollowNice(tc.controlPlane))
		if err != nil {
			t.Fatal(err)
		}
		got, err := niceOf(p.PID)
		_ = p.cmd.Process.Kill()
		<-p.exited
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("control-plane priority %v: nice %d, want %d", tc.controlPlane, got, tc.want)
		}
	}
}

// niceOf reads a process's nice value from /proc.
func niceOf(pid int) (int, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndex(s, ")")+2:]) // from the state, field 3
	return strconv.Atoi(fields[16])                           // field 19
}
