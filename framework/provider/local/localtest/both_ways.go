package localtest

import (
	"context"
	"fmt"
	"io"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kscale/kscale/controlplane"
	"github.com/kscale/kscale/measurements"
)

// BothWays is a workload measured both by kscale's own scrapes and by
// PromQL against the cluster's Prometheus.
type BothWays struct {
	Client kubernetes.Interface
	Config *rest.Config
	// PrometheusURL is the cluster's Prometheus server, which scrapes
	// every controlplane.PrometheusScrapeInterval.
	PrometheusURL string
	// Namespace holds the workload; NodeSelector picks the nodes its pods
	// run on.
	Namespace    string
	NodeSelector map[string]string
	// Pods is the size of the measured deployment; Lists the LISTs of pod
	// templates made beside it.
	Pods, Lists int
	Progress    io.Writer
}

// BothWaysMeasurements are the methods Measure runs, by identifier.
var BothWaysMeasurements = []struct {
	Method string
	Params map[string]any
}{
	{"APIResponsivenessPrometheus", map[string]any{"enableViolations": false}},
	{"SchedulingThroughput", map[string]any{"labelSelector": "app=measured"}},
	{"SchedulingThroughputPrometheus", map[string]any{}},
	{"PrometheusSchedulingMetrics", map[string]any{}},
	{"GenericPrometheusQuery", map[string]any{"metricName": "bindings", "metricVersion": "v1", "unit": "pods", "queries": []any{map[string]any{
		"name": "Bindings", "threshold": 1, "lowerBound": true,
		"query": `sum(increase(apiserver_request_total{verb="POST",resource="pods",subresource="binding",code="201"}[%v]))`,
	}}}},
}

// Measure runs a warm-up, then the measured workload (a burst of LISTs and
// a deployment of Pods pods, waited for until all run) between the start
// and the gather of BothWaysMeasurements, and returns their summaries by
// file name.
//
// The warm-up makes every series the workload touches exist before the
// start: Prometheus cannot see the calls a series counted before its first
// scrape (increase() has no earlier sample). Two scrape intervals pass
// after the warm-up, after the start and after the workload: increase()
// over the span counts from the first scrape inside it, so calls between
// the start and that scrape would be seen by kscale's scrapes only, and
// those after the last scrape likewise.
func (w BothWays) Measure(ctx context.Context) (map[string]measurements.Summary, error) {
	if err := w.deploy(ctx, "warm-up", 20); err != nil {
		return nil, err
	}
	if err := w.list(ctx); err != nil {
		return nil, err
	}
	time.Sleep(2 * controlplane.PrometheusScrapeInterval)

	env := &measurements.Env{Client: w.Client, Config: w.Config, PrometheusURL: w.PrometheusURL, Progress: w.Progress}
	m := measurements.NewManager(env)
	for _, e := range BothWaysMeasurements {
		params := map[string]any{"action": "start"}
		for k, v := range e.Params {
			params[k] = v
		}
		if err := m.Execute(ctx, e.Method, e.Method, params); err != nil {
			return nil, fmt.Errorf("starting %s: %w", e.Method, err)
		}
	}
	time.Sleep(2 * controlplane.PrometheusScrapeInterval)
	if err := w.list(ctx); err != nil {
		return nil, err
	}
	if err := w.deploy(ctx, "measured", int32(w.Pods)); err != nil {
		return nil, err
	}
	time.Sleep(2 * controlplane.PrometheusScrapeInterval)
	for _, e := range BothWaysMeasurements {
		// Judged: the generic query's lower bound, which the bindings
		// pass.
		params := map[string]any{"action": "gather", "enableViolations": e.Method == "GenericPrometheusQuery"}
		if err := m.Execute(ctx, e.Method, e.Method, params); err != nil {
			return nil, fmt.Errorf("gathering %s: %w", e.Method, err)
		}
	}
	out := map[string]measurements.Summary{}
	for _, s := range m.Summaries() {
		out[s.FileName()] = s
	}
	return out, nil
}

func (w BothWays) list(ctx context.Context) error {
	for range w.Lists {
		if _, err := w.Client.CoreV1().PodTemplates(w.Namespace).List(ctx, metav1.ListOptions{}); err != nil {
			return fmt.Errorf("listing pod templates: %w", err)
		}
	}
	return nil
}

// deploy creates a deployment of pause pods and waits until all run.
func (w BothWays) deploy(ctx context.Context, name string, replicas int32) error {
	if _, err := w.Client.AppsV1().Deployments(w.Namespace).Create(ctx, PauseDeployment(name, w.NodeSelector, replicas), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating deployment %s: %w", name, err)
	}
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := w.Client.CoreV1().Pods(w.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name, ResourceVersion: "0"})
		if err != nil {
			return false, nil
		}
		running := 0
		for _, p := range list.Items {
			if p.Status.Phase == v1.PodRunning {
				running++
			}
		}
		return running == int(replicas), nil
	})
	if err != nil {
		return fmt.Errorf("deployment %s: pods not all running: %w", name, err)
	}
	return nil
}

// MinCalls is how many calls an API call item needs on its primary side
// for its quantiles to be compared: with fewer, one call more or less on a
// side moves a p99 across buckets.
const MinCalls = 50

// ComparedRows are the cross-check rows of api's items with at least
// MinCalls calls, and the calls of every item both sides have, by item.
func ComparedRows(api measurements.Summary) (rows []measurements.CrossCheckRow, calls map[string]int) {
	calls = map[string]int{}
	if api.CrossCheck == nil {
		return nil, calls
	}
	for _, r := range api.CrossCheck.Rows {
		calls[r.Item] = r.Calls
		if r.Calls >= MinCalls {
			rows = append(rows, r)
		}
	}
	return rows, calls
}
