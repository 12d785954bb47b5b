package rootnode

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/controlplane/proc"
)

// ErrNotUp is returned by Down when the node's folder holds no state.
var ErrNotUp = errors.New("no root node there")

// Down stops the node and removes what Up made: the kubelet, every pod
// sandbox and container (through the CRI, so the CNI plugins release their
// addresses), containerd and any shim it left, the mounts under the node's
// folder, the bridge when Up created it, the Node object, and the folder.
func Down(ctx context.Context, clusterDir, name string, progress io.Writer) error {
	c := Config{ClusterDir: clusterDir, Name: name}
	st, err := readState(c.layout())
	if errors.Is(err, os.ErrNotExist) {
		return ErrNotUp
	}
	if err != nil {
		return err
	}
	return down(ctx, clusterDir, st, progress)
}

func down(ctx context.Context, clusterDir string, st *State, progress io.Writer) error {
	c := Config{ClusterDir: clusterDir, Name: st.Name}
	l := c.layout()
	say := func(format string, args ...any) {
		fmt.Fprintf(progress, "root node %s: "+format+"\n", append([]any{st.Name}, args...)...)
	}
	var errs []error
	if st.KubeletPID > 0 && proc.HasArg(st.KubeletPID, "--root-dir="+l.kubeletRoot()) {
		say("stopping the kubelet")
		errs = append(errs, proc.Terminate(ctx, st.KubeletPID, 15*time.Second))
	}
	if st.ContainerdPID > 0 && proc.HasArg(st.ContainerdPID, l.containerdConfig()) {
		n, err := removeSandboxes(ctx, l.containerdSocket())
		if err != nil {
			errs = append(errs, fmt.Errorf("removing the pod sandboxes: %w", err))
		}
		say("removed %d pod sandboxes; stopping containerd", n)
		errs = append(errs, proc.Terminate(ctx, st.ContainerdPID, 15*time.Second))
	}
	// A shim outlives containerd by design; those of this node's socket go.
	for _, pid := range proc.Pids() {
		if proc.HasArg(pid, l.containerdSocket()) || proc.HasArg(pid, "unix://"+l.containerdSocket()) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			proc.WaitGone(ctx, pid, 5*time.Second)
		}
	}
	errs = append(errs, unmountUnder(l.root))
	if st.BridgeCreated {
		if out, err := exec.CommandContext(ctx, "ip", "link", "del", st.Bridge).CombinedOutput(); err != nil && !strings.Contains(string(out), "Cannot find device") {
			errs = append(errs, fmt.Errorf("ip link del %s: %w: %s", st.Bridge, err, out))
		}
	}
	errs = append(errs, deleteNode(ctx, l.dir, st.Name))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := os.RemoveAll(l.root); err != nil {
		return fmt.Errorf("removing %s: %w", l.root, err)
	}
	return nil
}

// removeSandboxes stops and removes every pod sandbox through the CRI.
func removeSandboxes(ctx context.Context, socket string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return 0, fmt.Errorf("listing pod sandboxes: %w", err)
	}
	var errs []error
	for _, sb := range list.Items {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("stopping sandbox of %s/%s: %w", sb.Metadata.GetNamespace(), sb.Metadata.GetName(), err))
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("removing sandbox of %s/%s: %w", sb.Metadata.GetNamespace(), sb.Metadata.GetName(), err))
		}
	}
	return len(list.Items), errors.Join(errs...)
}

// unmountUnder detaches every mount below root, deepest first.
func unmountUnder(root string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && (fields[4] == root || strings.HasPrefix(fields[4], root+"/")) {
			points = append(points, fields[4])
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

func deleteNode(ctx context.Context, dir clusterdir.Dir, name string) error {
	cfg, err := dir.RESTConfig("admin")
	if err != nil {
		return nil // no cluster left to clean
	}
	cfg.Timeout = 10 * time.Second
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	err = client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	if err == nil || apierrors.IsNotFound(err) {
		return nil
	}
	if running, _ := dir.Running(); !running {
		return nil // the cluster is down: its Nodes are gone with it
	}
	return fmt.Errorf("deleting Node %s: %w", name, err)
}

func readState(l layout) (*State, error) {
	data, err := os.ReadFile(l.stateFile())
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", l.stateFile(), err)
	}
	return &st, nil
}

func writeState(l layout, st *State) error {
	return clusterdir.WriteJSON(l.stateFile(), st, 0o644)
}
