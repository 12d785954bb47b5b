package rootnode

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kscale/kscale/controlplane/clusterdir"
)

// layout are the node's paths, all under <cluster>/nodes/<name>/.
type layout struct {
	dir  clusterdir.Dir
	root string
}

func (c *Config) layout() layout {
	d := clusterdir.Dir(c.ClusterDir)
	return layout{dir: d, root: filepath.Join(d.Path(), "nodes", c.Name)}
}

func (l layout) path(elem ...string) string {
	return filepath.Join(append([]string{l.root}, elem...)...)
}

func (l layout) containerdSocket() string { return l.path("containerd", "containerd.sock") }
func (l layout) containerdConfig() string { return l.path("containerd", "config.toml") }
func (l layout) containerdRoot() string   { return l.path("containerd", "root") }
func (l layout) containerdState() string  { return l.path("containerd", "state") }
func (l layout) cniConfDir() string       { return l.path("cni", "net.d") }
func (l layout) cniDataDir() string       { return l.path("cni", "ipam") }
func (l layout) kubeletRoot() string      { return l.path("kubelet") }
func (l layout) kubeletConfig() string    { return l.path("kubelet.yaml") }
func (l layout) kubeconfig() string       { return l.path("kubelet.kubeconfig") }
func (l layout) stateFile() string        { return l.path("state.json") }
func (l layout) logFile(component string) string {
	return l.dir.LogFile("node-" + filepath.Base(l.root) + "-" + component)
}

// containerdConfig is containerd's configuration (version 2, containerd
// 1.6 and 1.7): its own socket, root and state, the CRI plugin with
// cgroupfs, the locally built sandbox image, the Debian CNI plugin folder
// and restrict_oom_score_adj, without which runc fails every sandbox on a
// machine that drops CAP_SYS_RESOURCE.
func (c *Config) containerdConfig() string {
	l := c.layout()
	q := strconv.Quote
	return strings.Join([]string{
		`version = 2`,
		`root = ` + q(l.containerdRoot()),
		`state = ` + q(l.containerdState()),
		`disabled_plugins = ["io.containerd.grpc.v1.cri.v1alpha2", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]`,
		``,
		`[grpc]`,
		`  address = ` + q(l.containerdSocket()),
		``,
		`[ttrpc]`,
		`  address = ` + q(l.containerdSocket()+".ttrpc"),
		``,
		`[plugins."io.containerd.grpc.v1.cri"]`,
		`  sandbox_image = ` + q(c.SandboxImage),
		`  restrict_oom_score_adj = true`,
		`  enable_cdi = false`,
		`  [plugins."io.containerd.grpc.v1.cri".containerd]`,
		`    snapshotter = "overlayfs"`,
		`    default_runtime_name = "runc"`,
		`    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]`,
		`      runtime_type = "io.containerd.runc.v2"`,
		`      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]`,
		`        BinaryName = ` + q(c.Runc),
		`        SystemdCgroup = false`,
		`  [plugins."io.containerd.grpc.v1.cri".cni]`,
		`    bin_dir = ` + q(c.CNIBinDir),
		`    conf_dir = ` + q(l.cniConfDir()),
		`    max_conf_num = 1`,
		``,
	}, "\n")
}

// cniConfig is the pod network: the bridge with the subnet's first address
// as gateway, host-local addresses kept under the node's folder, and no
// masquerading: pods reach the bridge's addresses, nothing past them.
func (c *Config) cniConfig() ([]byte, error) {
	gw, subnet, err := c.gateway()
	if err != nil {
		return nil, err
	}
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "kscale-" + c.Name,
		"plugins": []any{
			map[string]any{
				"type":      "bridge",
				"bridge":    c.Bridge,
				"isGateway": true,
				"ipMasq":    false,
				"ipam": map[string]any{
					"type":    "host-local",
					"dataDir": c.layout().cniDataDir(),
					"ranges":  [][]map[string]string{{{"subnet": subnet.String(), "gateway": gw.String()}}},
				},
			},
		},
	}
	return json.MarshalIndent(conf, "", "  ")
}

// kubeletConfig is the kubelet's configuration file: the real kubelet's
// defaults with what this machine kind needs (cgroupfs, cgroup v1, swap),
// containerd's socket, webhook authentication and authorization against the
// cluster, its server on the node's IP only, and image garbage collection
// off so that the imported images stay.
func (c *Config) kubeletConfig(nodeIP string, port int) ([]byte, error) {
	l := c.layout()
	endpoint := "unix://" + l.containerdSocket()
	cfg := map[string]any{
		"apiVersion":                  "kubelet.config.k8s.io/v1beta1",
		"kind":                        "KubeletConfiguration",
		"failCgroupV1":                false,
		"cgroupDriver":                "cgroupfs",
		"failSwapOn":                  false,
		"containerRuntimeEndpoint":    endpoint,
		"imageServiceEndpoint":        endpoint,
		"address":                     nodeIP,
		"port":                        port,
		"readOnlyPort":                0,
		"healthzPort":                 0,
		"maxPods":                     c.MaxPods,
		"serializeImagePulls":         false,
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"evictionHard": map[string]string{
			"memory.available":  "100Mi",
			"nodefs.available":  "1%",
			"imagefs.available": "1%",
		},
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			"x509":      map[string]any{"clientCAFile": l.dir.CACert()},
		},
		"authorization":       map[string]any{"mode": "Webhook"},
		"staticPodPath":       "",
		"podLogsDir":          l.path("pod-logs"),
		"resolvConf":          "/etc/resolv.conf",
		"nodeStatusMaxImages": 50,
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubelet configuration: %w", err)
	}
	return b, nil
}

// kubeletArgs is the kubelet's command line.
func (c *Config) kubeletArgs(nodeIP string) []string {
	l := c.layout()
	return []string{
		"--config=" + l.kubeletConfig(),
		"--kubeconfig=" + l.kubeconfig(),
		"--root-dir=" + l.kubeletRoot(),
		"--cert-dir=" + l.path("kubelet-pki"),
		"--hostname-override=" + c.Name,
		"--node-ip=" + nodeIP,
		"--node-labels=" + RootNodeLabel + "=" + c.Name,
		"--v=2",
	}
}

// RootNodeLabel marks the Node of a root node, with its name as value.
const RootNodeLabel = "kscale.io/root-node"
