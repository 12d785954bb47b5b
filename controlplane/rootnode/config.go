// Package rootnode joins a real node to a local cluster: the kubelet built
// from k8s.io/kubernetes at the go.mod version, on containerd, runc and the
// CNI plugins of the machine's packages. Such a cluster is a "root" cluster
// for the kubemark provider on one machine: its node runs the hollow-node
// pods as real containers, from the image kscale builds, on a bridge of its
// own.
//
// Every file of the node lives in the cluster folder, under nodes/<name>/;
// containerd gets its own socket, root and state there, so a containerd the
// machine already runs is never touched. Traffic stays on the machine: the
// pods' network is a bridge (Config.Bridge) whose address (the first of
// Config.Subnet) is the node's IP, with no masquerading, so pods reach
// addresses on the bridge and nothing beyond the machine.
//
// The settings a machine without systemd, on cgroup v1 and without
// CAP_SYS_RESOURCE, needs are set here (cgroupfs, failCgroupV1: false,
// containerd's restrict_oom_score_adj), and the pod sandbox image is the
// kubemark image run as `kubemark --morph=pause`, since no registry may be
// reachable.
package rootnode

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kscale/kscale/controlplane/clusterdir"
)

// Defaults of Config.
const (
	DefaultName      = "root-0"
	DefaultBridge    = "kscale0"
	DefaultSubnet    = "10.217.0.0/24"
	DefaultCNIBinDir = "/usr/lib/cni"
	DefaultMaxPods   = 110
)

// Config is one root node.
type Config struct {
	// ClusterDir is the local cluster the node joins.
	ClusterDir string
	// Name is the Node's name.
	Name string
	// Kubelet is the kubelet binary.
	Kubelet string
	// Images are OCI archives imported into containerd before the kubelet
	// starts; SandboxImage, the pod sandbox, must be one of them.
	Images       []string
	SandboxImage string
	// Bridge is the pods' bridge, created with the first address of Subnet.
	Bridge string
	Subnet string
	// CNIBinDir holds the CNI plugins (bridge, host-local, loopback).
	CNIBinDir string
	// Containerd, Ctr and Runc are found on PATH when empty.
	Containerd, Ctr, Runc string
	// MaxPods is the kubelet's pod capacity.
	MaxPods int
	// ReadyTimeout bounds the wait for the Node to be Ready.
	ReadyTimeout time.Duration
}

// DefaultConfig is a node's configuration without flags.
func DefaultConfig() Config {
	return Config{
		Name: DefaultName, Bridge: DefaultBridge, Subnet: DefaultSubnet,
		CNIBinDir: DefaultCNIBinDir, MaxPods: DefaultMaxPods, ReadyTimeout: 2 * time.Minute,
	}
}

// InputError is bad input: the CLI exits 2 for it.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// Validate checks the configuration and finds the programs, without
// changing anything.
func (c *Config) Validate() error {
	if c.ClusterDir == "" {
		return inputErrorf("--dir: the cluster folder is required")
	}
	if errs := validation.IsDNS1123Subdomain(c.Name); len(errs) > 0 {
		return inputErrorf("--name=%q: not a node name: %v", c.Name, errs)
	}
	if c.Kubelet == "" {
		return inputErrorf("--kubelet: the kubelet binary is required (make kubelet builds bin/kubelet)")
	}
	if _, err := os.Stat(c.Kubelet); err != nil {
		return inputErrorf("--kubelet=%s: %v (make kubelet builds bin/kubelet)", c.Kubelet, err)
	}
	if c.SandboxImage == "" {
		return inputErrorf("--sandbox-image: the pod sandbox image is required (no pause image can be pulled)")
	}
	for _, img := range c.Images {
		if _, err := os.Stat(img); err != nil {
			return inputErrorf("--image=%s: %v (make kubemark-image writes bin/kubemark-image.tar)", img, err)
		}
	}
	if len(c.Bridge) == 0 || len(c.Bridge) > 15 {
		return inputErrorf("--bridge=%q: an interface name of 1 to 15 characters", c.Bridge)
	}
	if _, _, err := c.gateway(); err != nil {
		return inputErrorf("--subnet=%q: %v", c.Subnet, err)
	}
	if c.MaxPods <= 0 {
		return inputErrorf("--max-pods=%d: must be above 0", c.MaxPods)
	}
	for _, p := range []struct {
		flag, name string
		path       *string
	}{{"--containerd", "containerd", &c.Containerd}, {"--ctr", "ctr", &c.Ctr}, {"--runc", "runc", &c.Runc}} {
		if *p.path == "" {
			found, err := exec.LookPath(p.name)
			if err != nil {
				return inputErrorf("%s is not on PATH: a root node runs containers with containerd and runc (make deps installs them)", p.name)
			}
			*p.path = found
		}
	}
	for _, plugin := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(c.CNIBinDir, plugin)); err != nil {
			return inputErrorf("--cni-bin-dir=%s: no %s plugin (make deps installs containernetworking-plugins)", c.CNIBinDir, plugin)
		}
	}
	dir, err := clusterdir.Open(c.ClusterDir)
	if err != nil {
		return &InputError{Msg: err.Error()}
	}
	if _, err := os.Stat(dir.CAKey()); err != nil {
		return inputErrorf("--dir=%s: no cluster there (kscale cluster up --dir %s first)", c.ClusterDir, c.ClusterDir)
	}
	// A unix socket path has at most 107 bytes.
	if sock := c.layout().containerdSocket(); len(sock) > 100 {
		return inputErrorf("--dir=%s: too long a path for containerd's socket %s; use a shorter cluster folder", c.ClusterDir, sock)
	}
	return nil
}

// gateway is the bridge's address (the subnet's first) and the subnet.
func (c *Config) gateway() (net.IP, *net.IPNet, error) {
	_, subnet, err := net.ParseCIDR(c.Subnet)
	if err != nil {
		return nil, nil, err
	}
	ip4 := subnet.IP.To4()
	if ip4 == nil {
		return nil, nil, fmt.Errorf("an IPv4 subnet")
	}
	if ones, _ := subnet.Mask.Size(); ones > 28 {
		return nil, nil, fmt.Errorf("a subnet of at least 16 addresses")
	}
	gw := make(net.IP, 4)
	copy(gw, ip4)
	gw[3]++
	if gw.IsLoopback() || !gw.IsPrivate() {
		return nil, nil, fmt.Errorf("a private (RFC 1918) subnet: the bridge's traffic stays on this machine")
	}
	return gw, subnet, nil
}

// Gateway is the bridge's address: the node's IP, and the address a cluster
// under test binds (kscale cluster up --apiserver-address) for its
// hollow-node pods to reach.
func (c *Config) Gateway() (string, error) {
	gw, _, err := c.gateway()
	if err != nil {
		return "", err
	}
	return gw.String(), nil
}
