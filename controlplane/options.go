package controlplane

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/controlplane/freeport"
)

// Options configure a local cluster. They are saved in the cluster folder when
// the cluster comes up so that a component restarted later gets the same flags
// and ports.
type Options struct {
	// APIServerPort is the apiserver's secure port on APIServerAddress.
	// Zero picks a free port.
	APIServerPort int `json:"apiServerPort"`
	// APIServerAddress is the one address the apiserver binds and
	// advertises, and the one its kubeconfigs name: 127.0.0.1, or an
	// address of this machine that pods on a local bridge reach (a cluster
	// under test whose hollow nodes run as containers of a root node).
	APIServerAddress string `json:"apiServerAddress,omitempty"`
	// EtcdPort, EtcdPeerPort, ControllerManagerPort and SchedulerPort: zero
	// (the default) picks a free port, so two clusters can run side by side.
	EtcdPort              int `json:"etcdPort"`
	EtcdPeerPort          int `json:"etcdPeerPort"`
	ControllerManagerPort int `json:"controllerManagerPort"`
	SchedulerPort         int `json:"schedulerPort"`

	// EtcdUnsafeNoFsync trades durability for speed, for throw-away clusters.
	EtcdUnsafeNoFsync bool `json:"etcdUnsafeNoFsync"`

	// MaxRequestsInflight and MaxMutatingRequestsInflight are the apiserver's
	// flags of the same names.
	MaxRequestsInflight         int `json:"maxRequestsInflight"`
	MaxMutatingRequestsInflight int `json:"maxMutatingRequestsInflight"`

	// Client rate limits of the controller-manager and the scheduler. They
	// bound how fast pods are created and bound; scalability test clusters
	// set 100/100, and so does kscale by default.
	ControllerManagerQPS   float32 `json:"controllerManagerQPS"`
	ControllerManagerBurst int     `json:"controllerManagerBurst"`
	SchedulerQPS           float32 `json:"schedulerQPS"`
	SchedulerBurst         int     `json:"schedulerBurst"`

	// ServiceClusterIPRange is the Service network; ClusterCIDR the pod
	// network from which every node gets a /NodeCIDRMaskSize podCIDR.
	ServiceClusterIPRange string `json:"serviceClusterIPRange"`
	ClusterCIDR           string `json:"clusterCIDR"`
	NodeCIDRMaskSize      int    `json:"nodeCIDRMaskSize"`

	// Extra flags appended to each component's command line; a later flag of
	// the same name wins over kscale's own.
	APIServerArgs         []string `json:"apiServerArgs,omitempty"`
	ControllerManagerArgs []string `json:"controllerManagerArgs,omitempty"`
	SchedulerArgs         []string `json:"schedulerArgs,omitempty"`

	// Prometheus runs a Prometheus server beside the components: the
	// `prometheus` program found on PATH (PrometheusBinary), listening on
	// 127.0.0.1:PrometheusPort (zero picks a free port), scraping etcd,
	// the apiserver, the controller-manager, the scheduler and the fleets
	// listed in clusterdir.Dir.PrometheusTargets every 5 s, as
	// clusterloader2's Prometheus scrapes the control plane.
	Prometheus       bool   `json:"prometheus,omitempty"`
	PrometheusPort   int    `json:"prometheusPort,omitempty"`
	PrometheusBinary string `json:"prometheusBinary,omitempty"`

	// ReadyTimeout bounds how long `up` waits for the cluster to be ready.
	ReadyTimeout time.Duration `json:"readyTimeout"`

	// StopWithCaller ties the cluster's life to the process that calls Up:
	// when it dies, even by SIGKILL, the kernel stops the supervisor, which
	// stops the components. Tests and suites set it so that an interrupted
	// run leaves no cluster behind; `kscale cluster up` does not, since its
	// cluster outlives the command.
	StopWithCaller bool `json:"-"`
}

// DefaultOptions returns the options of `kscale cluster up` without flags.
func DefaultOptions() Options {
	return Options{
		APIServerPort:               6443,
		APIServerAddress:            "127.0.0.1",
		MaxRequestsInflight:         400, // the apiserver's own defaults, stated so reports show them
		MaxMutatingRequestsInflight: 200,
		ControllerManagerQPS:        100,
		ControllerManagerBurst:      100,
		SchedulerQPS:                100,
		SchedulerBurst:              100,
		ServiceClusterIPRange:       "10.0.0.0/16",
		// A /10 cut into /24s gives 16384 node podCIDRs: room for 5000 nodes
		// and more, without the pod-IP exhaustion of the seed runbook.
		ClusterCIDR:      "10.64.0.0/10",
		NodeCIDRMaskSize: 24,
		ReadyTimeout:     3 * time.Minute,
	}
}

