package controlplane

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/controlplane/pki"
)

func TestPrepareWritesIdentitiesAndKeepsTheCA(t *testing.T) {
	dir := clusterdir.Dir(t.TempDir())
	o := DefaultOptions()
	if err := prepare(dir, &o); err != nil {
		t.Fatal(err)
	}
	for client, user := range map[string]string{
		"admin":                      "kscale-admin",
		clusterdir.ControllerManager: "system:kube-controller-manager",
		clusterdir.Scheduler:         "system:kube-scheduler",
	} {
		cfg, err := clientcmd.BuildConfigFromFlags("", dir.Kubeconfig(client))
		if err != nil {
			t.Fatal(err)
		}
		cert, err := pki.ParseCertificate(cfg.CertData)
		if err != nil {
			t.Fatal(err)
		}
		if cert.Subject.CommonName != user {
			t.Errorf("%s kubeconfig authenticates as %q, want %q", client, cert.Subject.CommonName, user)
		}
		if cfg.Host != "https://127.0.0.1:6443" {
			t.Errorf("%s kubeconfig server = %q", client, cfg.Host)
		}
	}
	for _, secret := range []string{dir.CAKey(), dir.ServiceAccountKey(), dir.KeyFile(clusterdir.APIServer), dir.AdminKubeconfig()} {
		info, err := os.Stat(secret)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %o, want 600", secret, info.Mode().Perm())
		}
	}
	sched, err := os.ReadFile(schedulerConfigFile(dir))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sched), "qps: 100\n") || !strings.Contains(string(sched), "burst: 100\n") {
		t.Errorf("scheduler config lacks the client rate limits:\n%s", sched)
	}

	// A second prepare, on another port, keeps the CA and the SA key and
	// points the kubeconfigs at the new port.
	ca1, _ := os.ReadFile(dir.CACert())
	sa1, _ := os.ReadFile(dir.ServiceAccountKey())
	o.APIServerPort = 7443
	if err := prepare(dir, &o); err != nil {
		t.Fatal(err)
	}
	ca2, _ := os.ReadFile(dir.CACert())
	sa2, _ := os.ReadFile(dir.ServiceAccountKey())
	if !bytes.Equal(ca1, ca2) || !bytes.Equal(sa1, sa2) {
		t.Error("the CA or the service-account key changed between two starts of one folder")
	}
	cfg, _ := clientcmd.BuildConfigFromFlags("", dir.AdminKubeconfig())
	if cfg.Host != "https://127.0.0.1:7443" {
		t.Errorf("admin kubeconfig server after a port change = %q", cfg.Host)
	}
}

func TestPrepareRefusesABrokenFolder(t *testing.T) {
	tests := []struct {
		name  string
		setup func(d clusterdir.Dir)
		want  string
	}{
		{"CA key missing", func(d clusterdir.Dir) { os.Remove(d.CAKey()) }, "one of ca.crt and ca.key is missing"},
		{"CA garbage", func(d clusterdir.Dir) { os.WriteFile(d.CACert(), []byte("x"), 0o644) }, "is broken"},
		{"SA key missing", func(d clusterdir.Dir) { os.Remove(d.ServiceAccountPub()) }, "one of sa.key and sa.pub is missing"},
		{"SA key garbage", func(d clusterdir.Dir) { os.WriteFile(d.ServiceAccountKey(), []byte("x"), 0o600) }, "service-account key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := clusterdir.Dir(filepath.Join(t.TempDir(), "c"))
			o := DefaultOptions()
			if err := prepare(dir, &o); err != nil {
				t.Fatal(err)
			}
			tt.setup(dir)
			err := prepare(dir, &o)
			var input *InputError
			if !errors.As(err, &input) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want an InputError saying %q", err, tt.want)
			}
		})
	}
}

func TestLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	os.WriteFile(path, []byte("one\n\ntwo\nthree\nfour\n"), 0o644)
	if got := clusterdir.LogTail(path, 2); got != "  three\n  four" {
		t.Errorf("logTail = %q", got)
	}
	if got := clusterdir.LogTail(filepath.Join(t.TempDir(), "none"), 2); got != "" {
		t.Errorf("logTail of a missing file = %q", got)
	}
}
