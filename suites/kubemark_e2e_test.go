package suites_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kscale/kscale/controlplane/proc"
	"github.com/kscale/kscale/framework/binaries"
	"github.com/kscale/kscale/framework/provider/kubemark"
	"github.com/kscale/kscale/framework/provider/local"
	"github.com/kscale/kscale/framework/provider/local/localtest"
	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/kubemark/image"
)

// realRoot is a root cluster whose node is a real kubelet on containerd,
// and a cluster under test reachable from that node's pods.
type realRoot struct {
	dir, kscale, nodeIP string
	root, test          *local.ControlPlane
	image               string
	// auditLog is the cluster under test's audit log.
	auditLog string
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
	base := []string{
		"--provider=kubemark",
		"--kubeconfig=" + r.test.Dir.AdminKubeconfig(),
		"--root-kubeconfig=" + r.root.Dir.AdminKubeconfig(),
		"--kubemark-image-pull-policy=Never",
		"--testoverrides=../../configs/density/overrides/small.yaml",
	}
	// Failures say what happened, fast, and leave nothing behind.
	failures := []struct {
		name string
		args []string
		want []string
		// created: the provider got as far as creating its namespace.
		created bool
	}{
		{"image missing", []string{"--kubemark-image=kscale.local/kubemark:missing", "--nodes=10", "--nodes-per-fleet=10"},
			[]string{"hollow-node pod hollow-node-", "ErrImageNeverPull", "kscale.local/kubemark:missing"}, true},
		{"root too small", []string{"--kubemark-image=" + r.image, "--hollow=kubelet", "--nodes=200"},
			[]string{"the root cluster cannot hold the hollow-node pods", "pods: 200, room for"}, false},
	}
	for _, tc := range failures {
		t.Run(tc.name, func(t *testing.T) {
			run := startSuiteArgs(t, append(append([]string{}, base...), tc.args...))
			if code := run.wait(t, 3*time.Minute); code == 0 {
				t.Fatalf("exit 0, want a failure; log %s", run.logPath)
			}
			data, err := os.ReadFile(run.logPath)
			if err != nil {
				t.Fatal(err)
			}
			log := string(data)
			for _, w := range tc.want {
				if !strings.Contains(log, w) {
					t.Errorf("the log %s does not say %q; its end:\n%s", run.logPath, w, run.tail())
				}
			}
			if !tc.created && strings.Contains(log, "deleting namespace") {
				t.Errorf("the refused run created its namespace; log %s", run.logPath)
			}
			r.checkNothingLeft(t)
		})
	}
	cases := []struct {
		name        string
		args        []string
		pods, nodes int
		containers  []string
	}{
		// 100 fleet nodes in 2 pods.
		{"fleet", []string{"--hollow=fleet", "--nodes=100", "--nodes-per-fleet=50", "--pods-per-node=5"}, 2, 100, []string{"fleet"}},
		// 5 nodes of a kubelet pod each: the kubelet and proxy morphs.
		{"kubelet", []string{"--hollow=kubelet", "--nodes=5", "--pods-per-node=5"}, 5, 5, []string{"kubelet", "proxy"}},
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
			auditFrom := fileSize(r.auditLog)
			run := startSuiteArgs(t, args)
			seen := r.watchContainers(t, run, tc.pods, tc.containers)
			var killed <-chan string
			if tc.name == "fleet" {
				killed = r.killOneFleet(run, tc.nodes)
			}
			summary := run.passed(t, 15*time.Minute)
			if got := <-seen; got != "" {
				t.Fatalf("the hollow nodes were never seen running as containers: %s", got)
			}
			if killed != nil {
				checkRestart(t, <-killed, summary.Cluster.Hollow)
			}
			if summary.Verdict == "" {
				t.Fatal("no verdict")
			}
			r.checkIdentities(t, auditFrom, tc.nodes, tc.name == "kubelet")
			r.checkNothingLeft(t)
		})
	}
}