// InputError is bad input from the user: a flag value, a busy port, a folder
// that cannot hold a cluster. The CLI exits with code 2 for it.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// Validate checks the options without touching the machine.
func (o *Options) Validate() error {
	if ip := net.ParseIP(o.APIServerAddress); ip == nil || ip.IsUnspecified() {
		return inputErrorf("--apiserver-address=%q: must be one IP address of this machine (default 127.0.0.1)", o.APIServerAddress)
	}
	ports := []struct {
		flag string
		v    int
	}{
		{"--apiserver-port", o.APIServerPort},
		{"--etcd-port", o.EtcdPort},
		{"--etcd-peer-port", o.EtcdPeerPort},
		{"--controller-manager-port", o.ControllerManagerPort},
		{"--scheduler-port", o.SchedulerPort},
		{"--prometheus-port", o.PrometheusPort},
	}
	if o.PrometheusPort != 0 && !o.Prometheus {
		return inputErrorf("--prometheus-port=%d: only with --prometheus", o.PrometheusPort)
	}
	seen := map[int]string{}
	for _, p := range ports {
		if p.v < 0 || p.v > 65535 {
			return inputErrorf("%s=%d: must be a port number in 1..65535, or 0 for a free port", p.flag, p.v)
		}
		if p.v == 0 {
			continue
		}
		if other, ok := seen[p.v]; ok {
			return inputErrorf("%s=%d: the same port as %s", p.flag, p.v, other)
		}
		seen[p.v] = p.flag
	}
	positive := []struct {
		flag string
		v    float64
	}{
		{"--max-requests-inflight", float64(o.MaxRequestsInflight)},
		{"--max-mutating-requests-inflight", float64(o.MaxMutatingRequestsInflight)},
		{"--controller-manager-qps", float64(o.ControllerManagerQPS)},
		{"--controller-manager-burst", float64(o.ControllerManagerBurst)},
		{"--scheduler-qps", float64(o.SchedulerQPS)},
		{"--scheduler-burst", float64(o.SchedulerBurst)},
	}
	for _, p := range positive {
		if p.v <= 0 {
			return inputErrorf("%s=%v: must be greater than 0", p.flag, p.v)
		}
	}
	_, svc, err := net.ParseCIDR(o.ServiceClusterIPRange)
	if err != nil {
		return inputErrorf("--service-cluster-ip-range=%q: not a CIDR (example: 10.0.0.0/16)", o.ServiceClusterIPRange)
	}
	_, pods, err := net.ParseCIDR(o.ClusterCIDR)
	if err != nil {
		return inputErrorf("--cluster-cidr=%q: not a CIDR (example: 10.64.0.0/10)", o.ClusterCIDR)
	}
	if svc.Contains(pods.IP) || pods.Contains(svc.IP) {
		return inputErrorf("--cluster-cidr=%s overlaps --service-cluster-ip-range=%s", o.ClusterCIDR, o.ServiceClusterIPRange)
	}
	clusterBits, _ := pods.Mask.Size()
	if o.NodeCIDRMaskSize <= clusterBits || o.NodeCIDRMaskSize > 30 {
		return inputErrorf("--node-cidr-mask-size=%d: must be in %d..30 for --cluster-cidr=%s", o.NodeCIDRMaskSize, clusterBits+1, o.ClusterCIDR)
	}
	if o.ReadyTimeout <= 0 {
		return inputErrorf("--ready-timeout=%s: must be greater than 0", o.ReadyTimeout)
	}
	return nil
}

// components are the components the cluster runs, in start order.
func (o *Options) components() []string {
	if o.Prometheus {
		return clusterdir.AllComponents()
	}
	return clusterdir.Components
}

// claimPorts checks that every fixed port is free and picks free ports for
// the zero ones. A busy fixed port is an InputError naming its flag.
func (o *Options) claimPorts() error {
	ports := []struct {
		flag string
		p    *int
	}{
		{"--apiserver-port", &o.APIServerPort},
		{"--etcd-port", &o.EtcdPort},
		{"--etcd-peer-port", &o.EtcdPeerPort},
		{"--controller-manager-port", &o.ControllerManagerPort},
		{"--scheduler-port", &o.SchedulerPort},
	}
	if o.Prometheus {
		ports = append(ports, struct {
			flag string
			p    *int
		}{"--prometheus-port", &o.PrometheusPort})
	}
	// Hold every picked port until all are picked, so two zero ports never
	// get the same number.
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for _, p := range ports {
		host := "127.0.0.1"
		if p.p == &o.APIServerPort {
			host = o.APIServerAddress
		}
		if *p.p == 0 {
			// Below the ephemeral range: the component binds the port after
			// this releases it, and an outgoing connection must not take it
			// in between.
			l, err := freeport.Listen()
			if err != nil {
				return fmt.Errorf("picking a port for %s: %w", p.flag, err)
			}
			held = append(held, l)
			*p.p = l.Addr().(*net.TCPAddr).Port
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(*p.p)))
		if err != nil {
			return inputErrorf("port %d (%s) is in use on %s or cannot be bound there (%v): stop what holds it or choose another port or address", *p.p, p.flag, host, err)
		}
		held = append(held, l)
		*p.p = l.Addr().(*net.TCPAddr).Port
	}
	return nil
}

func saveOptions(dir clusterdir.Dir, o *Options) error {
	return clusterdir.WriteJSON(dir.OptionsFile(), o, 0o644)
}

func loadOptions(dir clusterdir.Dir) (*Options, error) {
	data, err := os.ReadFile(dir.OptionsFile())
	if err != nil {
		return nil, fmt.Errorf("reading cluster options: %w", err)
	}
	o := DefaultOptions()
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("cluster options %s are corrupt: %w", dir.OptionsFile(), err)
	}
	return &o, nil
}
