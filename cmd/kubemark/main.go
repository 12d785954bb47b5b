// Command kubemark is the hollow-node binary: one process that registers as a
// Kubernetes node and behaves like one on the wire, with a fake container
// runtime underneath. Its command line is compatible with upstream kubemark's:
//
//	kubemark --morph=kubelet --name=hollow-0 --kubeconfig=hollow-0.kubeconfig
//	kubemark --morph=proxy   --name=hollow-0 --kubeconfig=hollow-0.kubeconfig
//	kubemark --morph=fleet   --nodes=1000 --kubeconfig=admin.kubeconfig
//
// The fleet morph runs many hollow nodes in one process (package fleet).
// The pause morph waits for a signal: the pod sandbox of a root node that
// cannot pull a pause image runs the kubemark image with it.
//
// Exit codes: 0 after a clean stop (SIGINT, SIGTERM), 1 on failure, 2 for bad
// flags.
package main

import (
	"context"
	goflag "flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	cliflag "k8s.io/component-base/cli/flag"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics on /metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // kubernetes_build_info
	"k8s.io/component-base/version"
	"k8s.io/klog/v2"
	utilflag "k8s.io/kubernetes/pkg/util/flag"

	"github.com/kscale/kscale/kubemark/fleet"
	"github.com/kscale/kscale/kubemark/morph"
	_ "github.com/kscale/kscale/kubemark/stamp" // the Kubernetes version, however the binary was built
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// morphs are the values of --morph.
var morphs = append(append([]string(nil), morph.Morphs...), "fleet", "pause")

func run(args []string) int {
	fc := fleet.DefaultConfig()
	c := &morph.Config{NodeLabels: map[string]string{}, ExtendedResources: map[string]string{},
		CPU: fc.CPU, Memory: fc.Memory, EphemeralStorage: fc.EphemeralStorage}
	fs := pflag.NewFlagSet("kubemark", pflag.ContinueOnError)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	showVersion := addFlags(fs, c)
	addFleetFlags(fs, &fc)
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		fmt.Fprintf(os.Stderr, "kubemark: %v (see kubemark --help)\n", err)
		return 2
	}
	if *showVersion {
		fmt.Printf("kubemark %s\n", version.Get().GitVersion)
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "kubemark: takes no arguments, got %q\n", fs.Args())
		return 2
	}
	if !slices.Contains(morphs, c.Morph) {
		fmt.Fprintf(os.Stderr, "kubemark: --morph=%q: allowed values are %s\n", c.Morph, strings.Join(morphs, ", "))
		return 2
	}
	if c.Morph == "pause" {
		return pause()
	}
	var err error
	var f *fleet.Fleet
	if c.Morph == "fleet" {
		shareFlags(c, &fc)
		if fc.DeclaredFeatures, err = morph.KubeletDeclaredFeatures(); err != nil {
			fmt.Fprintf(os.Stderr, "kubemark: %v\n", err)
			return 1
		}
		f, err = fleet.New(&fc) // validates, and reads the kubeconfig and CA
	} else {
		err = c.Validate()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubemark: %v\n", err)
		return 2
	}
	defer klog.Flush()

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	klog.InfoS("kubemark", "version", version.Get().GitVersion, "morph", c.Morph, "node", c.NodeName)
	switch c.Morph {
	case "kubelet":
		err = morph.RunKubelet(ctx, c)
	case "proxy":
		err = morph.RunProxy(ctx, c)
	case "fleet":
		err = runFleet(ctx, f, fc.MetricsBindAddress)
	}
	if err != nil {
		klog.ErrorS(err, "Hollow node failed", "morph", c.Morph, "node", c.NodeName)
		return 1
	}
	return 0
}

// pause waits for SIGINT or SIGTERM, as a pod sandbox's pause process does.
func pause() int {
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	<-ctx.Done()
	return 0
}