func startRealRoot(t testing.TB) *realRoot {
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
	// Every request's user, groups and source address, to hold the hollow
	// nodes to the identities kubelets have.
	policy := filepath.Join(r.dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.auditLog = filepath.Join(r.dir, "audit.log")
	testOpts.APIServerArgs = []string{"--audit-policy-file=" + policy, "--audit-log-path=" + r.auditLog, "--audit-log-maxsize=0"}
	if r.test, err = local.Start(ctx, filepath.Join(r.dir, "test"), testOpts, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopCluster(t, r.test) })
	return r
}

func stopCluster(t testing.TB, c *local.ControlPlane) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		t.Errorf("stopping cluster %s: %v", c.Dir.Path(), err)
	}
}

// nodeDown stops the real node; then no process of it, no shim, no mount
// and no bridge may be left.
func (r *realRoot) nodeDown(t testing.TB) {
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
func (r *realRoot) watchContainers(t testing.TB, run *suiteRun, pods int, containers []string) <-chan string {
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

// killOneFleet waits until the run's nodes are Ready, then kills one fleet
// process (SIGKILL, as an OOM kill would) while the run goes on. The
// channel gets what happened.
func (r *realRoot) killOneFleet(run *suiteRun, nodes int) <-chan string {
	out := make(chan string, 1)
	go func() {
		for {
			select {
			case <-run.done:
				out <- "the run ended before its nodes were Ready"
				return
			case <-time.After(time.Second):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			list, err := r.test.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: kubemark.HollowLabel})
			cancel()
			if err != nil {
				continue
			}
			ready := 0
			for i := range list.Items {
				if local.NodeReady(&list.Items[i]) {
					ready++
				}
			}
			if ready < nodes {
				continue
			}
			procs := processesWith(image.BinaryPath + "\x00--morph=fleet")
			if len(procs) == 0 {
				out <- "no fleet process to kill"
				return
			}
			var pid int
			fmt.Sscanf(procs[0], "%d:", &pid)
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				out <- fmt.Sprintf("killing %s: %v", procs[0], err)
				return
			}
			out <- ""
			return
		}
	}()
	return out
}

// checkRestart holds the report to the kill: the restart is listed, and
// the killed fleet's nodes renewed their Leases again within a minute.
func checkRestart(t *testing.T, killErr string, h *report.Hollow) {
	t.Helper()
	if killErr != "" {
		t.Fatal(killErr)
	}
	if h == nil || len(h.Restarts) == 0 {
		t.Fatalf("the report lists no hollow-node restart after a fleet was killed: %+v", h)
	}
	r := h.Restarts[0]
	t.Logf("restart: %s/%s (%s), its %d nodes back after %.1fs", r.Pod, r.Container, r.Reason, r.Nodes, r.NodesBackSeconds)
	if r.Container != "fleet" || r.NodesBackSeconds <= 0 || r.NodesBackSeconds > 60 {
		t.Errorf("restart %+v: want the fleet container, its nodes back within 60 s", r)
	}
}

