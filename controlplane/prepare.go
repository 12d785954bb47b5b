package controlplane

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/controlplane/pki"
)

// Identities of the clients a local cluster writes kubeconfigs for. The
// components use their production identities so that RBAC, the Node
// authorizer and API priority-and-fairness treat them as in a real cluster;
// an admin identity everywhere would exempt every request from APF.
var clientIdentities = []struct {
	kubeconfig string
	user       string
	groups     []string
}{
	{"admin", "kscale-admin", []string{"system:masters"}},
	{clusterdir.ControllerManager, "system:kube-controller-manager", nil},
	{clusterdir.Scheduler, "system:kube-scheduler", nil},
}

// prepare fills the cluster folder with everything the components need:
// certificates, kubeconfigs and config files. The CA and the service-account
// key are kept across runs, so kubeconfigs minted earlier and tokens issued
// earlier stay valid; everything derived from ports is written anew.
func prepare(dir clusterdir.Dir, o *Options) error {
	for _, d := range []string{dir.PKIDir(), dir.LogDir(), dir.EtcdDataDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	for _, c := range o.components() {
		if err := os.MkdirAll(dir.ComponentDir(c), 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", dir.ComponentDir(c), err)
		}
	}
	ca, err := loadOrCreateCA(dir)
	if err != nil {
		return err
	}
	if err := ensureServiceAccountKey(dir); err != nil {
		return err
	}

	localhost := []net.IP{net.ParseIP("127.0.0.1")}
	serviceIP, err := firstServiceIP(o.ServiceClusterIPRange)
	if err != nil {
		return err
	}
	serving := []struct {
		name  string
		dns   []string
		extra []net.IP
	}{
		{clusterdir.APIServer, []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}, apiServerIPs(o, serviceIP)},
		{clusterdir.ControllerManager, []string{"localhost"}, nil},
		{clusterdir.Scheduler, []string{"localhost"}, nil},
	}
	for _, s := range serving {
		kp, err := ca.ServingCert(s.name, s.dns, append(localhost, s.extra...))
		if err != nil {
			return err
		}
		if err := writeKeyPair(dir, s.name, kp); err != nil {
			return err
		}
	}
	// The apiserver's identity towards kubelets (logs, exec, port-forward).
	kubeletClient, err := ca.ClientCert("kube-apiserver-kubelet-client", "system:masters")
	if err != nil {
		return err
	}
	if err := writeKeyPair(dir, "apiserver-kubelet-client", kubeletClient); err != nil {
		return err
	}

	server := apiServerURL(o)
	for _, id := range clientIdentities {
		if err := clusterdir.MintKubeconfigWith(ca, server, dir.Kubeconfig(id.kubeconfig), id.user, id.groups...); err != nil {
			return fmt.Errorf("writing kubeconfig %s: %w", id.kubeconfig, err)
		}
	}
	if o.Prometheus {
		mint := func(user string, groups ...string) error {
			kp, err := ca.ClientCert(user, groups...)
			if err != nil {
				return err
			}
			return writeKeyPair(dir, clusterdir.Prometheus, kp)
		}
		if err := preparePrometheus(dir, o, mint); err != nil {
			return fmt.Errorf("preparing Prometheus: %w", err)
		}
	}
	return writeSchedulerConfig(dir, o)
}

// apiServerIPs are the apiserver certificate's addresses beside 127.0.0.1.
func apiServerIPs(o *Options, serviceIP net.IP) []net.IP {
	ips := []net.IP{serviceIP}
	if addr := net.ParseIP(o.APIServerAddress); addr != nil && !addr.Equal(net.IPv4(127, 0, 0, 1)) {
		ips = append(ips, addr)
	}
	return ips
}

func apiServerURL(o *Options) string {
	return "https://" + net.JoinHostPort(o.APIServerAddress, strconv.Itoa(o.APIServerPort))
}

func loadOrCreateCA(dir clusterdir.Dir) (*pki.CA, error) {
	certExists := fileExists(dir.CACert())
	keyExists := fileExists(dir.CAKey())
	switch {
	case certExists && keyExists:
		ca, err := dir.LoadCA()
		if err != nil {
			return nil, inputErrorf("cluster folder %s is broken: %v (remove the folder to start afresh)", dir, err)
		}
		return ca, nil
	case certExists != keyExists:
		return nil, inputErrorf("cluster folder %s is broken: one of %s and %s is missing (remove the folder to start afresh)",
			dir, filepath.Base(dir.CACert()), filepath.Base(dir.CAKey()))
	}
	ca, err := pki.NewCA("kscale-ca")
	if err != nil {
		return nil, err
	}
	kp, err := ca.KeyPair()
	if err != nil {
		return nil, err
	}
	if err := clusterdir.WriteFileAtomic(dir.CAKey(), kp.KeyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := clusterdir.WriteFileAtomic(dir.CACert(), kp.CertPEM, 0o644); err != nil {
		return nil, err
	}
	return ca, nil
}

func ensureServiceAccountKey(dir clusterdir.Dir) error {
	privExists, pubExists := fileExists(dir.ServiceAccountKey()), fileExists(dir.ServiceAccountPub())
	if privExists && pubExists {
		data, err := os.ReadFile(dir.ServiceAccountKey())
		if err == nil {
			_, err = pki.ParsePrivateKey(data)
		}
		if err != nil {
			return inputErrorf("cluster folder %s is broken: service-account key: %v (remove the folder to start afresh)", dir, err)
		}
		return nil
	}
	if privExists != pubExists {
		return inputErrorf("cluster folder %s is broken: one of sa.key and sa.pub is missing (remove the folder to start afresh)", dir)
	}
	priv, pub, err := pki.NewSigningKey()
	if err != nil {
		return err
	}
	if err := clusterdir.WriteFileAtomic(dir.ServiceAccountKey(), priv, 0o600); err != nil {
		return err
	}
	return clusterdir.WriteFileAtomic(dir.ServiceAccountPub(), pub, 0o644)
}

func writeKeyPair(dir clusterdir.Dir, name string, kp pki.KeyPair) error {
	if err := clusterdir.WriteFileAtomic(dir.KeyFile(name), kp.KeyPEM, 0o600); err != nil {
		return err
	}
	return clusterdir.WriteFileAtomic(dir.CertFile(name), kp.CertPEM, 0o644)
}

// firstServiceIP is the ClusterIP of the "kubernetes" Service, which clients
// inside the cluster use and the serving certificate must therefore name.
func firstServiceIP(cidr string) (net.IP, error) {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, err
	}
	ip := n.IP.To4()
	if ip == nil {
		ip = n.IP.To16()
	}
	out := make(net.IP, len(ip))
	copy(out, ip)
	out[len(out)-1]++
	return out, nil
}

func writeSchedulerConfig(dir clusterdir.Dir, o *Options) error {
	// The scheduler's client rate limits only take effect through its config
	// file; the --kube-api-qps flags are ignored once --config is given.
	cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: %g
  burst: %d
leaderElection:
  leaderElect: true
`, dir.Kubeconfig(clusterdir.Scheduler), o.SchedulerQPS, o.SchedulerBurst)
	return clusterdir.WriteFileAtomic(schedulerConfigFile(dir), []byte(cfg), 0o644)
}

func schedulerConfigFile(dir clusterdir.Dir) string {
	return filepath.Join(dir.ComponentDir(clusterdir.Scheduler), "config.yaml")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}
