package clusterdir

import (
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kscale/kscale/controlplane/pki"
)

func TestStateRoundTrip(t *testing.T) {
	d := Dir(t.TempDir())
	if _, err := d.ReadState(); !errors.Is(err, ErrNoState) {
		t.Fatalf("empty folder: err = %v, want ErrNoState", err)
	}
	now := time.Now().UTC().Round(time.Second)
	in := &State{
		SupervisorPID: 42, Phase: PhaseReady, StartedAt: now, ReadyAt: &now,
		APIServerURL: "https://127.0.0.1:6443",
		Components:   []Component{{Name: APIServer, PID: 43, Ready: true, Restarts: 1}},
	}
	if err := d.WriteState(in); err != nil {
		t.Fatal(err)
	}
	out, err := d.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	if out.Phase != PhaseReady || out.SupervisorPID != 42 || !out.ReadyAt.Equal(now) {
		t.Errorf("read back %+v", out)
	}
	if c := out.Component(APIServer); c == nil || c.PID != 43 || c.Restarts != 1 {
		t.Errorf("component read back: %+v", c)
	}
	if out.Component(Scheduler) != nil {
		t.Error("Component returned a component that is not in the state")
	}
	if err := os.WriteFile(d.StateFile(), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadState(); err == nil || errors.Is(err, ErrNoState) {
		t.Errorf("corrupt state: err = %v, want a corruption error", err)
	}
}

func TestLockIsExclusive(t *testing.T) {
	d := Dir(filepath.Join(t.TempDir(), "c"))
	if running, err := d.Running(); err != nil || running {
		t.Fatalf("fresh folder: running=%v err=%v", running, err)
	}
	l, err := d.TryLock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.TryLock(); !errors.Is(err, ErrRunning) {
		t.Errorf("second lock: err = %v, want ErrRunning", err)
	}
	if running, _ := d.Running(); !running {
		t.Error("Running = false while the lock is held")
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if running, _ := d.Running(); running {
		t.Error("Running = true after Unlock")
	}
}

func TestCheck(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Dir(filepath.Join(root, "missing")).Check(); err != nil {
		t.Errorf("missing folder: %v (it would be created)", err)
	}
	if err := Dir(root).Check(); err != nil {
		t.Errorf("writable folder: %v", err)
	}
	if err := Dir(file).Check(); err == nil {
		t.Error("a file passed as a cluster folder")
	}
}

func TestMintKubeconfig(t *testing.T) {
	ca, err := pki.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "node.kubeconfig")
	if err := MintKubeconfigWith(ca, "https://127.0.0.1:6443", path, "system:node:n1", "system:nodes"); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %o, want 600: it holds a private key", info.Mode().Perm())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:6443" {
		t.Errorf("server = %q", cfg.Host)
	}
	cert, err := pki.ParseCertificate(cfg.CertData)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "system:node:n1" || !slices.Equal(cert.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("identity = %q %v", cert.Subject.CommonName, cert.Subject.Organization)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(cfg.CAData)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("minted certificate does not verify against the kubeconfig's CA: %v", err)
	}
}

func TestStatePrometheusURL(t *testing.T) {
	apiserver := Component{Name: APIServer, HealthURL: "https://127.0.0.1:6443/readyz"}
	prom := Component{Name: Prometheus, HealthURL: "http://127.0.0.1:9090" + PrometheusReadyPath}
	for name, c := range map[string]struct {
		components []Component
		want       string
	}{
		"with Prometheus":    {[]Component{apiserver, prom}, "http://127.0.0.1:9090"},
		"without Prometheus": {[]Component{apiserver}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			s := &State{Components: c.components}
			if got := s.PrometheusURL(); got != c.want {
				t.Fatalf("PrometheusURL() = %q, want %q", got, c.want)
			}
		})
	}
}