// checkIdentities reads the audit log of the run: every request from the
// hollow-node pods' addresses must come from a node's own identity
// (system:node:<name> in system:nodes, which API Priority and Fairness
// puts in the system-nodes flow schema), from the run's bootstrap token
// asking for certificates, or from the proxy's ServiceAccount — never from
// the user's admin credential. A kubelet's bootstrap also asks /healthz. Every hollow node must have made requests
// as itself.
func (r *realRoot) checkIdentities(t *testing.T, from int64, nodes int, proxy bool) {
	t.Helper()
	_, subnet, err := net.ParseCIDR(r.nodeIP + "/24")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(r.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	type event struct {
		Verb       string `json:"verb"`
		RequestURI string `json:"requestURI"`
		User       struct {
			Username string   `json:"username"`
			Groups   []string `json:"groups"`
		} `json:"user"`
		SourceIPs []string `json:"sourceIPs"`
		ObjectRef *struct {
			Resource string `json:"resource"`
		} `json:"objectRef"`
	}
	nodeUsers := map[string]int{}
	var bootstrap, healthz, proxied, fromPods int
	bad := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit log: %v", err)
		}
		if len(e.SourceIPs) == 0 {
			continue
		}
		ip := net.ParseIP(e.SourceIPs[0])
		if ip == nil || !subnet.Contains(ip) || ip.String() == r.nodeIP {
			continue // the test and the control plane, on the host
		}
		fromPods++
		u := e.User.Username
		switch {
		case strings.HasPrefix(u, "system:node:") && slices.Contains(e.User.Groups, "system:nodes"):
			nodeUsers[u]++
		case strings.HasPrefix(u, "system:bootstrap:") && e.ObjectRef != nil && e.ObjectRef.Resource == "certificatesigningrequests":
			bootstrap++
		case strings.HasPrefix(u, "system:bootstrap:") && e.ObjectRef == nil && strings.HasPrefix(e.RequestURI, "/healthz"):
			// The kubelet's TLS bootstrap waits for the apiserver first.
			healthz++
		case proxy && u == "system:serviceaccount:kube-system:kscale-"+kubemark.DefaultName+"-hollow-proxy":
			proxied++
		default:
			bad[fmt.Sprintf("%s %v %s", u, e.User.Groups, e.Verb)]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	asNodes := 0
	for _, n := range nodeUsers {
		asNodes += n
	}
	t.Logf("audit: %d requests from the hollow-node pods: %d as %d nodes, %d by the bootstrap token (%d CSR calls, %d /healthz), %d by the proxies",
		fromPods, asNodes, len(nodeUsers), bootstrap+healthz, bootstrap, healthz, proxied)
	if len(bad) > 0 {
		t.Errorf("requests from the hollow-node pods under other identities: %v", bad)
	}
	if len(nodeUsers) != nodes {
		t.Errorf("%d hollow nodes made requests as system:node:<name>, want all %d", len(nodeUsers), nodes)
	}
	if bootstrap < nodes {
		t.Errorf("%d CSR requests by the bootstrap token for %d nodes", bootstrap, nodes)
	}
	if proxy && proxied == 0 {
		t.Error("no request by the proxies' ServiceAccount")
	}
	// The flow schema that classifies system:nodes, and its traffic.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fs, err := r.test.Client.FlowcontrolV1().FlowSchemas().Get(ctx, "system-nodes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	groups := false
	for _, rule := range fs.Spec.Rules {
		for _, s := range rule.Subjects {
			groups = groups || (s.Group != nil && s.Group.Name == "system:nodes")
		}
	}
	if !groups {
		t.Errorf("flow schema system-nodes does not match group system:nodes: %+v", fs.Spec.Rules)
	}
	metrics, err := r.test.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(metrics), `apiserver_flowcontrol_dispatched_requests_total{flow_schema="system-nodes",priority_level="system"}`) {
		t.Error("the apiserver dispatched no request in flow schema system-nodes")
	}
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
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
	// The run's credentials: the token, its bindings, the proxy's
	// ServiceAccount, the CSRs.
	owned := metav1.ListOptions{LabelSelector: kubemark.OwnerLabel}
	if secrets, err := r.test.Client.CoreV1().Secrets("kube-system").List(ctx, owned); err != nil || len(secrets.Items) > 0 {
		t.Errorf("secrets of the run left in kube-system: %v %v", secrets, err)
	}
	if sas, err := r.test.Client.CoreV1().ServiceAccounts("kube-system").List(ctx, owned); err != nil || len(sas.Items) > 0 {
		t.Errorf("service accounts of the run left in kube-system: %v %v", sas, err)
	}
	if crbs, err := r.test.Client.RbacV1().ClusterRoleBindings().List(ctx, owned); err != nil || len(crbs.Items) > 0 {
		t.Errorf("cluster role bindings of the run left: %v %v", crbs, err)
	}
	if csrs, err := r.test.Client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{}); err != nil || len(csrs.Items) > 0 {
		t.Errorf("CSRs left: %d %v", len(csrs.Items), err)
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
	var out []string
	for _, pid := range proc.Pids() {
		if cmdline := strings.Join(proc.Cmdline(pid), "\x00"); strings.Contains(cmdline, s) {
			out = append(out, fmt.Sprintf("%d: %s", pid, strings.ReplaceAll(cmdline, "\x00", " ")))
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
