package binaries

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"k8s.io/klog/v2"
)

// Names of the binaries, and of what `make` builds beside them for a real
// root node: the kubelet and the hollow-node image.
const (
	KScale        = "kscale"
	Kubemark      = "kubemark"
	Kubelet       = "kubelet"
	KubemarkImage = "kubemark-image.tar"
)

// targets are the make targets that build each name.
var targets = map[string]string{KScale: "build", Kubemark: "build", Kubelet: "kubelet", KubemarkImage: "kubemark-image"}

// EnvDir names a folder holding prebuilt binaries; `make` sets it to bin/.
const EnvDir = "KSCALE_BIN_DIR"

var (
	buildMu sync.Mutex
	built   = map[string]error{}
)

// Path returns the path of the named binary or file. With $KSCALE_BIN_DIR
// set, it must be there. Otherwise its make target runs once per process
// (incrementally, with the Makefile's version stamp) into bin/ of the
// kscale module that contains the working directory.
func Path(ctx context.Context, name string) (string, error) {
	target, ok := targets[name]
	if !ok {
		return "", fmt.Errorf("unknown binary %q", name)
	}
	if dir := os.Getenv(EnvDir); dir != "" {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s=%s: %w (run `make %s`)", EnvDir, dir, err, target)
		}
		return p, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("%w and $%s is not set: cannot find or build binaries", err, EnvDir)
	}
	buildMu.Lock()
	err, done := built[target]
	if !done {
		err = build(ctx, root, target)
		built[target] = err
	}
	buildMu.Unlock()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin", name), nil
}

// build runs a make target under a file lock, so parallel test processes
// never compile the control plane twice at once.
func build(ctx context.Context, root, target string) error {
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(root, "bin", ".build.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking build: %w", err)
	}
	klog.InfoS("Building (make "+target+"); a cold build takes minutes", "module", root)
	cmd := exec.CommandContext(ctx, "make", "-s", "-C", root, target)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("make %s: %w\n%s", target, err, out)
	}
	return nil
}

// ModuleRoot walks up from the working directory to kscale's go.mod: the
// folder a test, benchmark or suite finds bin/, results/ and configs/ in.
func ModuleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(data), "module github.com/kscale/kscale\n") {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("%s is not inside the kscale module", wd)
		}
	}
}
