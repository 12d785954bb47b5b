package local

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/framework/binaries"
)

type result struct {
	stdout, stderr string
	code           int
}

func runBinary(t *testing.T, name string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := binaries.Path(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// processesMentioning lists pids whose command line contains s.
func processesMentioning(s string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func assertNoProcesses(t *testing.T, mention string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := processesMentioning(mention)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left behind mentioning %s: %v", mention, pids)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// assertBadInput checks the house rule for bad input: exit code 2 and one
// line that says what is wrong.
func assertBadInput(t *testing.T, r result, want string) {
	t.Helper()
	if r.code != 2 {
		t.Errorf("exit code %d, want 2; stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q does not say %q", r.stderr, want)
	}
	if lines := strings.Count(strings.TrimSpace(r.stderr), "\n"); lines > 0 {
		t.Errorf("want one line of error, got:\n%s", r.stderr)
	}
}

func TestKubemarkBadInput(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown morph", []string{"--morph=bogus", "--kubeconfig=" + kubeconfig}, `--morph="bogus": allowed values are kubelet, proxy, fleet`},
		{"no morph", []string{"--kubeconfig=" + kubeconfig}, `--morph="": allowed values are kubelet, proxy, fleet`},
		{"missing kubeconfig", []string{"--morph=kubelet", "--kubeconfig=/nonexistent/kubeconfig"}, `--kubeconfig="/nonexistent/kubeconfig": cannot be read`},
		{"unknown flag", []string{"--morph=kubelet", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{"bad content type", []string{"--morph=proxy", "--kubeconfig=" + kubeconfig, "--kube-api-content-type=text/xml"}, "--kube-api-content-type"},
		{"fleet without nodes", []string{"--morph=fleet", "--kubeconfig=" + kubeconfig, "--nodes=0"}, "--nodes=0: must be at least 1"},
		{"fleet malformed labels", []string{"--morph=fleet", "--kubeconfig=" + kubeconfig, "--node-labels=bad key=v"}, `--node-labels: key "bad key"`},
		{"fleet unusable kubeconfig", []string{"--morph=fleet", "--kubeconfig=" + kubeconfig}, `--kubeconfig="` + kubeconfig + `": invalid configuration`},
		{"fleet unknown profile", []string{"--morph=fleet", "--kubeconfig=" + kubeconfig, "--profile=heavy"}, `--profile="heavy": allowed values are kubelet, light`},
		{"fleet bad start delay", []string{"--morph=fleet", "--kubeconfig=" + kubeconfig, "--pod-start-delay=soon"}, `--pod-start-delay`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			r := runBinary(t, binaries.Kubemark, []string{"TMPDIR=" + tmp}, tt.args...)
			assertBadInput(t, r, tt.want)
			if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
				t.Errorf("bad input left files in TMPDIR: %v", entries)
			}
		})
	}
}

func TestKscaleClusterBadInput(t *testing.T) {
	c, _ := sharedCluster(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)

	root := t.TempDir()
	aFile := filepath.Join(root, "file")
	if err := os.WriteFile(aFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(root, "broken")
	if err := os.MkdirAll(filepath.Join(broken, "pki"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ca.crt", "ca.key"} {
		if err := os.WriteFile(filepath.Join(broken, "pki", f), []byte("not PEM"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	tests := []struct {
		name string
		dir  string
		args []string
		want string
	}{
		{"busy port", filepath.Join(root, "busy"), []string{"--apiserver-port=" + busyPort}, "port " + busyPort + " (--apiserver-port) is in use"},
		{"second up on a running folder", c.Dir.Path(), []string{"--apiserver-port=0"}, "a cluster is already running in " + c.Dir.Path()},
		{"folder is a file", aFile, nil, "is not a directory"},
		{"broken folder", broken, []string{"--apiserver-port=0"}, "is broken"},
		{"port out of range", filepath.Join(root, "range"), []string{"--apiserver-port=70000"}, "--apiserver-port=70000: must be a port number"},
		{"flag not a number", filepath.Join(root, "nan"), []string{"--etcd-port=abc"}, `invalid argument "abc" for "--etcd-port"`},
		{"overlapping networks", filepath.Join(root, "cidr"), []string{"--cluster-cidr=10.0.0.0/8"}, "overlaps --service-cluster-ip-range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"cluster", "up", "--dir", tt.dir}, tt.args...)
			r := runBinary(t, binaries.KScale, nil, args...)
			assertBadInput(t, r, tt.want)
			if tt.dir != c.Dir.Path() {
				assertNoProcesses(t, tt.dir)
			}
		})
	}

	// The failed second `up` must not have disturbed the running cluster.
	if state, err := c.Dir.ReadState(); err != nil || state.Phase != clusterdir.PhaseReady {
		t.Errorf("shared cluster after a refused second up: %v, %v", state, err)
	}

	r := runBinary(t, binaries.KScale, nil, "cluster", "restart", "--dir", c.Dir.Path(), "kube-nothing")
	if r.code != 2 || !strings.Contains(r.stderr, `unknown component "kube-nothing"`) {
		t.Errorf("restart of an unknown component: exit %d, stderr %q", r.code, r.stderr)
	}
}

func readState(t *testing.T, dir string) *clusterdir.State {
	t.Helper()
	r := runBinary(t, binaries.KScale, nil, "cluster", "status", "--dir", dir)
	if r.code != 0 {
		t.Fatalf("status: exit %d: %s", r.code, r.stderr)
	}
	var s clusterdir.State
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("status output: %v\n%s", err, r.stdout)
	}
	return &s
}

// TestClusterUpDownForeground runs a second cluster through the CLI: up in
// the background and down, then up again on the same folder in the
// foreground, stopped by SIGINT. Neither leaves a process behind, and the
// folder (CA, etcd data) survives.
func TestClusterUpDownForeground(t *testing.T) {
	sharedCluster(t) // run after the shared cluster exists, not beside its start
	dir := filepath.Join(t.TempDir(), "c2")

	r := runBinary(t, binaries.KScale, nil, "cluster", "up", "--dir", dir, "--apiserver-port=0", "--etcd-unsafe-no-fsync")
	if r.code != 0 {
		t.Fatalf("up: exit %d\n%s", r.code, r.stderr)
	}
	if got, want := strings.TrimSpace(r.stdout), filepath.Join(dir, "admin.kubeconfig"); got != want {
		t.Errorf("up printed %q, want the kubeconfig path %q", got, want)
	}
	up := readState(t, dir)
	if up.Phase != clusterdir.PhaseReady {
		t.Fatalf("phase after up = %s", up.Phase)
	}
	caBefore, err := os.ReadFile(filepath.Join(dir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}

	r = runBinary(t, binaries.KScale, nil, "cluster", "down", "--dir", dir)
	if r.code != 0 {
		t.Fatalf("down: exit %d\n%s", r.code, r.stderr)
	}
	assertNoProcesses(t, dir)
	if s := readState(t, dir); s.Phase != clusterdir.PhaseStopped {
		t.Errorf("phase after down = %s, want Stopped", s.Phase)
	}
	if _, err := os.Stat(filepath.Join(dir, "etcd", "member")); err != nil {
		t.Errorf("down removed etcd data: %v", err)
	}

	// Foreground, same folder: same CA, stopped by SIGINT.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, err := binaries.Path(ctx, binaries.KScale)
	if err != nil {
		t.Fatal(err)
	}
	fg := exec.Command(bin, "cluster", "up", "--foreground", "--dir", dir, "--apiserver-port=0", "--etcd-unsafe-no-fsync")
	var fgErr bytes.Buffer
	fg.Stderr = &fgErr
	if err := fg.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- fg.Wait() }()
	for {
		s, err := clusterdir.Dir(dir).ReadState()
		if err == nil && s.Phase == clusterdir.PhaseReady && s.SupervisorPID == fg.Process.Pid {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("foreground up exited early: %v\n%s", err, fgErr.String())
		case <-ctx.Done():
			fg.Process.Kill()
			t.Fatalf("foreground cluster not ready\n%s", fgErr.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	caAfter, _ := os.ReadFile(filepath.Join(dir, "pki", "ca.crt"))
	if !bytes.Equal(caBefore, caAfter) {
		t.Error("the CA changed between two runs of one folder; earlier kubeconfigs would stop working")
	}
	if err := fg.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("foreground up after SIGINT: %v\n%s", err, fgErr.String())
		}
	case <-time.After(2 * time.Minute):
		fg.Process.Kill()
		t.Fatal("foreground up did not stop after SIGINT")
	}
	assertNoProcesses(t, dir)
}
