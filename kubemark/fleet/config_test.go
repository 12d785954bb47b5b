package fleet

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	base := testFleet(t, nil).cfg
	tests := []struct {
		name   string
		modify func(*Config)
		want   string
	}{
		{"valid", func(*Config) {}, ""},
		{"no nodes", func(c *Config) { c.Nodes = 0 }, "--nodes=0: must be at least 1"},
		{"unknown profile", func(c *Config) { c.Profile = "heavy" }, `--profile="heavy": allowed values are kubelet, light`},
		{"bad node name", func(c *Config) { c.NamePrefix = "Hollow_" }, `node name "Hollow_0"`},
		{"duplicate names", func(c *Config) { c.Names = []string{"a", "a"} }, `"a" given twice`},
		{"bad label key", func(c *Config) { c.NodeLabels = map[string]string{"bad key": "v"} }, `--node-labels: key "bad key"`},
		{"bad label value", func(c *Config) { c.NodeLabels = map[string]string{"k": "a b"} }, `--node-labels: value "a b"`},
		{"bad zone", func(c *Config) { c.Zones = []string{"zone a"} }, `--zones: "zone a"`},
		{"ca half given", func(c *Config) { c.CACertFile = "/x" }, "--ca-cert-file and --ca-key-file go together"},
		{"two identities", func(c *Config) { c.BootstrapKubeconfigPath, c.CACertFile, c.CAKeyFile = "/b", "/x", "/y" }, "each gives the nodes their identities"},
		{"bootstrap in the light profile", func(c *Config) { c.BootstrapKubeconfigPath, c.Profile = "/b", ProfileLight }, "--bootstrap-kubeconfig needs --profile=kubelet"},
		{"no kubeconfig", func(c *Config) { c.KubeconfigPath, c.RESTConfig = "", nil }, `--kubeconfig: required`},
		{"fail fraction", func(c *Config) { c.FailNodes = 1.5 }, "--fail-nodes=1.5"},
		{"node ip range too small", func(c *Config) { c.NodeIPCIDR = "100.64.0.0/31" }, "too small"},
		{"fallback range too small", func(c *Config) { c.FallbackPodCIDR = "10.0.0.0/25" }, "must be /24 or larger"},
		{"lease too short", func(c *Config) { c.LeaseDuration = 1 }, "--node-lease-duration"},
		{"no workers", func(c *Config) { c.Workers = 0 }, "--workers=0"},
		{"no watch opens", func(c *Config) { c.OpeningWatches = 0 }, "--max-opening-watches=0"},
		{"bad metrics address", func(c *Config) { c.MetricsBindAddress = "localhost" }, "--fleet-metrics-bind-address"},
		{"extended resource", func(c *Config) { c.ExtendedResources = map[string]string{"x/gpu": "many"} }, `x/gpu="many": not a quantity`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := *base
			tt.modify(&c)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to say %q", err, tt.want)
			}
		})
	}
}

// New reads the files Validate leaves alone, and names the flag of one it
// cannot read.
func TestNewNamesAnUnreadableFile(t *testing.T) {
	for name, modify := range map[string]func(*Config){
		`--kubeconfig="/nonexistent"`:   func(c *Config) { c.KubeconfigPath, c.RESTConfig = "/nonexistent", nil },
		`--ca-cert-file="/nonexistent"`: func(c *Config) { c.CACertFile, c.CAKeyFile = "/nonexistent", "/nonexistent" },
	} {
		c := *testFleet(t, nil).cfg
		modify(&c)
		if _, err := New(&c); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("New: %v, want it to name %s", err, name)
		}
	}
}
