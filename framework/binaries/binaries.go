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

// Names of the binaries.
const (
	KScale   = "kscale"
	Kubemark = "kubemark"
)

// EnvDir names a folder holding prebuilt binaries; `make` sets it to bin/.
const EnvDir = "KSCALE_BIN_DIR"

var (
	buildOnce sync.Once
	buildErr  error
)

// Path returns the path of the named binary. With $KSCALE_BIN_DIR set, the
// binary must be there. Otherwise both binaries are built once per process
// (incrementally, with the Makefile's version stamp) into bin/ of the kscale
// module that contains the working directory.
func Path(ctx context.Context, name string) (string, error) {
	if name != KScale && name != Kubemark {
		return "", fmt.Errorf("unknown binary %q", name)
	}
	if dir := os.Getenv(EnvDir); dir != "" {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s=%s: %w (run `make build`)", EnvDir, dir, err)
		}
		return p, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("%w and $%s is not set: cannot find or build binaries", err, EnvDir)
	}
	buildOnce.Do(func() { buildErr = build(ctx, root) })
	if buildErr != nil {
		return "", buildErr
	}
	return filepath.Join(root, "bin", name), nil
}

// build runs `make build` under a file lock, so parallel test processes never
// compile the control plane twice at once.
func build(ctx context.Context, root string) error {
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
	klog.InfoS("Building kscale and kubemark (make build); a cold build takes minutes", "module", root)
	cmd := exec.CommandContext(ctx, "make", "-s", "-C", root, "build")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("make build: %w\n%s", err, out)
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
