package kubemark

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// checkRoot prints what the hollow-node pods ask of the root cluster and
// what its schedulable nodes have left, and refuses a plan they cannot
// hold: by CPU, memory and pod count, after the requests of the pods
// already there.
func (p *Provider) checkRoot(ctx context.Context) error {
	needs := NeedsOf(p.po.Hollow, p.po.Nodes, p.po.NodesPerFleet)
	nodes, err := p.root.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(p.m.Data.NodeSelector).String()})
	if err != nil {
		return fmt.Errorf("root cluster: listing nodes: %w", err)
	}
	pods, err := p.root.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"})
	if err != nil {
		return fmt.Errorf("root cluster: listing pods: %w", err)
	}
	used := map[string]*free{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Spec.NodeName == "" || pod.Namespace == p.m.Data.Namespace {
			continue
		}
		u := used[pod.Spec.NodeName]
		if u == nil {
			u = &free{}
			used[pod.Spec.NodeName] = u
		}
		u.pods++
		for _, c := range pod.Spec.Containers {
			u.cpu.Add(c.Resources.Requests[v1.ResourceCPU])
			u.mem.Add(c.Resources.Requests[v1.ResourceMemory])
		}
	}
	var total free
	usable := 0
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if n.Spec.Unschedulable || !p.tolerates(n.Spec.Taints) || n.Labels[HollowLabel] != "" {
			continue
		}
		usable++
		f := free{cpu: n.Status.Allocatable[v1.ResourceCPU], mem: n.Status.Allocatable[v1.ResourceMemory], pods: int(n.Status.Allocatable.Pods().Value())}
		if u := used[n.Name]; u != nil {
			f.cpu.Sub(u.cpu)
			f.mem.Sub(u.mem)
			f.pods -= u.pods
		}
		total.cpu.Add(f.cpu)
		total.mem.Add(f.mem)
		total.pods += max(f.pods, 0)
	}
	p.progressf("kubemark: plan: %d %s pods of %d nodes each, requesting %s CPU and %s memory; the root's %d schedulable nodes have %s CPU, %s memory and %d pods left",
		needs.Pods, needs.Hollow, needs.NodesPerPod, needs.CPU.String(), needs.Memory.String(), usable, total.cpu.String(), total.mem.String(), total.pods)
	var short []string
	if needs.CPU.Cmp(total.cpu) > 0 {
		short = append(short, fmt.Sprintf("CPU: %s requested, %s left", needs.CPU.String(), total.cpu.String()))
	}
	if needs.Memory.Cmp(total.mem) > 0 {
		short = append(short, fmt.Sprintf("memory: %s requested, %s left", needs.Memory.String(), total.mem.String()))
	}
	if needs.Pods > total.pods {
		short = append(short, fmt.Sprintf("pods: %d, room for %d (the nodes' maxPods)", needs.Pods, total.pods))
	}
	if len(short) > 0 {
		return fmt.Errorf("the root cluster cannot hold the hollow-node pods (%s and %s choose its nodes): %s",
			FlagNodeSelector, FlagToleration, strings.Join(short, "; "))
	}
	return nil
}

type free struct {
	cpu, mem resource.Quantity
	pods     int
}

// tolerates reports whether the hollow-node pods tolerate every NoSchedule
// and NoExecute taint.
func (p *Provider) tolerates(taints []v1.Taint) bool {
	for i := range taints {
		t := &taints[i]
		if t.Effect == v1.TaintEffectPreferNoSchedule {
			continue
		}
		ok := false
		for j := range p.m.Data.Tolerations {
			ok = ok || p.m.Data.Tolerations[j].ToleratesTaint(klog.Background(), t, false)
		}
		if !ok {
			return false
		}
	}
	return true
}

// fatalReasons are container states no wait mends.
var fatalReasons = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "ErrImageNeverPull": true, "InvalidImageName": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "CrashLoopBackOff": true, "RunContainerError": true,
}

// unschedulableFor is how long a pod may stay unschedulable before the
// step fails: the scheduler retries, a cluster autoscaler may add a node.
const unschedulableFor = 45 * time.Second

// watchPods fails a scale step as soon as a hollow-node pod cannot run:
// its image cannot be pulled, its container crashes again and again or
// cannot be created (a missing Secret), or the root cannot schedule it.
// The error names the pod, the reason and the last lines of its log.
func (p *Provider) watchPods(ctx context.Context) error {
	dep, err := p.m.Deployment()
	if err != nil {
		return err
	}
	sel := labels.SelectorFromSet(dep.Spec.Selector.MatchLabels).String()
	var found error
	_ = wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := p.root.CoreV1().Pods(p.m.Data.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, nil
		}
		for i := range pods.Items {
			if why := p.podFailure(ctx, &pods.Items[i]); why != "" {
				found = errors.New(why)
				return true, nil
			}
		}
		return false, nil
	})
	return found
}

func (p *Provider) podFailure(ctx context.Context, pod *v1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable &&
			time.Since(c.LastTransitionTime.Time) > unschedulableFor {
			return fmt.Sprintf("hollow-node pod %s cannot be scheduled in the root cluster for %s: %s", pod.Name, unschedulableFor, c.Message)
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		w := cs.State.Waiting
		if w != nil && w.Reason == "ContainerCreating" && time.Since(pod.CreationTimestamp.Time) > mountFor {
			if why := p.mountFailure(ctx, pod); why != "" {
				return why
			}
		}
		if w == nil || !fatalReasons[w.Reason] {
			continue
		}
		why := fmt.Sprintf("hollow-node pod %s container %s: %s: %s", pod.Name, cs.Name, w.Reason, w.Message)
		if t := cs.LastTerminationState.Terminated; t != nil {
			why += fmt.Sprintf(" (last exit code %d, %s)", t.ExitCode, t.Reason)
			why += p.lastLogLines(ctx, pod, cs.Name)
		}
		return why
	}
	return ""
}

// mountFor is how long a pod may wait for its volumes before their
// events are read: the kubelet retries a mount for minutes.
const mountFor = 30 * time.Second

// mountFailure is the root kubelet's last word on a volume it cannot mount
// for the pod (a Secret missing or not readable), or "".
func (p *Provider) mountFailure(ctx context.Context, pod *v1.Pod) string {
	events, err := p.root.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod.Name + ",reason=FailedMount"})
	if err != nil || len(events.Items) == 0 {
		return ""
	}
	last := events.Items[len(events.Items)-1]
	return fmt.Sprintf("hollow-node pod %s cannot start: FailedMount: %s", pod.Name, last.Message)
}

// lastLogLines are the last lines a crashed container wrote, as the root
// cluster's kubelet serves them.
func (p *Provider) lastLogLines(ctx context.Context, pod *v1.Pod, container string) string {
	lines := int64(8)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := p.root.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &v1.PodLogOptions{Container: container, Previous: true, TailLines: &lines}).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("; its log could not be read: %v", err)
	}
	return "; its last lines:\n    " + strings.ReplaceAll(strings.TrimRight(string(out), "\n"), "\n", "\n    ")
}
