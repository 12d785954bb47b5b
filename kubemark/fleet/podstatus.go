package fleet

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Pod status as a v1.37 kubelet generates it (generateAPIPodStatus and the
// status generators of its status package), for the states a hollow node's
// pod goes through: Pending without and with its sandbox, Running, and
// Succeeded once its containers stopped.

// The kubelet's reasons and messages.
const (
	reasonSandboxNotReady    = "PodSandboxNotReady"
	messageNoSandbox         = "no pod sandbox exists"
	messageSandboxNotReady   = "pod sandbox is not ready"
	reasonContainersNotReady = "ContainersNotReady"
	reasonPodCompleted       = "PodCompleted"
	reasonContainerCreating  = "ContainerCreating"
	reasonPodInitializing    = "PodInitializing"
)

// kubeletConditions are the pod conditions the kubelet owns: it writes them,
// and writes them back when someone else changed them.
var kubeletConditions = map[v1.PodConditionType]bool{
	v1.PodScheduled: true, v1.PodReady: true, v1.PodInitialized: true, v1.ContainersReady: true,
	v1.PodReadyToStartContainers: true, v1.PodResizeInProgress: true, v1.PodResizePending: true,
}

// podSpec is what status generation reads of a pod's spec: the full spec
// when the node has it (the kubelet profile reads the pod before each
// write), else the names and images the node keeps.
type podSpec struct {
	containers, initContainers []v1.Container
	overhead                   v1.ResourceList
}

// keptSpec is the spec as far as the node keeps it.
func (p *pod) keptSpec() podSpec {
	conv := func(cs []containerInfo) []v1.Container {
		out := make([]v1.Container, len(cs))
		for i, c := range cs {
			out[i] = v1.Container{Name: c.name, Image: c.image}
		}
		return out
	}
	return podSpec{containers: conv(p.containers), initContainers: conv(p.initContainers)}
}

func specOf(pod *v1.Pod) podSpec {
	return podSpec{containers: pod.Spec.Containers, initContainers: pod.Spec.InitContainers, overhead: pod.Spec.Overhead}
}

// generateStatus is the status the kubelet generates for the pod in state
// st. scheduled is the PodScheduled condition's transition time as the API
// has it (zero: now).
func (n *node) generateStatus(p *pod, st podState, spec podSpec, scheduled time.Time) v1.PodStatus {
	now := n.fleet.clock.Now()
	phase := v1.PodPending
	switch {
	case st.phase == podRunning:
		phase = v1.PodRunning
	case st.phase == podFinished || st.phase == podTerminating:
		phase = v1.PodSucceeded
	}
	ended := phase == v1.PodSucceeded
	sandbox := st.sandboxReady && !ended
	ready := phase == v1.PodRunning
	at := func(t time.Time) metav1.Time {
		if t.IsZero() {
			t = now
		}
		return metav1.NewTime(t)
	}
	cond := func(typ v1.PodConditionType, ok bool, since time.Time, reason, message string) v1.PodCondition {
		c := v1.PodCondition{Type: typ, Status: v1.ConditionFalse, ObservedGeneration: st.generation, LastTransitionTime: at(since), Reason: reason, Message: message}
		if ok {
			c.Status = v1.ConditionTrue
		}
		return c
	}

	sandboxCond := cond(v1.PodReadyToStartContainers, true, st.sandboxAt, "", "")
	switch {
	case ended:
		sandboxCond = cond(v1.PodReadyToStartContainers, false, st.finishedAt, reasonSandboxNotReady, messageSandboxNotReady)
	case !sandbox:
		sandboxCond = cond(v1.PodReadyToStartContainers, false, st.startTime, reasonSandboxNotReady, messageNoSandbox)
	}
	initialized := cond(v1.PodInitialized, true, st.startTime, "", "")
	readyCond := cond(v1.ContainersReady, true, st.runningSince, "", "")
	switch {
	case ended:
		initialized.Reason = reasonPodCompleted
		readyCond = cond(v1.ContainersReady, false, st.finishedAt, reasonPodCompleted, "")
	case !ready:
		readyCond = cond(v1.ContainersReady, false, st.startTime, reasonContainersNotReady, "containers with unready status: "+containerNames(spec.containers))
	}
	podReady := readyCond
	podReady.Type = v1.PodReady
	s := v1.PodStatus{
		Phase:              phase,
		ObservedGeneration: st.generation,
		Conditions: []v1.PodCondition{
			sandboxCond, initialized, podReady, readyCond,
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, ObservedGeneration: st.generation, LastTransitionTime: at(scheduled)},
		},
		HostIP:                n.ip.String(),
		HostIPs:               []v1.HostIP{{IP: n.ip.String()}},
		StartTime:             ptr.To(at(st.startTime)),
		InitContainerStatuses: n.initContainerStatuses(p, st, spec.initContainers),
		ContainerStatuses:     n.containerStatuses(p, st, spec, phase),
	}
	// The IP shows once the containers run, and stays: the kubelet reports
	// the sandbox up at once in a copy of its last status
	// (OnPodSandboxReady), and the IP with its next.
	if p.ip != 0 && phase != v1.PodPending {
		ip := uintToIP(p.ip).String()
		s.PodIP, s.PodIPs = ip, []v1.PodIP{{IP: ip}}
	}
	// Pod-level resources, as the kubelet reports them with in-place
	// vertical scaling of pod-level resources.
	requests, limits := podResources(spec)
	s.AllocatedResources = requests
	s.Resources = &v1.ResourceRequirements{Requests: requests, Limits: limits}
	return s
}

