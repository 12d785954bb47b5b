package morph

import (
	"fmt"
	"os"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Morphs lists the hollow components this package runs.
var Morphs = []string{"kubelet", "proxy"}

// Config is the command line of a hollow node, flag-compatible with upstream
// kubemark's.
type Config struct {
	Morph                   string
	NodeName                string
	KubeconfigPath          string
	BootstrapKubeconfigPath string
	CertDirectory           string
	ContentType             string
	QPS                     float32
	Burst                   int

	// Kubelet morph.
	KubeletPort         int
	KubeletReadOnlyPort int
	KubeletAddress      string
	NodeLabels          map[string]string
	RegisterWithTaints  []v1.Taint
	MaxPods             int
	ExtendedResources   map[string]string
	// CPU, Memory and EphemeralStorage are the node's capacity: the machine
	// the fake cAdvisor reports, and the root filesystem's size. CPU is
	// whole cores, as cAdvisor counts them.
	CPU, Memory, EphemeralStorage resource.Quantity
	// ClusterDNS are the DNS servers the kubelet gives pods (--cluster-dns).
	ClusterDNS          []string
	UseHostImageService bool
	// RootDir is the kubelet's root folder. Empty means a private temporary
	// folder, removed on exit.
	RootDir string
	// Events makes the kubelet record events in the API as a real kubelet does.
	Events bool

	// Proxy morph: where kube-proxy serves /metrics; empty for nowhere.
	MetricsBindAddress string
}

// Validate checks what can be checked before connecting anywhere. Its errors
// name the flag and what is allowed.
func (c *Config) Validate() error {
	if !slices.Contains(Morphs, c.Morph) {
		return fmt.Errorf("--morph=%q: allowed values are %s", c.Morph, strings.Join(Morphs, ", "))
	}
	if c.NodeName == "" {
		return fmt.Errorf("--name: must not be empty")
	}
	if c.BootstrapKubeconfigPath == "" {
		if err := readable(c.KubeconfigPath); err != nil {
			return fmt.Errorf("--kubeconfig=%q: %v", c.KubeconfigPath, err)
		}
	} else if err := readable(c.BootstrapKubeconfigPath); err != nil {
		return fmt.Errorf("--bootstrap-kubeconfig=%q: %v", c.BootstrapKubeconfigPath, err)
	}
	switch c.ContentType {
	case "application/vnd.kubernetes.protobuf", "application/json":
	default:
		return fmt.Errorf("--kube-api-content-type=%q: allowed values are application/vnd.kubernetes.protobuf, application/json", c.ContentType)
	}
	if c.QPS == 0 || c.Burst < 0 {
		return fmt.Errorf("--kube-api-qps=%v --kube-api-burst=%d: qps must not be 0 (negative disables rate limiting), burst must not be negative", c.QPS, c.Burst)
	}
	for _, p := range []struct {
		flag string
		v    int
	}{{"--kubelet-port", c.KubeletPort}, {"--kubelet-read-only-port", c.KubeletReadOnlyPort}} {
		if p.v < 0 || p.v > 65535 {
			return fmt.Errorf("%s=%d: must be a port number (0 disables the read-only port)", p.flag, p.v)
		}
	}
	if c.MaxPods <= 0 {
		return fmt.Errorf("--max-pods=%d: must be greater than 0", c.MaxPods)
	}
	if c.Morph == "kubelet" {
		if c.CPU.Sign() <= 0 || c.CPU.MilliValue()%1000 != 0 {
			return fmt.Errorf("--cpu=%s: the kubelet morph takes whole cores (1, 2, ...)", &c.CPU)
		}
		if c.Memory.Sign() <= 0 || c.EphemeralStorage.Sign() < 0 {
			return fmt.Errorf("--memory=%s --ephemeral-storage=%s: capacities must be positive", &c.Memory, &c.EphemeralStorage)
		}
	}
	return nil
}

func readable(path string) error {
	if path == "" {
		return fmt.Errorf("required")
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot be read: %v", err)
	}
	return f.Close()
}

// restConfig loads the kubeconfig with the configured content type and rate limits.
func (c *Config) restConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.KubeconfigPath)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", c.KubeconfigPath, err)
	}
	cfg.ContentType = c.ContentType
	cfg.QPS = c.QPS
	cfg.Burst = c.Burst
	return cfg, nil
}
