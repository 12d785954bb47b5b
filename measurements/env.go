package measurements

import (
	"context"
	"fmt"
	"io"
	"k8s.io/utils/clock"
	"net/http"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kscale/kscale/measurements/progress"
)

// Env is what a measurement may use of the run: the cluster under test, the
// control-plane processes it can see, and where to write what it measured.
// One Env is shared by every measurement of a run; it is read-only.
type Env struct {
	// Client talks to the cluster under test with the run's credentials.
	Client kubernetes.Interface
	// Config is the rest config behind Client, for measurements that need
	// their own clients (informers with other rate limits, say).
	Config *rest.Config
	// Components are the control-plane processes whose metrics, health and
	// resource usage this run can reach: etcd, kube-apiserver,
	// kube-controller-manager, kube-scheduler on the local provider, and the
	// hollow-node fleets. Empty when the run knows nothing of the processes
	// (a managed cluster); measurements then say "not measured" with why.
	Components []Component
	// PrometheusURL, when set, is a Prometheus server that scrapes the
	// cluster: APIResponsivenessPrometheus queries it instead of scraping
	// the apiserver itself (clusters whose apiservers sit behind a load
	// balancer).
	PrometheusURL string
	// ReportDir is where measurements write their raw files (slowest pods,
	// failed pods); empty means do not write any.
	ReportDir string
	// TestName is the config's name, used in file names as clusterloader2
	// does.
	TestName string
	// Nodes is the node count the config was compiled for.
	Nodes int
	// NamespacePrefix and Namespaces are the run's namespaces:
	// <prefix>-1 ... <prefix>-<Namespaces>, as the config's namespace
	// section made them.
	NamespacePrefix string
	Namespaces      int
	// RunLabel is the label selector of everything the run created
	// ("kscale.io/run=<id>").
	RunLabel string
	// Progress receives the progress lines of long waits (stderr in a run);
	// nil is quiet.
	Progress io.Writer
	// Clock is the clock the measurements read; nil is the real one.
	Clock clock.PassiveClock
	// RestartComponent stops the named control-plane component and keeps
	// it down for down, then lets it be started again; it returns then,
	// not once the component is ready. Nil when the run cannot restart
	// components (its cluster is not a local one).
	RestartComponent func(ctx context.Context, name string, down time.Duration) error
}

// Component is one process the run can observe.
type Component struct {
	// Name is the component's name: "etcd", "kube-apiserver",
	// "kube-controller-manager", "kube-scheduler", or "fleet-<n>" for a
	// hollow-node fleet.
	Name string
	// PID is the process id when the process runs on this machine, else 0.
	PID int
	// MetricsURL serves Prometheus text metrics; empty when unreachable.
	MetricsURL string
	// HealthURL answers ok when the component is healthy (/readyz for the
	// apiserver).
	HealthURL string
	// HTTP is the client for MetricsURL and HealthURL (it carries the client
	// certificate the HTTPS endpoints ask for); nil means http.DefaultClient.
	HTTP *http.Client
}

// Component returns the named component, or nil when the run cannot see it.
func (e *Env) Component(name string) *Component {
	for i := range e.Components {
		if e.Components[i].Name == name {
			return &e.Components[i]
		}
	}
	return nil
}

// clock is the Env's clock.
func (e *Env) clock() clock.PassiveClock {
	if e.Clock != nil {
		return e.Clock
	}
	return clock.RealClock{}
}

// now is the time on the Env's clock.
func (e *Env) now() time.Time { return e.clock().Now() }

// progress returns a reporter of a long wait's progress on env.Progress
// ("pods running 800/1000  80%  ETA 3s"), at most one line per 5 s.
func (e *Env) progress(what string, total int) *progress.Reporter {
	return progress.New(e.Progress, what, total, 5*time.Second)
}

// APIServerMetrics fetches the apiserver's /metrics through the run's client,
// so it works with whatever credentials and address the kubeconfig has.
func (e *Env) APIServerMetrics(ctx context.Context) ([]byte, error) {
	if e.Client == nil {
		return nil, fmt.Errorf("no client for the cluster")
	}
	body, err := e.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("scraping the apiserver's /metrics: %w", err)
	}
	return body, nil
}

// Get fetches url with the component's client and returns the body of a 200
// answer.
func (c *Component) Get(ctx context.Context, url string) ([]byte, error) {
	client := c.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: reading %s: %w", c.Name, url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("%s: %s answered %s", c.Name, url, resp.Status)
	}
	return body, nil
}

// Metrics fetches the component's Prometheus metrics text.
func (c *Component) Metrics(ctx context.Context) ([]byte, error) {
	if c.MetricsURL == "" {
		return nil, fmt.Errorf("%s: no metrics endpoint known", c.Name)
	}
	return c.Get(ctx, c.MetricsURL)
}