// containerNames formats names as the kubelet's messages do: [a b].
func containerNames(cs []v1.Container) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return fmt.Sprint(names)
}

func (n *node) containerStatuses(p *pod, st podState, spec podSpec, phase v1.PodPhase) []v1.ContainerStatus {
	waiting := reasonContainerCreating
	if len(spec.initContainers) > 0 {
		waiting = reasonPodInitializing
	}
	out := make([]v1.ContainerStatus, len(spec.containers))
	for i, c := range spec.containers {
		s := v1.ContainerStatus{Name: c.Name, Image: c.Image, Started: ptr.To(false), VolumeMounts: volumeMountStatuses(c.VolumeMounts)}
		if phase == v1.PodPending {
			s.State.Waiting = &v1.ContainerStateWaiting{Reason: waiting}
			out[i] = s
			continue
		}
		// The runtime knows the container: its ID, image and resources.
		s.ContainerID = containerID(p, c.Name)
		s.ImageID = c.Image
		s.AllocatedResources = c.Resources.Requests
		s.Resources = c.Resources.DeepCopy()
		if phase == v1.PodRunning {
			s.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(st.runningSince)}
			s.Ready, s.Started = true, ptr.To(true)
		} else {
			s.State.Terminated = &v1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", ContainerID: s.ContainerID,
				StartedAt: metav1.NewTime(st.runningSince), FinishedAt: metav1.NewTime(st.finishedAt),
			}
		}
		out[i] = s
	}
	return out
}

// initContainerStatuses shows every init container completed: a hollow
// node runs them in no time.
func (n *node) initContainerStatuses(p *pod, st podState, cs []v1.Container) []v1.ContainerStatus {
	out := make([]v1.ContainerStatus, len(cs))
	for i, c := range cs {
		id := containerID(p, c.Name)
		out[i] = v1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, ContainerID: id, Ready: true, Started: ptr.To(false),
			VolumeMounts: volumeMountStatuses(c.VolumeMounts), AllocatedResources: c.Resources.Requests, Resources: c.Resources.DeepCopy(),
			State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", ContainerID: id,
				StartedAt: metav1.NewTime(st.startTime), FinishedAt: metav1.NewTime(st.startTime),
			}},
		}
	}
	return out
}

// volumeMountStatuses are a container's mounts as its status reports them;
// a read-only mount is not recursively read-only unless it asks to be.
func volumeMountStatuses(mounts []v1.VolumeMount) []v1.VolumeMountStatus {
	if len(mounts) == 0 {
		return nil
	}
	out := make([]v1.VolumeMountStatus, len(mounts))
	for i, m := range mounts {
		out[i] = v1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
		if m.ReadOnly {
			mode := v1.RecursiveReadOnlyDisabled
			if m.RecursiveReadOnly != nil && *m.RecursiveReadOnly == v1.RecursiveReadOnlyEnabled {
				mode = v1.RecursiveReadOnlyEnabled
			}
			out[i].RecursiveReadOnly = &mode
		}
	}
	return out
}

