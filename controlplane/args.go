package controlplane

import (
	"fmt"
	"strconv"

	"github.com/kscale/kscale/controlplane/clusterdir"
)

// componentArgs returns the command line of one component, without the
// program name. kscale's own flags come first and the user's extra flags
// last, so that a user flag overrides kscale's (pflag keeps the last value).
func componentArgs(dir clusterdir.Dir, o *Options, component string) ([]string, error) {
	switch component {
	case clusterdir.Etcd:
		return etcdArgs(dir, o), nil
	case clusterdir.APIServer:
		return append(apiServerArgs(dir, o), o.APIServerArgs...), nil
	case clusterdir.ControllerManager:
		return append(controllerManagerArgs(dir, o), o.ControllerManagerArgs...), nil
	case clusterdir.Scheduler:
		return append(schedulerArgs(dir, o), o.SchedulerArgs...), nil
	case clusterdir.Prometheus:
		return prometheusArgs(dir, o), nil
	}
	return nil, fmt.Errorf("unknown component %q", component)
}

func etcdURL(o *Options) string { return fmt.Sprintf("http://127.0.0.1:%d", o.EtcdPort) }

func etcdArgs(dir clusterdir.Dir, o *Options) []string {
	args := []string{
		"--data-dir=" + dir.EtcdDataDir(),
		"--listen-client-url=" + etcdURL(o),
		fmt.Sprintf("--listen-peer-url=http://127.0.0.1:%d", o.EtcdPeerPort),
	}
	if o.EtcdUnsafeNoFsync {
		args = append(args, "--unsafe-no-fsync")
	}
	return args
}

func apiServerArgs(dir clusterdir.Dir, o *Options) []string {
	return []string{
		"--etcd-servers=" + etcdURL(o),
		"--bind-address=" + o.APIServerAddress,
		"--advertise-address=" + o.APIServerAddress,
		"--secure-port=" + strconv.Itoa(o.APIServerPort),
		"--tls-cert-file=" + dir.CertFile(clusterdir.APIServer),
		"--tls-private-key-file=" + dir.KeyFile(clusterdir.APIServer),
		"--client-ca-file=" + dir.CACert(),
		"--kubelet-client-certificate=" + dir.CertFile("apiserver-kubelet-client"),
		"--kubelet-client-key=" + dir.KeyFile("apiserver-kubelet-client"),
		"--authorization-mode=Node,RBAC",
		// Kubelets join with bootstrap tokens, as in a kubeadm cluster.
		"--enable-bootstrap-token-auth=true",
		// The default plugins stay on; NodeRestriction is the one that is
		// off by default and that every production cluster turns on.
		"--enable-admission-plugins=NodeRestriction",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + dir.ServiceAccountPub(),
		"--service-account-signing-key-file=" + dir.ServiceAccountKey(),
		"--service-cluster-ip-range=" + o.ServiceClusterIPRange,
		"--allow-privileged=true",
		"--max-requests-inflight=" + strconv.Itoa(o.MaxRequestsInflight),
		"--max-mutating-requests-inflight=" + strconv.Itoa(o.MaxMutatingRequestsInflight),
		// As sig-scalability's test clusters run: a deleted namespace's
		// events (a density run leaves several per pod) are removed by 16
		// workers instead of one by one, which makes a large run's
		// cleanup take minutes.
		"--delete-collection-workers=16",
		// Endpoints validation rejects loopback addresses, so the
		// "kubernetes" Service cannot point at 127.0.0.1; nothing in a hollow
		// cluster dials it.
		"--endpoint-reconciler-type=none",
		"--profiling=true",
		// On SIGTERM, close open watches within 2 s instead of letting the
		// HTTP server wait its 60 s shutdown timeout for them: a restarted
		// apiserver is back before the controller-manager's and scheduler's
		// leader leases (renew deadline 10 s) run out.
		"--shutdown-watch-termination-grace-period=2s",
	}
}

func controllerManagerArgs(dir clusterdir.Dir, o *Options) []string {
	kubeconfig := dir.Kubeconfig(clusterdir.ControllerManager)
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(o.ControllerManagerPort),
		"--tls-cert-file=" + dir.CertFile(clusterdir.ControllerManager),
		"--tls-private-key-file=" + dir.KeyFile(clusterdir.ControllerManager),
		"--client-ca-file=" + dir.CACert(),
		"--root-ca-file=" + dir.CACert(),
		"--service-account-private-key-file=" + dir.ServiceAccountKey(),
		// Each controller talks to the apiserver as its own service account,
		// as in production clusters, so RBAC and APF see them separately.
		"--use-service-account-credentials=true",
		// kubeadm's set: the default controllers and the one that deletes
		// expired bootstrap tokens.
		"--controllers=*,tokencleaner",
		"--cluster-signing-cert-file=" + dir.CACert(),
		"--cluster-signing-key-file=" + dir.CAKey(),
		"--allocate-node-cidrs=true",
		"--cluster-cidr=" + o.ClusterCIDR,
		"--node-cidr-mask-size=" + strconv.Itoa(o.NodeCIDRMaskSize),
		"--service-cluster-ip-range=" + o.ServiceClusterIPRange,
		"--leader-elect=true",
		"--kube-api-qps=" + strconv.FormatFloat(float64(o.ControllerManagerQPS), 'g', -1, 32),
		"--kube-api-burst=" + strconv.Itoa(o.ControllerManagerBurst),
		"--cert-dir=" + dir.ComponentDir(clusterdir.ControllerManager),
	}
}

func schedulerArgs(dir clusterdir.Dir, o *Options) []string {
	kubeconfig := dir.Kubeconfig(clusterdir.Scheduler)
	return []string{
		"--config=" + schedulerConfigFile(dir),
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(o.SchedulerPort),
		"--tls-cert-file=" + dir.CertFile(clusterdir.Scheduler),
		"--tls-private-key-file=" + dir.KeyFile(clusterdir.Scheduler),
		"--client-ca-file=" + dir.CACert(),
		"--cert-dir=" + dir.ComponentDir(clusterdir.Scheduler),
	}
}

// endpoints returns the health and metrics URLs of a component.
func endpoints(o *Options, component string) (health, metrics string) {
	switch component {
	case clusterdir.Etcd:
		return etcdURL(o) + "/health", etcdURL(o) + "/metrics"
	case clusterdir.APIServer:
		base := apiServerURL(o)
		return base + "/readyz", base + "/metrics"
	case clusterdir.ControllerManager:
		base := fmt.Sprintf("https://127.0.0.1:%d", o.ControllerManagerPort)
		return base + "/healthz", base + "/metrics"
	case clusterdir.Scheduler:
		base := fmt.Sprintf("https://127.0.0.1:%d", o.SchedulerPort)
		return base + "/healthz", base + "/metrics"
	case clusterdir.Prometheus:
		base := PrometheusURL(o)
		return base + clusterdir.PrometheusReadyPath, base + "/metrics"
	}
	return "", ""
}
