package clusterdir

import (
	"fmt"
	"os"
	"path/filepath"
)

// Component names, the same as the Kubernetes binaries they run.
const (
	Etcd              = "etcd"
	APIServer         = "kube-apiserver"
	ControllerManager = "kube-controller-manager"
	Scheduler         = "kube-scheduler"
	// Prometheus is the optional Prometheus server that scrapes the others
	// (Options.Prometheus); it is not in Components.
	Prometheus = "prometheus"
	// PrometheusReadyPath is the Prometheus server's readiness endpoint
	// under its URL, the path of its state's health URL.
	PrometheusReadyPath = "/-/ready"
)

// AllComponents are Components and, last, the optional Prometheus: every
// component a cluster can run.
func AllComponents() []string { return append(append([]string(nil), Components...), Prometheus) }

// Components lists the control-plane components in start order; they stop in
// the reverse order.
var Components = []string{Etcd, APIServer, ControllerManager, Scheduler}

// Dir is the root folder of one local cluster.
type Dir string

// Open returns the Dir for path made absolute, because the folder is handed to
// child processes that may run in another working directory.
func Open(path string) (Dir, error) {
	if path == "" {
		return "", fmt.Errorf("cluster folder not set")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolving cluster folder %q: %w", path, err)
	}
	return Dir(abs), nil
}

func (d Dir) path(elem ...string) string {
	return filepath.Join(append([]string{string(d)}, elem...)...)
}

// Path returns the folder itself.
func (d Dir) Path() string { return string(d) }

// PKIDir holds the CA and every certificate of the cluster.
func (d Dir) PKIDir() string { return d.path("pki") }

// CACert is the cluster CA certificate (the apiserver's --client-ca-file).
func (d Dir) CACert() string { return d.path("pki", "ca.crt") }

// CAKey is the CA private key; whoever can read it can mint any identity.
func (d Dir) CAKey() string { return d.path("pki", "ca.key") }

// CertFile is the certificate issued to name (a component or client).
func (d Dir) CertFile(name string) string { return d.path("pki", name+".crt") }

// KeyFile is the private key belonging to CertFile(name).
func (d Dir) KeyFile(name string) string { return d.path("pki", name+".key") }

// ServiceAccountKey signs service-account tokens; ServiceAccountPub verifies them.
func (d Dir) ServiceAccountKey() string { return d.path("pki", "sa.key") }

// ServiceAccountPub is the public half of ServiceAccountKey.
func (d Dir) ServiceAccountPub() string { return d.path("pki", "sa.pub") }

// Kubeconfig is the kubeconfig file of a client, e.g. "admin" or a component.
func (d Dir) Kubeconfig(client string) string { return d.path(client + ".kubeconfig") }

// AdminKubeconfig is the file users point kubectl and kscale at.
func (d Dir) AdminKubeconfig() string { return d.Kubeconfig("admin") }

// ComponentDir is a component's private working folder (config files, certs).
func (d Dir) ComponentDir(component string) string { return d.path("components", component) }

// EtcdDataDir holds etcd's data; it survives restarts of etcd and of the cluster.
func (d Dir) EtcdDataDir() string { return d.path("etcd") }

// PrometheusTargets is the file_sd file of the hollow-node fleets a
// cluster's Prometheus scrapes: whoever starts fleets lists them there.
func (d Dir) PrometheusTargets() string { return d.path("components", Prometheus, "fleets.json") }

// LogDir holds one log file per component and one for the supervisor.
func (d Dir) LogDir() string { return d.path("logs") }

// LogFile is the log of one component (or "supervisor").
func (d Dir) LogFile(name string) string { return d.path("logs", name+".log") }

// OptionsFile records the options the cluster was brought up with, so that a
// restarted component gets exactly the same flags and ports.
func (d Dir) OptionsFile() string { return d.path("options.json") }

// StateFile is written by the supervisor; see State.
func (d Dir) StateFile() string { return d.path("state.json") }

// HoldFile is the file whose presence keeps the supervisor from restarting
// the component once it exits: how a test holds the apiserver down for a
// while (RestartApiserver). Removing it lets the restart go ahead.
func (d Dir) HoldFile(component string) string { return d.path("hold", component) }

// LockFile is held (flock) by the supervisor for as long as the cluster runs.
func (d Dir) LockFile() string { return d.path("supervisor.lock") }

// Check reports a folder that cannot hold a cluster: not a directory, or
// unwritable. A missing folder is fine: it will be created.
func (d Dir) Check() error {
	info, err := os.Stat(string(d))
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return fmt.Errorf("cluster folder %s: %w", d, err)
	case !info.IsDir():
		return fmt.Errorf("cluster folder %s is not a directory", d)
	}
	probe, err := os.CreateTemp(string(d), ".probe-*")
	if err != nil {
		return fmt.Errorf("cluster folder %s is not writable: %w", d, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}
