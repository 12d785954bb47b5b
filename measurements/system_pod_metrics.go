package measurements

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func init() {
	Register("SystemPodMetrics", SLO, func(string) Measurement { return &systemPodMetrics{} })
}

// systemPodMetrics is SystemPodMetrics: the restart counts of the
// containers of kube-system's pods, counted from start to gather, with
// what was counted over a pause (a planned apiserver restart) left out.
//
// Params, as clusterloader2 reads them: action start|gather|pause|unpause;
// systemPodMetricsEnabled (default false: the measurement does nothing);
// enableRestartCountCheck (default false) judges each container's restarts
// against restartCountThresholdOverrides (YAML map of container name →
// allowed restarts, "default" for the rest, else 0), and
// systemPodsFailureEnabled (default true) makes a breach a violation
// rather than a log line.
type systemPodMetrics struct {
	mu sync.Mutex
	// base is the restart count by pod/container that gather subtracts;
	// nil until start.
	base map[string]int32
}

func (m *systemPodMetrics) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather", "pause", "unpause")
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch action {
	case "pause":
		return nil, nil
	case "unpause":
		// Restarts over the pause (a planned restart) do not count.
		if m.base == nil {
			return nil, nil
		}
		pods, err := listSystemPods(ctx, env)
		if err != nil {
			return nil, err
		}
		m.base = restartCounts(pods)
		return nil, nil
	}
	enabled, err := params.Bool("systemPodMetricsEnabled", false)
	if err != nil || !enabled {
		return nil, err
	}
	check, err := params.Bool("enableRestartCountCheck", false)
	if err != nil {
		return nil, err
	}
	failOnBreach, err := params.Bool("systemPodsFailureEnabled", true)
	if err != nil {
		return nil, err
	}
	allowed, err := restartOverrides(params)
	if err != nil {
		return nil, err
	}
	pods, err := listSystemPods(ctx, env)
	if err != nil {
		return nil, err
	}
	if action == "start" {
		m.base = restartCounts(pods)
		return nil, nil
	}
	if m.base == nil {
		return nil, fmt.Errorf("SystemPodMetrics was not started")
	}
	file := systemPodsFile{Pods: []systemPod{}}
	var bad []string
	total := 0
	for _, p := range pods {
		sp := systemPod{Name: p.Name, Containers: []systemContainer{}}
		images := map[string]string{}
		for _, c := range p.Spec.Containers {
			images[c.Name] = c.Image
		}
		for _, cs := range p.Status.ContainerStatuses {
			image := cs.Image
			if spec, ok := images[cs.Name]; ok {
				image = spec
			}
			c := systemContainer{Name: cs.Name, Image: imageName(image),
				RestartCount: cs.RestartCount - m.base[p.Name+"/"+cs.Name]}
			if t := cs.LastTerminationState.Terminated; t != nil {
				c.LastRestartReason = t.String()
			}
			total += int(c.RestartCount)
			limit, ok := allowed[cs.Name]
			if !ok {
				limit = allowed["default"]
			}
			if check && int(c.RestartCount) > limit {
				bad = append(bad, fmt.Sprintf("container %s of %s restarted %d times (allowed %d)", cs.Name, p.Name, c.RestartCount, limit))
			}
			sp.Containers = append(sp.Containers, c)
		}
		file.Pods = append(file.Pods, sp)
	}
	s := Summary{
		// clusterloader2 names this summary without the identifier.
		Name:     "SystemPodMetrics",
		Output:   file,
		Headline: map[string]float64{"system pods": float64(len(pods)), "restarts": float64(total)},
	}
	if len(pods) == 0 {
		// Nothing to judge, rather than a judgement missed.
		s.Empty = true
		return []Summary{s}, notMeasuredf("kube-system has no pods (the local provider runs the control plane as processes, not pods)")
	}
	if len(bad) > 0 && !failOnBreach {
		return []Summary{s}, nil
	}
	return []Summary{s}, violations(bad)
}

// listSystemPods lists kube-system's pods from the apiserver's cache.
func listSystemPods(ctx context.Context, env *Env) ([]corev1.Pod, error) {
	if env == nil || env.Client == nil {
		return nil, fmt.Errorf("no client for the cluster")
	}
	list, err := env.Client.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, fmt.Errorf("listing kube-system's pods: %w", err)
	}
	return list.Items, nil
}

// restartCounts are the pods' containers' restart counts by pod/container.
func restartCounts(pods []corev1.Pod) map[string]int32 {
	out := map[string]int32{}
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			out[p.Name+"/"+cs.Name] = cs.RestartCount
		}
	}
	return out
}

// restartOverrides reads restartCountThresholdOverrides, a YAML map of
// container name to allowed restarts.
func restartOverrides(params Params) (map[string]int, error) {
	text, err := params.String("restartCountThresholdOverrides", "")
	if err != nil || text == "" {
		return map[string]int{}, err
	}
	out := map[string]int{}
	if err := yaml.UnmarshalStrict([]byte(text), &out); err != nil {
		return nil, fmt.Errorf("param restartCountThresholdOverrides: %w", err)
	}
	return out, nil
}

// imageName is an image reference without its registry, tag and digest:
// "registry.k8s.io/coredns/coredns:v1.11" is "coredns/coredns".
func imageName(image string) string {
	parts := strings.Split(image, "/")
	if len(parts) > 1 && strings.ContainsAny(parts[0], ".:") {
		parts = parts[1:]
	}
	last := parts[len(parts)-1]
	if i := strings.IndexAny(last, "@:"); i >= 0 {
		last = last[:i]
	}
	parts[len(parts)-1] = last
	return strings.Join(parts, "/")
}