// podResources are the pod's effective requests and limits: the sum over
// its containers, or its largest init container where that is larger,
// plus overhead.
func podResources(spec podSpec) (requests, limits v1.ResourceList) {
	sum := func(pick func(v1.ResourceRequirements) v1.ResourceList) v1.ResourceList {
		total := v1.ResourceList{}
		for _, c := range spec.containers {
			addResources(total, pick(c.Resources))
		}
		for _, c := range spec.initContainers {
			for name, q := range pick(c.Resources) {
				if have, ok := total[name]; !ok || q.Cmp(have) > 0 {
					total[name] = q.DeepCopy()
				}
			}
		}
		if len(total) == 0 {
			return nil
		}
		return total
	}
	requests = sum(func(r v1.ResourceRequirements) v1.ResourceList { return r.Requests })
	limits = sum(func(r v1.ResourceRequirements) v1.ResourceList { return r.Limits })
	if requests != nil {
		addResources(requests, spec.overhead)
	}
	if limits != nil {
		addResources(limits, spec.overhead)
	}
	return requests, limits
}

func addResources(total, add v1.ResourceList) {
	for name, q := range add {
		sum := total[name]
		if sum.IsZero() {
			sum = resource.Quantity{Format: q.Format}
		}
		sum.Add(q)
		total[name] = sum
	}
}

// mergeStatus is the status the kubelet's status manager writes: the
// generated status with the conditions the kubelet does not own, and what
// other components own, kept as the API has them.
func mergeStatus(api *v1.PodStatus, generated v1.PodStatus) v1.PodStatus {
	var conds []v1.PodCondition
	for _, c := range api.Conditions {
		if !kubeletConditions[c.Type] {
			conds = append(conds, c)
		}
	}
	generated.Conditions = append(conds, generated.Conditions...)
	generated.QOSClass = api.QOSClass
	generated.NominatedNodeName = api.NominatedNodeName
	generated.ResourceClaimStatuses = api.ResourceClaimStatuses
	generated.ExtendedResourceClaimStatus = api.ExtendedResourceClaimStatus
	if generated.Phase == api.Phase {
		generated.Reason, generated.Message = api.Reason, api.Message
	}
	return generated
}

// scheduledSince is the PodScheduled transition time the API has (zero
// when it has none).
func scheduledSince(s *v1.PodStatus) time.Time {
	for _, c := range s.Conditions {
		if c.Type == v1.PodScheduled {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// sameAsKubelet reports whether the API's status holds what the node would
// write, in the parts the kubelet compares before it writes a status back:
// its conditions (status, reason, message), the phase, the IPs and the
// containers' states.
func sameAsKubelet(api *v1.PodStatus, want *v1.PodStatus) bool {
	if api.Phase != want.Phase || api.PodIP != want.PodIP || len(api.ContainerStatuses) != len(want.ContainerStatuses) {
		return false
	}
	have := map[v1.PodConditionType]v1.PodCondition{}
	for _, c := range api.Conditions {
		if kubeletConditions[c.Type] {
			have[c.Type] = c
		}
	}
	for _, c := range want.Conditions {
		h, ok := have[c.Type]
		if !ok || h.Status != c.Status || h.Reason != c.Reason || h.Message != c.Message {
			return false
		}
		delete(have, c.Type)
	}
	if len(have) > 0 {
		return false
	}
	for i, c := range want.ContainerStatuses {
		a := api.ContainerStatuses[i]
		if a.Name != c.Name || a.Ready != c.Ready || (a.State.Running == nil) != (c.State.Running == nil) ||
			(a.State.Terminated == nil) != (c.State.Terminated == nil) || (a.State.Waiting == nil) != (c.State.Waiting == nil) {
			return false
		}
	}
	return true
}
