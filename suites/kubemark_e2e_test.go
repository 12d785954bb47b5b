package suites_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kscale/kscale/framework/binaries"
	"github.com/kscale/kscale/framework/provider/kubemark"
	"github.com/kscale/kscale/framework/provider/local"
	"github.com/kscale/kscale/framework/provider/local/localtest"
	"github.com/kscale/kscale/kubemark/image"
)

// realRoot is a root cluster whose node is a real kubelet on containerd,
// and a cluster under test reachable from that node's pods.
type realRoot struct {
	dir, kscale, nodeIP string
	root, test          *local.ControlPlane
	image               string
}

// TestKubemarkOnRealRoot is the kubemark provider against a real container
// runtime: a local root cluster with one real node (the kubelet of
// k8s.io/kubernetes on containerd and runc, `kscale cluster node up`), a
// local cluster under test bound to the node's bridge, and the density
// suite with --provider=kubemark in both layouts. The hollow nodes must run
// as containers of the image kscale builds while the run is on, the run must
// pass, and nothing of it may be left after: no pod, Node, namespace,
// running container or hollow-node process.
func TestKubemarkOnRealRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("a real root node needs root (containerd, runc, a bridge): run make kubemark-e2e or make test as root")
	}
	r := startRealRoot(t)
	cases := []struct {
		name       string
		args       []string
		pods       int
		containers []string
	}{
		// 100 fleet nodes in 2 pods.
		{"fleet", []string{"--hollow=fleet", "--nodes=100", "--nodes-per-fleet=50", "--pods-per-node=5"}, 2, []string{"fleet"}},
		// 5 nodes of a kubelet pod each: the kubelet and proxy morphs.
		{"kubelet", []string{"--hollow=kubelet", "--nodes=5", "--pods-per-node=5"}, 5, []string{"kubelet", "proxy"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{
				"--provider=kubemark",
				"--kubeconfig=" + r.test.Dir.AdminKubeconfig(),
				"--root-kubeconfig=" + r.root.Dir.AdminKubeconfig(),
				"--kubemark-image=" + r.image,
				"--kubemark-image-pull-policy=Never",
				"--kubemark-step-timeout=3m",
				"--testoverrides=../../configs/density/overrides/small.yaml",
			}, tc.args...)
			run := startSuiteArgs(t, args)
			seen := r.watchContainers(t, run, tc.pods, tc.containers)
			summary := run.passed(t, 15*time.Minute)
			if got := <-seen; got != "" {
				t.Fatalf("the hollow nodes were never seen running as containers: %s", got)
			}
			if summary.Verdict == "" {
				t.Fatal("no verdict")
			}
			r.checkNothingLeft(t)
		})
	}
}

func startRealRoot(t *testing.T) *realRoot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := &realRoot{}
	var err error
	paths := map[string]string{}
	for _, name := range []string{binaries.KScale, binaries.Kubelet, binaries.KubemarkImage} {
		if paths[name], err = binaries.Path(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	refs, err := image.ArchiveReferences(paths[binaries.KubemarkImage])
	if err != nil {
		t.Fatal(err)
	}
	r.image = refs[0]
	r.kscale = paths[binaries.KScale]
	// A short folder: containerd's socket path lives under it.
	if r.dir, err = os.MkdirTemp("", "kscale-km-"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			os.RemoveAll(r.dir)
		} else {
			t.Logf("folder %s kept for its logs", r.dir)
		}
	})
	opts := localtest.Options()
	// Hollow-node pods heartbeat through a second cluster on this machine:
	// the controller-manager's default grace.
	opts.ControllerManagerArgs = nil
	if r.root, err = local.Start(ctx, filepath.Join(r.dir, "root"), opts, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopCluster(t, r.root) })

	up := exec.CommandContext(ctx, r.kscale, "cluster", "node", "up", "--dir", r.root.Dir.Path(),
		"--kubelet", paths[binaries.Kubelet], "--image", paths[binaries.KubemarkImage])
	out, err := up.Output()
	if err != nil {
		t.Fatalf("kscale cluster node up: %v\n%s", err, stderrOf(err))
	}
	r.nodeIP = strings.TrimSpace(string(out))
	t.Cleanup(func() { r.nodeDown(t) })

	testOpts := opts
	testOpts.APIServerAddress = r.nodeIP
	if r.test, err = local.Start(ctx, filepath.Join(r.dir, "test"), testOpts, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopCluster(t, r.test) })
	return r
}

