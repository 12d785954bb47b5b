package fleet

import (
	"fmt"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"net"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Profiles of API traffic a fleet can send.
const (
	// ProfileKubelet: every node with its own identity, connection, six
	// watches, heartbeats, status patches and events — a kubelet on the wire.
	ProfileKubelet = "kubelet"
	// ProfileLight: one shared credential and connection, one shared pod
	// watch and node watch for the fleet, heartbeats and pod status patches
	// per node, no events.
	ProfileLight = "light"
)

// Config is the command line of a fleet.
type Config struct {
	Nodes      int
	NamePrefix string
	StartIndex int
	// Names, when set, replaces NamePrefix+index naming.
	Names []string

	// KubeconfigPath is the kubeconfig of the cluster to join; RESTConfig,
	// when set, is used instead (a program embedding the fleet).
	KubeconfigPath string
	RESTConfig     *rest.Config
	// BootstrapKubeconfigPath, when set, replaces KubeconfigPath: its
	// credential (a bootstrap token) only requests each node's own client
	// certificate through the CSR API, as a kubelet's TLS bootstrap does.
	BootstrapKubeconfigPath string
	// CACertFile and CAKeyFile let the fleet mint a client certificate per
	// node (system:node:<name>, group system:nodes) from the cluster's CA.
	// Without them every node uses the kubeconfig's credential.
	CACertFile, CAKeyFile string
	ContentType           string
	// QPS and Burst limit each node's client, as a kubelet's --kube-api-qps.
	QPS   float32
	Burst int
	// EventQPS and EventBurst limit each node's events, on a client of their
	// own as the kubelet's eventRecordQPS/eventBurst do. Lease renewals and
	// node status go unthrottled, as on the kubelet's heartbeat client.
	EventQPS   float32
	EventBurst int

	Profile string

	Zones              []string
	NodeLabels         map[string]string
	RegisterWithTaints []v1.Taint
	CPU                resource.Quantity
	Memory             resource.Quantity
	EphemeralStorage   resource.Quantity
	MaxPods            int
	ExtendedResources  map[string]string
	// DeclaredFeatures is the status.declaredFeatures of every node: what a
	// kubelet of this version declares. The kubemark command sets it from
	// the kubelet's own discovery (morph.KubeletDeclaredFeatures); this
	// package cannot import the kubelet to find it.
	DeclaredFeatures []string
	// NodeIPCIDR gives each node a unique InternalIP: the (StartIndex+i+1)th
	// address of the range.
	NodeIPCIDR string
	// FallbackPodCIDR is cut into one /24 per node for pod IPs when the
	// controller-manager assigns no podCIDR.
	FallbackPodCIDR string

	PodStartDelay Delay
	// JobPodRunDuration, when positive, is how long a pod owned by a Job
	// runs before it ends Succeeded, unless it has its own run-duration
	// annotation: so that configs written for real nodes (whose Job pods
	// run a command and exit) can finish on hollow ones.
	JobPodRunDuration time.Duration
	Events            bool

	LeaseDuration         time.Duration
	StatusReportFrequency time.Duration
	Workers               int
	// OpeningWatches bounds the watch requests of the whole fleet waiting
	// for their response at once (see watcher.opening).
	OpeningWatches int

	FailNodes          float64
	MetricsBindAddress string
	DeleteNodesOnExit  bool

	// Clock is the clock the fleet's nodes and scheduler run on; nil is the
	// real one.
	Clock clock.WithTicker
}

// DefaultConfig returns the defaults of the fleet's flags.
func DefaultConfig() Config {
	return Config{
		Nodes:             1,
		NamePrefix:        "hollow-node-",
		KubeconfigPath:    "/kubeconfig/kubeconfig",
		ContentType:       "application/vnd.kubernetes.protobuf",
		QPS:               50, // the kubelet's default
		Burst:             100,
		EventQPS:          50, // the kubelet's eventRecordQPS and eventBurst
		EventBurst:        100,
		Profile:           ProfileKubelet,
		Zones:             []string{"zone-a", "zone-b", "zone-c"},
		NodeLabels:        map[string]string{},
		ExtendedResources: map[string]string{},
		// A hollow kubelet's machine: the fake cAdvisor's one core and
		// 3840 MiB, which clusterloader2's configs for kubemark are sized
		// for, and a 100 GiB root filesystem.
		CPU:                   resource.MustParse("1"),
		Memory:                resource.MustParse("3840Mi"),
		EphemeralStorage:      resource.MustParse("100Gi"),
		MaxPods:               110,
		NodeIPCIDR:            "100.64.0.0/10",
		FallbackPodCIDR:       "10.128.0.0/9",
		Events:                true,
		LeaseDuration:         40 * time.Second,
		StatusReportFrequency: 5 * time.Minute,
		Workers:               256,
		OpeningWatches:        32,
		MetricsBindAddress:    "127.0.0.1:10269",
	}
}

// NodeNames returns the names of the fleet's nodes.
func (c *Config) NodeNames() []string {
	if len(c.Names) > 0 {
		return c.Names
	}
	names := make([]string, c.Nodes)
	for i := range names {
		names[i] = c.NamePrefix + strconv.Itoa(c.StartIndex+i)
	}
	return names
}

// Validate checks the settings without touching the file system; its
// errors name the flag and what is allowed.
func (c *Config) Validate() error {
	if len(c.Names) == 0 && c.Nodes <= 0 {
		return fmt.Errorf("--nodes=%d: must be at least 1", c.Nodes)
	}
	if c.StartIndex < 0 {
		return fmt.Errorf("--start-index=%d: must not be negative", c.StartIndex)
	}
	seen := map[string]bool{}
	for _, n := range c.NodeNames() {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			return fmt.Errorf("node name %q (from --name-prefix/--node-names): %s", n, strings.Join(errs, "; "))
		}
		if seen[n] {
			return fmt.Errorf("--node-names: %q given twice", n)
		}
		seen[n] = true
	}
	if c.Profile != ProfileKubelet && c.Profile != ProfileLight {
		return fmt.Errorf("--profile=%q: allowed values are kubelet, light", c.Profile)
	}
	// The files themselves are read by New, which names the flag of one
	// it cannot read.
	if c.KubeconfigPath == "" && c.RESTConfig == nil {
		return fmt.Errorf("--kubeconfig: required")
	}
	if c.BootstrapKubeconfigPath != "" && c.CACertFile != "" {
		return fmt.Errorf("--bootstrap-kubeconfig and --ca-cert-file: each gives the nodes their identities; use one")
	}
	if c.BootstrapKubeconfigPath != "" && c.Profile == ProfileLight {
		return fmt.Errorf("--bootstrap-kubeconfig needs --profile=kubelet: the light profile's nodes share one client, so none could have an identity of its own")
	}
	if (c.CACertFile == "") != (c.CAKeyFile == "") {
		return fmt.Errorf("--ca-cert-file and --ca-key-file go together")
	}
	for _, z := range c.Zones {
		if errs := validation.IsValidLabelValue(z); len(errs) > 0 {
			return fmt.Errorf("--zones: %q: %s", z, strings.Join(errs, "; "))
		}
	}
	for k, v := range c.NodeLabels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("--node-labels: key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("--node-labels: value %q of %q: %s", v, k, strings.Join(errs, "; "))
		}
	}
	for name, q := range c.ExtendedResources {
		if _, err := resource.ParseQuantity(q); err != nil {
			return fmt.Errorf("--extended-resources: %s=%q: not a quantity", name, q)
		}
	}
	if c.CPU.Sign() <= 0 || c.Memory.Sign() <= 0 || c.EphemeralStorage.Sign() < 0 {
		return fmt.Errorf("--cpu=%s --memory=%s --ephemeral-storage=%s: capacities must be positive", &c.CPU, &c.Memory, &c.EphemeralStorage)
	}
	if c.MaxPods <= 0 {
		return fmt.Errorf("--max-pods=%d: must be greater than 0", c.MaxPods)
	}
	if _, ipNet, err := net.ParseCIDR(c.NodeIPCIDR); err != nil || ipNet.IP.To4() == nil {
		return fmt.Errorf("--node-ip-cidr=%q: want an IPv4 CIDR like 100.64.0.0/10", c.NodeIPCIDR)
	} else if ones, bits := ipNet.Mask.Size(); 1<<(bits-ones) < c.StartIndex+len(c.NodeNames())+2 {
		return fmt.Errorf("--node-ip-cidr=%s: too small for %d nodes from index %d", c.NodeIPCIDR, len(c.NodeNames()), c.StartIndex)
	}
	if _, ipNet, err := net.ParseCIDR(c.FallbackPodCIDR); err != nil || ipNet.IP.To4() == nil {
		return fmt.Errorf("--fallback-pod-cidr=%q: want an IPv4 CIDR like 10.128.0.0/9", c.FallbackPodCIDR)
	} else if ones, _ := ipNet.Mask.Size(); ones > 24 {
		return fmt.Errorf("--fallback-pod-cidr=%s: must be /24 or larger", c.FallbackPodCIDR)
	}
	if c.LeaseDuration < 4*time.Second {
		return fmt.Errorf("--node-lease-duration=%s: must be at least 4s", c.LeaseDuration)
	}
	if c.StatusReportFrequency <= 0 {
		return fmt.Errorf("--node-status-report-frequency=%s: must be positive", c.StatusReportFrequency)
	}
	if c.EventQPS <= 0 || c.EventBurst <= 0 {
		return fmt.Errorf("event QPS %v and burst %d: must be positive", c.EventQPS, c.EventBurst)
	}
	if c.Workers <= 0 {
		return fmt.Errorf("--workers=%d: must be at least 1", c.Workers)
	}
	if c.OpeningWatches <= 0 {
		return fmt.Errorf("--max-opening-watches=%d: must be at least 1", c.OpeningWatches)
	}
	if c.FailNodes < 0 || c.FailNodes > 1 {
		return fmt.Errorf("--fail-nodes=%v: a fraction in 0..1", c.FailNodes)
	}
	if c.MetricsBindAddress != "" {
		if _, _, err := net.SplitHostPort(c.MetricsBindAddress); err != nil {
			return fmt.Errorf("--fleet-metrics-bind-address=%q: want host:port", c.MetricsBindAddress)
		}
	}
	return nil
}
