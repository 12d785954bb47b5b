package local

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestUntilExitCancelsWithTheExit(t *testing.T) {
	dir := t.TempDir()
	running, err := startHollow("/bin/sh", filepath.Join(dir, "running.log"), []string{"-c", "sleep 30"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = running.cmd.Process.Kill(); <-running.exited })
	failing, err := startHollow("/bin/sh", filepath.Join(dir, "failing.log"), []string{"-c", "exit 3"})
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
	running, err := startHollow("/bin/sh", filepath.Join(t.TempDir(), "running.log"), []string{"-c", "sleep 30"})
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