func stopCluster(t *testing.T, c *local.ControlPlane) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		t.Errorf("stopping cluster %s: %v", c.Dir.Path(), err)
	}
}

// nodeDown stops the real node; then no process of it, no shim, no mount
// and no bridge may be left.
func (r *realRoot) nodeDown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, r.kscale, "cluster", "node", "down", "--dir", r.root.Dir.Path()).CombinedOutput()
	if err != nil {
		t.Errorf("kscale cluster node down: %v\n%s", err, out)
		return
	}
	nodeDir := filepath.Join(r.root.Dir.Path(), "nodes")
	if procs := processesWith(nodeDir); len(procs) > 0 {
		t.Errorf("processes of the root node left after node down: %v", procs)
	}
	if mounts, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mounts), nodeDir) {
		t.Errorf("mounts under %s left after node down", nodeDir)
	}
	if _, err := os.Stat("/sys/class/net/kscale0"); err == nil {
		t.Error("the bridge kscale0 is left after node down")
	}
}

// watchContainers polls the root cluster while the suite runs until the
// hollow-node pods run on the real node, each container started by
// containerd. The channel gets "" then, or what was last seen when the
// suite ended first.
func (r *realRoot) watchContainers(t *testing.T, run *suiteRun, pods int, containers []string) <-chan string {
	out := make(chan string, 1)
	var once sync.Once
	report := func(s string) { once.Do(func() { out <- s }) }
	go func() {
		last := "no hollow-node pod"
		for {
			select {
			case <-run.done:
				report(last)
				return
			case <-time.After(500 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			list, err := r.root.Client.CoreV1().Pods(kubemark.DefaultNamespace).List(ctx, metav1.ListOptions{})
			cancel()
			if err != nil {
				last = err.Error()
				continue
			}
			running := 0
			for i := range list.Items {
				if why := runsAsContainers(&list.Items[i], containers); why != "" {
					last = why
				} else {
					running++
				}
			}
			if running >= pods {
				report("")
				return
			}
			if running > 0 {
				last = fmt.Sprintf("%d of %d pods running as containers", running, pods)
			}
		}
	}()
	return out
}

// runsAsContainers says why the pod does not run its containers on the
// real node under containerd, or "" when it does.
func runsAsContainers(pod *v1.Pod, containers []string) string {
	if pod.Spec.NodeName == "" || pod.Status.Phase != v1.PodRunning {
		return fmt.Sprintf("pod %s: %s on %q", pod.Name, pod.Status.Phase, pod.Spec.NodeName)
	}
	if pod.Status.PodIP == "" {
		return fmt.Sprintf("pod %s has no IP", pod.Name)
	}
	for _, want := range containers {
		found := false
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name == want && cs.State.Running != nil && strings.HasPrefix(cs.ContainerID, "containerd://") {
				found = true
			}
		}
		if !found {
			return fmt.Sprintf("pod %s: container %s not running under containerd", pod.Name, want)
		}
	}
	return ""
}

// checkNothingLeft holds the end of a run to the provider's promise: its
// namespace gone from the root cluster, its Nodes gone from the cluster
// under test, no hollow-node container running, no kubemark process.
func (r *realRoot) checkNothingLeft(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.root.Client.CoreV1().Namespaces().Get(ctx, kubemark.DefaultNamespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s of the root cluster: %v, want it gone", kubemark.DefaultNamespace, err)
	}
	nodes, err := r.test.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: kubemark.HollowLabel})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) > 0 {
		t.Errorf("%d hollow Nodes left in the cluster under test", len(nodes.Items))
	}
	// The kubelet stops the containers of deleted pods within its sync
	// period.
	deadline := time.Now().Add(time.Minute)
	for {
		procs := processesWith(image.BinaryPath + "\x00--morph=")
		if len(procs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("hollow-node processes left a minute after the run: %v", procs)
			return
		}
		time.Sleep(time.Second)
	}
}

// processesWith lists the running processes whose command line (arguments
// joined by NUL) contains s.
func processesWith(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		if strings.Contains(string(cmdline), s) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " "))
		}
	}
	return out
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
