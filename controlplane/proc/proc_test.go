package proc

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"
)

func TestTerminate(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	pid := cmd.Process.Pid
	// Between fork and exec the child's command line is not yet sleep's.
	for deadline := time.Now().Add(5 * time.Second); !HasArg(pid, "sleep") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !Alive(pid) {
		t.Fatal("a running child is not Alive")
	}
	if !HasArg(pid, "300") || HasArg(pid, "30") {
		t.Errorf("HasArg matches whole arguments only: %q", Cmdline(pid))
	}
	if !HasArgContaining(pid, "30") || HasArgContaining(pid, "400") {
		t.Errorf("HasArgContaining: %q", Cmdline(pid))
	}
	if !slices.Contains(Pids(), pid) {
		t.Error("Pids lacks the child")
	}
	if err := Terminate(context.Background(), pid, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the child outlived Terminate")
	}
	if Alive(pid) {
		t.Error("a reaped child is Alive")
	}
}