// addFlags registers upstream kubemark's flags (same names and defaults, but
// for --use-host-image-service) and kscale's additions.
func addFlags(fs *pflag.FlagSet, c *morph.Config) *bool {
	fs.StringVar(&c.Morph, "morph", "", "hollow component to run: "+strings.Join(morphs, " | "))
	fs.StringVar(&c.NodeName, "name", "fake-node", "name of the hollow node")
	fs.StringVar(&c.KubeconfigPath, "kubeconfig", "/kubeconfig/kubeconfig", "kubeconfig of the cluster to join")
	fs.StringVar(&c.BootstrapKubeconfigPath, "bootstrap-kubeconfig", "", "bootstrap kubeconfig: request a client certificate with it and write --kubeconfig")
	fs.StringVar(&c.CertDirectory, "cert-dir", "", "folder of bootstrapped certificates (default: inside the kubelet's private folder)")
	fs.StringVar(&c.ContentType, "kube-api-content-type", "application/vnd.kubernetes.protobuf", "content type of requests to the apiserver")
	fs.Float32Var(&c.QPS, "kube-api-qps", 10, "client QPS towards the apiserver")
	fs.IntVar(&c.Burst, "kube-api-burst", 20, "client burst towards the apiserver")
	fs.IntVar(&c.KubeletPort, "kubelet-port", 10250, "port of the kubelet server")
	fs.IntVar(&c.KubeletReadOnlyPort, "kubelet-read-only-port", 10255, "read-only port of the kubelet; 0 disables it")
	fs.StringVar(&c.KubeletAddress, "kubelet-address", "127.0.0.1", "address the kubelet server binds (upstream: 0.0.0.0)")
	nodeLabels := cliflag.ConfigurationMap(c.NodeLabels)
	fs.Var(&nodeLabels, "node-labels", "extra node labels, key=value,...")
	fs.Var(utilflag.RegisterWithTaintsVar{Value: &c.RegisterWithTaints}, "register-with-taints", "taints to register the node with, key=value:Effect,...")
	fs.IntVar(&c.MaxPods, "max-pods", 110, "pods the node accepts")
	extended := cliflag.ConfigurationMap(c.ExtendedResources)
	fs.Var(&extended, "extended-resources", "extended resources in the node's capacity, name=quantity,...")
	fs.Var(quantityValue{&c.CPU}, "cpu", "CPU capacity of the node (whole cores for the kubelet morph)")
	fs.Var(quantityValue{&c.Memory}, "memory", "memory capacity of the node")
	fs.Var(quantityValue{&c.EphemeralStorage}, "ephemeral-storage", "ephemeral-storage capacity of the node (its root filesystem)")
	fs.StringSliceVar(&c.ClusterDNS, "cluster-dns", []string{"10.0.0.10"}, "kubelet morph: DNS server IPs given to pods, as the kubelet's --cluster-dns")
	fs.BoolVar(&c.UseHostImageService, "use-host-image-service", false, "use the host's containerd image service instead of the fake one (upstream default: true)")
	fs.StringVar(&c.RootDir, "root-dir", "", "kubelet root folder (default: a private temporary folder, removed on exit)")
	fs.BoolVar(&c.Events, "events", true, "record kubelet events in the API as a real kubelet does (upstream kubemark records none)")
	fs.StringVar(&c.MetricsBindAddress, "metrics-bind-address", "", "proxy morph: host:port to serve /metrics on; empty for none")

	// Flags upstream kept for compatibility; they have no effect there either.
	var ignoredBool bool
	var ignoredDuration = new(string)
	var ignoredPort int
	fs.BoolVar(&ignoredBool, "use-real-proxier", true, "no effect")
	fs.StringVar(ignoredDuration, "proxier-sync-period", "30s", "no effect")
	fs.StringVar(ignoredDuration, "proxier-min-sync-period", "0s", "no effect")
	fs.IntVar(&ignoredPort, "api-server-port", 443, "no effect: the server comes from --kubeconfig")
	for _, name := range []string{"use-real-proxier", "proxier-sync-period", "proxier-min-sync-period", "api-server-port"} {
		_ = fs.MarkDeprecated(name, "it has no effect")
	}

	klogFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlagSet(klogFlags)
	return fs.Bool("version", false, "print the version and exit")
}

// shareFlags copies the flags the fleet shares with the kubelet morph.
func shareFlags(c *morph.Config, fc *fleet.Config) {
	fc.KubeconfigPath = c.KubeconfigPath
	fc.BootstrapKubeconfigPath = c.BootstrapKubeconfigPath
	fc.ContentType = c.ContentType
	fc.QPS, fc.Burst = c.QPS, c.Burst
	fc.NodeLabels = c.NodeLabels
	fc.RegisterWithTaints = c.RegisterWithTaints
	fc.MaxPods = c.MaxPods
	fc.ExtendedResources = c.ExtendedResources
	fc.CPU, fc.Memory, fc.EphemeralStorage = c.CPU, c.Memory, c.EphemeralStorage
	fc.Events = c.Events
}

func runFleet(ctx context.Context, f *fleet.Fleet, endpoint string) error {
	if endpoint != "" {
		addr, err := f.Serve(ctx, endpoint)
		if err != nil {
			return err
		}
		klog.InfoS("Fleet endpoints", "address", addr.String())
	}
	return f.Run(ctx)
}

// quantityValue adapts a resource.Quantity to pflag.
type quantityValue struct{ q *resource.Quantity }

func (v quantityValue) String() string {
	if v.q == nil {
		return ""
	}
	return v.q.String()
}

func (v quantityValue) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return fmt.Errorf("%q is not a quantity (examples: 4, 500m, 16Gi)", s)
	}
	*v.q = q
	return nil
}

func (v quantityValue) Type() string { return "quantity" }
