package controlplane

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kscale/kscale/controlplane/clusterdir"
)

// PrometheusScrapeInterval is how often the cluster's Prometheus scrapes
// every target: clusterloader2 scrapes the control plane every 5 s.
const PrometheusScrapeInterval = 5 * time.Second

// prometheusIdentity is the client certificate Prometheus scrapes with:
// group system:monitoring may read /metrics of the apiserver, and of the
// controller-manager and scheduler, which ask the apiserver.
const (
	prometheusUser  = "kscale-prometheus"
	prometheusGroup = "system:monitoring"
)

// findPrometheus resolves the prometheus program when the cluster runs one.
func findPrometheus(o *Options) error {
	if !o.Prometheus || o.PrometheusBinary != "" {
		return nil
	}
	path, err := exec.LookPath("prometheus")
	if err != nil {
		return inputErrorf("--prometheus: no prometheus program on PATH (Debian and Ubuntu: apt-get install prometheus)")
	}
	o.PrometheusBinary = path
	return nil
}

// preparePrometheus writes Prometheus' client certificate and its config,
// and an empty fleet target list unless one exists.
func preparePrometheus(dir clusterdir.Dir, o *Options, mint func(user string, groups ...string) error) error {
	if err := mint(prometheusUser, prometheusGroup); err != nil {
		return err
	}
	if err := clusterdir.WriteFileAtomic(prometheusConfigFile(dir), []byte(prometheusConfig(dir, o)), 0o644); err != nil {
		return err
	}
	if _, err := os.Stat(dir.PrometheusTargets()); errors.Is(err, os.ErrNotExist) {
		return WritePrometheusTargets(dir, nil)
	}
	return nil
}

func prometheusConfigFile(dir clusterdir.Dir) string {
	return filepath.Join(dir.ComponentDir(clusterdir.Prometheus), "prometheus.yml")
}

// prometheusConfig scrapes etcd, the apiserver, the controller-manager and
// the scheduler at their own endpoints with the cluster's CA and
// Prometheus' client certificate, and the fleets listed in the targets
// file, which Prometheus reads again when it changes.
func prometheusConfig(dir clusterdir.Dir, o *Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by kscale at every `cluster up`.\nglobal:\n  scrape_interval: %s\n  scrape_timeout: %s\nscrape_configs:\n",
		PrometheusScrapeInterval, PrometheusScrapeInterval)
	fmt.Fprintf(&b, "- job_name: %s\n  static_configs:\n  - targets: [\"127.0.0.1:%d\"]\n", clusterdir.Etcd, o.EtcdPort)
	for _, c := range []struct {
		name string
		port int
	}{{clusterdir.APIServer, o.APIServerPort}, {clusterdir.ControllerManager, o.ControllerManagerPort}, {clusterdir.Scheduler, o.SchedulerPort}} {
		fmt.Fprintf(&b, "- job_name: %s\n  scheme: https\n  tls_config:\n    ca_file: %q\n    cert_file: %q\n    key_file: %q\n  static_configs:\n  - targets: [\"127.0.0.1:%d\"]\n",
			c.name, dir.CACert(), dir.CertFile(clusterdir.Prometheus), dir.KeyFile(clusterdir.Prometheus), c.port)
	}
	fmt.Fprintf(&b, "- job_name: hollow-nodes\n  file_sd_configs:\n  - files: [%q]\n    refresh_interval: %s\n", dir.PrometheusTargets(), PrometheusScrapeInterval)
	return b.String()
}

func prometheusArgs(dir clusterdir.Dir, o *Options) []string {
	return []string{
		"--config.file=" + prometheusConfigFile(dir),
		"--storage.tsdb.path=" + filepath.Join(dir.ComponentDir(clusterdir.Prometheus), "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", o.PrometheusPort),
	}
}

// PrometheusURL is the cluster's Prometheus server, "" when it runs none.
func PrometheusURL(o *Options) string {
	if !o.Prometheus {
		return ""
	}
	return fmt.Sprintf("http://127.0.0.1:%d", o.PrometheusPort)
}

// WritePrometheusTargets lists the metrics endpoints (host:port) of the
// fleets that run the cluster's hollow nodes, for its Prometheus to
// scrape; a cluster without Prometheus ignores the file.
func WritePrometheusTargets(dir clusterdir.Dir, endpoints []string) error {
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels,omitempty"`
	}
	groups := []group{}
	if len(endpoints) > 0 {
		groups = append(groups, group{Targets: endpoints, Labels: map[string]string{"component": "fleet"}})
	}
	data, err := json.Marshal(groups)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir.PrometheusTargets()), 0o700); err != nil {
		return err
	}
	return clusterdir.WriteFileAtomic(dir.PrometheusTargets(), append(data, '\n'), 0o644)
}
