package runner

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/measurements"
)

// localComponents returns the control-plane processes of the local cluster
// in clusterDir, with a client that can read their metrics: the kubeconfig's
// own TLS identity, which the local cluster's components trust. An empty
// clusterDir is looked for beside the kubeconfig (kscale cluster up writes
// DIR/admin.kubeconfig); a cluster that is not local gives none, and the
// measurements that need the processes say so. The cluster's Prometheus
// server, which observes the system under test rather than being part of
// it, is not among the components: its URL is returned.
func localComponents(clusterDir, kubeconfig string, cfg *rest.Config) (components []measurements.Component, dir clusterdir.Dir, prometheusURL string, err error) {
	explicit := clusterDir != ""
	if !explicit {
		clusterDir = filepath.Dir(kubeconfig)
	}
	state, err := clusterdir.Dir(clusterDir).ReadState()
	if err != nil {
		if !explicit && (errors.Is(err, clusterdir.ErrNoState) || os.IsNotExist(err)) {
			return nil, "", "", nil
		}
		return nil, "", "", &InputError{fmt.Errorf("--cluster-dir %s: %w", clusterDir, err)}
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, "", "", fmt.Errorf("building the metrics client: %w", err)
	}
	var out []measurements.Component
	for _, c := range state.Components {
		if c.Name == clusterdir.Prometheus {
			continue
		}
		client := httpClient
		if c.Name == "etcd" {
			client = http.DefaultClient // plain HTTP on loopback
		}
		out = append(out, measurements.Component{
			Name: c.Name, PID: c.PID, MetricsURL: c.MetricsURL, HealthURL: c.HealthURL, HTTP: client,
		})
	}
	return out, clusterdir.Dir(clusterDir), state.PrometheusURL(), nil
}

// ParseComponent reads an --observe value, NAME=METRICS_URL: a process
// outside the control plane (a hollow-node fleet) whose usage the run
// reports from its process metrics.
func ParseComponent(spec string) (measurements.Component, error) {
	name, raw, ok := strings.Cut(spec, "=")
	u, err := url.Parse(raw)
	if !ok || name == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return measurements.Component{}, fmt.Errorf("--observe %q: want NAME=METRICS_URL, e.g. fleet-1=http://127.0.0.1:10269/metrics", spec)
	}
	return measurements.Component{Name: name, MetricsURL: raw}, nil
}

// newEnv is what the run's measurements see.
func newEnv(o Options, cfg *rest.Config, client kubernetes.Interface, components []measurements.Component, testName string, nodes int, nsPrefix string, namespaces int, runLabel string) *measurements.Env {
	return &measurements.Env{
		Client:          client,
		Config:          cfg,
		Components:      append(append(components, o.Components...), fleetComponents(o.Fleets)...),
		PrometheusURL:   o.PrometheusURL,
		ReportDir:       o.ReportDir,
		TestName:        testName,
		Nodes:           nodes,
		NamespacePrefix: nsPrefix,
		Namespaces:      namespaces,
		RunLabel:        runLabel,
		Progress:        o.Progress,
	}
}
