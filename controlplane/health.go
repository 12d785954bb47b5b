package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kscale/kscale/controlplane/clusterdir"
)

// health probes the components of one cluster with the admin identity.
type health struct {
	http    *http.Client
	client  kubernetes.Interface
	options *Options
}

func newHealth(dir clusterdir.Dir, o *Options) (*health, error) {
	cfg, err := dir.RESTConfig("admin")
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "kscale-supervisor"
	cfg.Timeout = 5 * time.Second
	// One HTTP client with the admin identity and the cluster CA serves every
	// probe: all components' serving certificates come from that CA.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building probe client: %w", err)
	}
	client, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return &health{http: httpClient, client: client, options: o}, nil
}

// leaseNames are the leader-election Leases the controller-manager and the
// scheduler hold in kube-system once they are active.
var leaseNames = map[string]string{
	clusterdir.ControllerManager: "kube-controller-manager",
	clusterdir.Scheduler:         "kube-scheduler",
}

// check returns nil when the component is ready: its health endpoint answers
// ok, and, for a leader-elected component, it holds its lease — renewed since
// the process started, so a lease left by an earlier process does not count.
func (h *health) check(ctx context.Context, component string, since time.Time) error {
	url, _ := endpoints(h.options, component)
	if err := h.get(ctx, url); err != nil {
		return err
	}
	lease, ok := leaseNames[component]
	if !ok {
		return nil
	}
	l, err := h.client.CoordinationV1().Leases("kube-system").Get(ctx, lease, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading lease kube-system/%s: %w", lease, err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return fmt.Errorf("lease kube-system/%s has no holder yet", lease)
	}
	// Lease times have microsecond precision; allow a second of clock slop.
	if l.Spec.RenewTime == nil || l.Spec.RenewTime.Add(time.Second).Before(since) {
		return fmt.Errorf("lease kube-system/%s not renewed since the process started", lease)
	}
	return nil
}

func (h *health) get(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := h.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(lastLine(string(body))))
	}
	if strings.HasSuffix(url, "/health") { // etcd answers 200 with {"health":"false"} while it has no leader
		var v struct{ Health string }
		if json.Unmarshal(body, &v) == nil && v.Health != "true" {
			return fmt.Errorf("%s: health %q", url, v.Health)
		}
	}
	return nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
