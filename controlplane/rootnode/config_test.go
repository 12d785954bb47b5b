package rootnode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// fakeMachine is a cluster folder with a CA, a kubelet binary, an image
// and a CNI folder with the plugins, and stand-ins for containerd, ctr and
// runc.
func fakeMachine(t *testing.T) Config {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"cluster/pki/ca.key", "kubelet", "image.tar", "cni/bridge", "cni/host-local", "cni/loopback", "bin/containerd", "bin/ctr", "bin/runc"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := DefaultConfig()
	c.ClusterDir, c.Kubelet, c.Images, c.SandboxImage = filepath.Join(dir, "cluster"), filepath.Join(dir, "kubelet"), []string{filepath.Join(dir, "image.tar")}, "kscale.local/kubemark:v1"
	c.CNIBinDir = filepath.Join(dir, "cni")
	c.Containerd, c.Ctr, c.Runc = filepath.Join(dir, "bin/containerd"), filepath.Join(dir, "bin/ctr"), filepath.Join(dir, "bin/runc")
	return c
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(*Config)
		want   string
	}{
		{"valid", func(*Config) {}, ""},
		{"no cluster", func(c *Config) { c.ClusterDir = "" }, "--dir"},
		{"not a cluster", func(c *Config) { c.ClusterDir = t.TempDir() }, "no cluster there"},
		{"bad name", func(c *Config) { c.Name = "Root_0" }, `--name="Root_0"`},
		{"no kubelet", func(c *Config) { c.Kubelet = "/nonexistent/kubelet" }, "make kubelet"},
		{"no sandbox", func(c *Config) { c.SandboxImage = "" }, "--sandbox-image"},
		{"no image", func(c *Config) { c.Images = []string{"/nonexistent.tar"} }, "make kubemark-image"},
		{"long bridge", func(c *Config) { c.Bridge = "a-bridge-name-too-long" }, "--bridge"},
		{"public subnet", func(c *Config) { c.Subnet = "8.8.8.0/24" }, "private"},
		{"tiny subnet", func(c *Config) { c.Subnet = "10.1.1.0/30" }, "at least 16"},
		{"ipv6", func(c *Config) { c.Subnet = "fd00::/64" }, "IPv4"},
		{"no plugins", func(c *Config) { c.CNIBinDir = t.TempDir() }, "containernetworking-plugins"},
		{"no pods", func(c *Config) { c.MaxPods = 0 }, "--max-pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeMachine(t)
			tc.modify(&c)
			err := c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if _, ok := err.(*InputError); !ok || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want an InputError saying %q", err, tc.want)
			}
		})
	}
}

// TestFiles holds the generated configuration to the settings this machine
// kind needs and to the node's own folder.
func TestFiles(t *testing.T) {
	c := fakeMachine(t)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	l := c.layout()
	cd := c.containerdConfig()
	for _, want := range []string{
		`restrict_oom_score_adj = true`, `SystemdCgroup = false`, `sandbox_image = "kscale.local/kubemark:v1"`,
		`address = "` + l.containerdSocket() + `"`, `root = "` + l.containerdRoot() + `"`, `bin_dir = "` + c.CNIBinDir + `"`,
		`conf_dir = "` + l.cniConfDir() + `"`,
	} {
		if !strings.Contains(cd, want) {
			t.Errorf("containerd config lacks %s:\n%s", want, cd)
		}
	}
	raw, err := c.cniConfig()
	if err != nil {
		t.Fatal(err)
	}
	var cni struct {
		Plugins []struct {
			Type, Bridge string
			IPMasq       bool
			IPAM         struct {
				DataDir string
				Ranges  [][]map[string]string
			}
		}
	}
	if err := json.Unmarshal(raw, &cni); err != nil {
		t.Fatal(err)
	}
	p := cni.Plugins[0]
	if p.Type != "bridge" || p.Bridge != DefaultBridge || p.IPMasq || p.IPAM.DataDir != l.cniDataDir() ||
		p.IPAM.Ranges[0][0]["subnet"] != DefaultSubnet || p.IPAM.Ranges[0][0]["gateway"] != "10.217.0.1" {
		t.Errorf("CNI config: %s", raw)
	}
	kc, err := c.kubeletConfig("10.217.0.1", 12345)
	if err != nil {
		t.Fatal(err)
	}
	var k map[string]any
	if err := yaml.Unmarshal(kc, &k); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"failCgroupV1": false, "cgroupDriver": "cgroupfs", "failSwapOn": false, "address": "10.217.0.1", "port": float64(12345),
		"readOnlyPort": float64(0), "containerRuntimeEndpoint": "unix://" + l.containerdSocket(), "imageGCHighThresholdPercent": float64(100),
	} {
		if k[key] != want {
			t.Errorf("kubelet config %s = %v, want %v", key, k[key], want)
		}
	}
	args := strings.Join(c.kubeletArgs("10.217.0.1"), " ")
	for _, want := range []string{"--node-ip=10.217.0.1", "--hostname-override=root-0", "--root-dir=" + l.kubeletRoot(), "--kubeconfig=" + l.kubeconfig()} {
		if !strings.Contains(args, want) {
			t.Errorf("kubelet args lack %s: %s", want, args)
		}
	}
}
