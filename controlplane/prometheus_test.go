package controlplane

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/framework/golden"
)

// TestPrometheusConfigGolden pins what the cluster's Prometheus scrapes and
// how: every component at its own port, the HTTPS ones with the cluster's
// CA and Prometheus' client certificate, the fleets from their targets file.
func TestPrometheusConfigGolden(t *testing.T) {
	o := DefaultOptions()
	o.EtcdPort, o.ControllerManagerPort, o.SchedulerPort = 2379, 10257, 10259
	o.Prometheus, o.PrometheusPort = true, 9090
	golden.Check(t, "prometheus.yml", []byte(prometheusConfig(clusterdir.Dir("/cluster"), &o)))
}

// Without the prometheus program, --prometheus is bad input naming the
// package to install; without --prometheus nothing looks for it.
func TestFindPrometheus(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	o := &Options{Prometheus: true}
	var input *InputError
	if err := findPrometheus(o); !errors.As(err, &input) || !strings.Contains(err.Error(), "apt-get install prometheus") {
		t.Errorf("no program: %v", err)
	}
	if err := findPrometheus(&Options{}); err != nil {
		t.Errorf("without --prometheus: %v", err)
	}
	bin := filepath.Join(os.Getenv("PATH"), "prometheus")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := findPrometheus(o); err != nil || o.PrometheusBinary != bin {
		t.Errorf("found %q, %v; want %s", o.PrometheusBinary, err, bin)
	}
}

// The fleets' targets file is what Prometheus' file_sd reads: a list of
// target groups, empty when no fleet runs.
func TestWritePrometheusTargets(t *testing.T) {
	dir := clusterdir.Dir(t.TempDir())
	for _, tc := range []struct {
		endpoints []string
		want      string
	}{
		{nil, "[]\n"},
		{[]string{"127.0.0.1:10269", "127.0.0.1:10270"}, `[{"targets":["127.0.0.1:10269","127.0.0.1:10270"],"labels":{"component":"fleet"}}]` + "\n"},
	} {
		if err := WritePrometheusTargets(dir, tc.endpoints); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(dir.PrometheusTargets())
		if err != nil || string(got) != tc.want {
			t.Errorf("targets file %q, %v; want %q", got, err, tc.want)
		}
	}
}

func TestPrometheusPortNeedsPrometheus(t *testing.T) {
	o := DefaultOptions()
	o.PrometheusPort = 9090
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--prometheus-port=9090: only with --prometheus") {
		t.Errorf("--prometheus-port alone: %v", err)
	}
}
