package rootnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/controlplane/freeport"
	"github.com/kscale/kscale/controlplane/proc"
)

// State is what Up started, for Down.
type State struct {
	Name          string `json:"name"`
	NodeIP        string `json:"nodeIP"`
	Bridge        string `json:"bridge"`
	BridgeCreated bool   `json:"bridgeCreated"`
	ContainerdPID int    `json:"containerdPID"`
	KubeletPID    int    `json:"kubeletPID"`
	Socket        string `json:"containerdSocket"`
	Root          string `json:"root"`
}

// Up prepares the node's files, creates the bridge, starts containerd,
// imports the images, starts the kubelet and waits until the Node is Ready.
// The processes outlive the caller; Down stops them. When Up fails half
// way, it undoes what it did.
func Up(ctx context.Context, c Config, progress io.Writer) (st *State, err error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	l := c.layout()
	if old, err := readState(l); err == nil && (proc.Alive(old.ContainerdPID) || proc.Alive(old.KubeletPID)) {
		return nil, inputErrorf("root node %s is already up in %s (kscale cluster node down --dir %s --name %s)", c.Name, c.ClusterDir, c.ClusterDir, c.Name)
	}
	gw, subnet, _ := c.gateway()
	st = &State{Name: c.Name, NodeIP: gw.String(), Bridge: c.Bridge, Socket: l.containerdSocket(), Root: l.root}
	defer func() {
		if err != nil {
			_ = down(context.WithoutCancel(ctx), c.ClusterDir, st, io.Discard)
		}
	}()
	say := func(format string, args ...any) {
		fmt.Fprintf(progress, "root node %s: "+format+"\n", append([]any{c.Name}, args...)...)
	}

	for _, d := range []string{l.root, l.containerdRoot(), l.containerdState(), l.cniConfDir(), l.cniDataDir(), l.kubeletRoot(), l.dir.LogDir()} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return st, err
		}
	}
	if err := l.dir.MintKubeconfig(l.kubeconfig(), "system:node:"+c.Name, "system:nodes"); err != nil {
		return st, fmt.Errorf("minting the kubelet's identity: %w", err)
	}
	created, err := ensureBridge(ctx, c.Bridge, gw, subnet)
	st.BridgeCreated = created
	if err != nil {
		return st, err
	}
	if err := writeState(l, st); err != nil {
		return st, err
	}
	cni, err := c.cniConfig()
	if err != nil {
		return st, err
	}
	port, err := freePort(gw)
	if err != nil {
		return st, err
	}
	kubeletConfig, err := c.kubeletConfig(gw.String(), port)
	if err != nil {
		return st, err
	}
	for path, data := range map[string][]byte{
		l.containerdConfig():                   []byte(c.containerdConfig()),
		l.cniConfDir() + "/10-kscale.conflist": cni,
		l.kubeletConfig():                      kubeletConfig,
	} {
		if err := clusterdir.WriteFileAtomic(path, data, 0o644); err != nil {
			return st, err
		}
	}

	say("starting containerd (%s)", l.containerdSocket())
	if st.ContainerdPID, err = startDetached(c.Containerd, []string{"--config", l.containerdConfig()}, l.logFile("containerd")); err != nil {
		return st, err
	}
	_ = writeState(l, st)
	if err := waitSocket(ctx, l.containerdSocket(), st.ContainerdPID, 30*time.Second); err != nil {
		return st, fmt.Errorf("containerd: %w\n%s", err, clusterdir.LogTail(l.logFile("containerd"), 10))
	}
	for _, img := range c.Images {
		say("importing %s", img)
		out, err := exec.CommandContext(ctx, c.Ctr, "--address", l.containerdSocket(), "-n", "k8s.io", "images", "import", img).CombinedOutput()
		if err != nil {
			return st, fmt.Errorf("ctr images import %s: %w\n%s", img, err, out)
		}
	}
	out, err := exec.CommandContext(ctx, c.Ctr, "--address", l.containerdSocket(), "-n", "k8s.io", "images", "ls", "-q").Output()
	if err != nil {
		return st, fmt.Errorf("ctr images ls: %w", err)
	}
	if !containsLine(string(out), c.SandboxImage) {
		return st, inputErrorf("--sandbox-image=%s: not among the images imported (%s)", c.SandboxImage, strings.Join(strings.Fields(string(out)), ", "))
	}

	say("starting the kubelet (%s)", c.Kubelet)
	if st.KubeletPID, err = startDetached(c.Kubelet, c.kubeletArgs(gw.String()), l.logFile("kubelet")); err != nil {
		return st, err
	}
	if err := writeState(l, st); err != nil {
		return st, err
	}
	if err := waitReady(ctx, l.dir, c.Name, st.KubeletPID, c.ReadyTimeout); err != nil {
		return st, fmt.Errorf("%w\nlast lines of %s:\n%s", err, l.logFile("kubelet"), clusterdir.LogTail(l.logFile("kubelet"), 15))
	}
	say("Ready (node IP %s, kubelet log %s)", gw, l.logFile("kubelet"))
	return st, nil
}

// ensureBridge creates the bridge with the gateway address, or reports
// that one of that name exists already: kscale does not take over an
// interface it did not create.
func ensureBridge(ctx context.Context, name string, gw net.IP, subnet *net.IPNet) (bool, error) {
	if _, err := net.InterfaceByName(name); err == nil {
		return false, inputErrorf("--bridge=%s: an interface of that name exists; kscale does not touch what it did not create (kscale cluster node down removes its own, or choose another --bridge)", name)
	}
	ones, _ := subnet.Mask.Size()
	for i, args := range [][]string{
		{"link", "add", "name", name, "type", "bridge"},
		{"addr", "add", fmt.Sprintf("%s/%d", gw, ones), "dev", name},
		{"link", "set", name, "up"},
	} {
		if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
			return i > 0, fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	return true, nil
}

// freePort picks a port free on ip for the kubelet's server.
func freePort(ip net.IP) (int, error) {
	l, err := freeport.Listen()
	if err != nil {
		return 0, fmt.Errorf("picking the kubelet's port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	probe, err := net.Listen("tcp", net.JoinHostPort(ip.String(), fmt.Sprint(port)))
	if err != nil {
		return 0, fmt.Errorf("the kubelet's port %d on %s: %w", port, ip, err)
	}
	probe.Close()
	return port, nil
}

// startDetached starts a program in a session of its own, its output
// appended to logPath, and returns its pid; it outlives the caller.
func startDetached(path string, args []string, logPath string) (int, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", path, err)
	}
	pid := cmd.Process.Pid
	// Reap it should it exit while the caller still runs.
	go func() { _ = cmd.Wait() }()
	return pid, nil
}

func waitSocket(ctx context.Context, path string, pid int, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		if !proc.Alive(pid) {
			return false, errors.New("exited")
		}
		conn, err := net.Dial("unix", path)
		if err != nil {
			return false, nil
		}
		conn.Close()
		return true, nil
	})
}

func waitReady(ctx context.Context, dir clusterdir.Dir, name string, kubeletPID int, timeout time.Duration) error {
	cfg, err := dir.RESTConfig("admin")
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	last := "not registered"
	err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		if !proc.Alive(kubeletPID) {
			return false, errors.New("the kubelet exited")
		}
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for _, c := range node.Status.Conditions {
			if c.Type == v1.NodeReady {
				last = fmt.Sprintf("Ready=%s: %s", c.Status, c.Message)
				return c.Status == v1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("node %s not Ready after %s (%s): %w", name, timeout, last, err)
	}
	return nil
}

func containsLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}
