// Package localtest holds what the local provider's integration tests and
// the benchmarks under bench/ both need to start and read local clusters:
// cluster options for tests, and readers of Prometheus metrics.
package localtest

import (
	"io"
	"net/http"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kscale/kscale/controlplane"
)

// Options are cluster options for tests: free ports everywhere, no fsync,
// the cluster stopped with the test process, and a node monitor grace
// period of 20 s instead of 50 s so that node-failure tests wait less
// (heartbeats come every 10 s either way).
func Options() controlplane.Options {
	o := controlplane.DefaultOptions()
	o.APIServerPort = 0
	o.EtcdUnsafeNoFsync = true
	o.StopWithCaller = true // a killed test run leaves no cluster behind
	o.ControllerManagerArgs = []string{"--node-monitor-grace-period=20s", "--node-monitor-period=2s"}
	return o
}

// Scrape fetches and parses Prometheus text metrics from url.
func Scrape(client *http.Client, url string) (map[string]*dto.MetricFamily, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, &HTTPError{Status: resp.Status, Body: strings.TrimSpace(string(body))}
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// HTTPError is an answer other than 200 OK.
type HTTPError struct{ Status, Body string }

func (e *HTTPError) Error() string { return e.Status + ": " + e.Body }

// HasLabels reports whether the sample carries every label of want.
func HasLabels(m *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == k && l.GetValue() == v {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// FleetMetric sums the samples of a fleet's metric that carry labels,
// read from the fleet's endpoint.
func FleetMetric(endpoint, name string, labels map[string]string) (float64, error) {
	fams, err := Scrape(http.DefaultClient, endpoint+"/metrics")
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, m := range fams[name].GetMetric() {
		if HasLabels(m, labels) {
			total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return total, nil
}

// PodPhases counts the pods of a list by phase.
func PodPhases(list *v1.PodList) map[v1.PodPhase]int {
	phases := map[v1.PodPhase]int{}
	for _, p := range list.Items {
		phases[p.Status.Phase]++
	}
	return phases
}

// PauseDeployment is a Deployment of replicas pause pods (10m CPU, 10Mi
// each) on the nodes nodeSelector picks.
func PauseDeployment(name string, nodeSelector map[string]string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					NodeSelector: nodeSelector,
					Containers: []v1.Container{{
						Name:  "pause",
						Image: "registry.k8s.io/pause:3.10",
						Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
							v1.ResourceCPU: resource.MustParse("10m"), v1.ResourceMemory: resource.MustParse("10Mi"),
						}},
					}},
				},
			},
		},
	}
}
