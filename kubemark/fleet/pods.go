package fleet

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// Pod annotations a test config can set to shape one pod's life.
const (
	// AnnotationStartDelay overrides --pod-start-delay for the pod (same syntax).
	AnnotationStartDelay = "kscale.io/start-delay"
	// AnnotationRunDuration makes a pod with restartPolicy Never or
	// OnFailure finish (Succeeded) after running this long.
	AnnotationRunDuration = "kscale.io/run-duration"
)

type podPhase int

const (
	podNew      podPhase = iota // seen, holds nothing yet
	podAdmitted                 // pending status sent, containers "creating"
	podRunning
	podTerminating // deletion seen; status and DELETE under way
	podFinished    // Succeeded or Failed: holds no resources
)

// pod is what a node remembers of a pod bound to it: just enough to write its
// status. Full Pod objects are not kept, so a pod costs hundreds of bytes.
type pod struct {
	uid            types.UID
	namespace      string
	name           string
	phase          podPhase
	containers     []containerInfo
	initContainers []containerInfo
	requests       usage
	ip             uint32 // 0 until assigned
	startTime      time.Time
	runningSince   time.Time
	runDuration    time.Duration // 0: runs until deleted
	serviceAccount string
	refs           []objectRef   // ConfigMaps and Secrets the pod uses
	tokens         []tokenSource // projected service-account tokens
	deleting       bool          // deletion seen and being carried out
	generation     int64         // metadata.generation last seen; the status reports it observed
	// sandboxReady: the pod's sandbox is "up" (PodReadyToStartContainers,
	// pod IP), which a kubelet reports in a status of its own before the
	// containers run. Guarded by n.mu.
	sandboxReady bool
	// rejectReason and rejectMessage: why admission failed the pod, which
	// then never held anything.
	rejectReason, rejectMessage string
	// written is the statusStep the API has (0: none yet). Guarded by
	// writes.
	written int
	// generationWritten: a deletion's new generation is reported observed;
	// terminatedWritten: the terminal status is written, only the DELETE
	// of the deletion is left. Guarded by writes.
	generationWritten, terminatedWritten bool
	// writes serialises the pod's API writes, so that its status patches
	// land in the order the kubelet would send them.
	writes sync.Mutex
}

type containerInfo struct{ name, image string }

// statusStep numbers the statuses a pod goes through, so that each is
// written once: its phase, and before Running whether the sandbox is up.
// Call with n.mu held.
func (p *pod) statusStep() int {
	step := 2*int(p.phase) + 1
	if p.sandboxReady {
		step++
	}
	return step
}

// usage is what admission counts against allocatable.
type usage struct {
	milliCPU int64
	memory   int64
	pods     int
}

// observePod handles one event of the node's pod watch.
func (n *node) observePod(typ watch.EventType, p *v1.Pod) {
	f := n.fleet
	n.mu.Lock()
	defer n.mu.Unlock()
	known := n.pods[p.UID]
	if typ == watch.Deleted {
		if known != nil {
			n.forget(known)
			f.metrics.podTransitions.WithLabelValues("Deleted").Inc()
		}
		return
	}
	if known == nil {
		known = n.track(p)
		if known == nil {
			return
		}
	}
	if p.DeletionTimestamp != nil && !known.deleting {
		known.deleting = true
		known.generation = p.Generation
		n.terminate(known)
	}
}

// track starts following a pod new to this node: adopts it when an earlier
// run of the fleet already started it, or admits (or rejects) it as the
// kubelet does. Call with n.mu held.
func (n *node) track(p *v1.Pod) *pod {
	f := n.fleet
	known := &pod{uid: p.UID, namespace: p.Namespace, name: p.Name, requests: podRequests(p), serviceAccount: p.Spec.ServiceAccountName, generation: p.Generation}
	known.refs, known.tokens = podReferences(p)
	for _, c := range p.Spec.Containers {
		known.containers = append(known.containers, containerInfo{c.Name, c.Image})
	}
	for _, c := range p.Spec.InitContainers {
		known.initContainers = append(known.initContainers, containerInfo{c.Name, c.Image})
	}
	if d, err := time.ParseDuration(p.Annotations[AnnotationRunDuration]); err == nil && d >= 0 && p.Spec.RestartPolicy != v1.RestartPolicyAlways {
		known.runDuration = d
	}
	n.pods[p.UID] = known

	switch {
	case p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed:
		known.phase = podFinished
		return known
	case p.Status.Phase == v1.PodRunning && p.Status.PodIP != "":
		// Started by an earlier run of this fleet: adopt it as it is.
		known.phase = podRunning
		known.sandboxReady = true
		known.ip = ipToUint(net.ParseIP(p.Status.PodIP))
		n.ipsInUse[known.ip] = true
		n.used.add(known.requests)
		if p.Status.StartTime != nil {
			known.startTime = p.Status.StartTime.Time
		}
		known.runningSince = known.startTime
		n.holdRefs(known.refs)
		f.metrics.adoptedPods.Inc()
		n.scheduleFinish(known)
		return known
	case p.DeletionTimestamp != nil:
		return known // terminate() follows
	}

	if reason, msg := n.admit(known.requests); reason != "" {
		known.phase = podFinished
		known.rejectReason, known.rejectMessage = reason, msg
		f.sched.Now(priorityPod, func(ctx context.Context) { n.reject(ctx, known) })
		return known
	}
	n.used.add(known.requests)
	n.holdRefs(known.refs)
	known.phase = podAdmitted
	known.startTime = time.Now()
	// A pod IP, once set, cannot change: keep one an earlier run assigned.
	if ip := ipToUint(net.ParseIP(p.Status.PodIP)); ip != 0 && !n.ipsInUse[ip] {
		known.ip = ip
		n.ipsInUse[ip] = true
	} else {
		known.ip = n.allocateIP()
	}
	delay := f.cfg.PodStartDelay
	if s, ok := p.Annotations[AnnotationStartDelay]; ok {
		if d, err := ParseDelay(s); err == nil {
			delay = d
		}
	}
	// The start delay is the time from admission to Running (the flag's
	// meaning): the Pending status, the volumes' tokens and the status with
	// the sandbox up are sent inside it, as a kubelet's status manager and
	// volume manager work while the runtime is still pulling and creating,
	// so slow calls show up in schedule_to_run only when they outlast it.
	startAt := f.sched.now().Add(f.draw(delay))
	f.sched.Now(priorityPod, func(ctx context.Context) {
		n.sendPending(ctx, known)
		n.requestTokens(ctx, known)
		n.mu.Lock()
		known.sandboxReady = true
		n.mu.Unlock()
		n.syncStatus(ctx, known, 0)
		f.sched.At(startAt, priorityPod, func(ctx context.Context) { n.start(ctx, known) })
	})
	return known
}

// admit applies the kubelet's resource admission: a pod that does not fit
// what is left of allocatable is rejected with OutOf<resource>.
func (n *node) admit(req usage) (reason, message string) {
	f := n.fleet
	alloc := f.allocatable
	if n.used.pods+1 > int(alloc.Pods().Value()) {
		return "OutOfpods", fmt.Sprintf("Node didn't have enough resource: pods, requested: 1, used: %d, capacity: %d", n.used.pods, alloc.Pods().Value())
	}
	if cpu := alloc.Cpu().MilliValue(); req.milliCPU > 0 && n.used.milliCPU+req.milliCPU > cpu {
		return "OutOfcpu", fmt.Sprintf("Node didn't have enough resource: cpu, requested: %d, used: %d, capacity: %d", req.milliCPU, n.used.milliCPU, cpu)
	}
	if mem := alloc.Memory().Value(); req.memory > 0 && n.used.memory+req.memory > mem {
		return "OutOfmemory", fmt.Sprintf("Node didn't have enough resource: memory, requested: %d, used: %d, capacity: %d", req.memory, n.used.memory, mem)
	}
	return "", ""
}

func (u *usage) add(o usage) {
	u.milliCPU += o.milliCPU
	u.memory += o.memory
	u.pods += o.pods
}

func (u *usage) sub(o usage) {
	u.milliCPU -= o.milliCPU
	u.memory -= o.memory
	u.pods -= o.pods
}

// podRequests is the pod's effective request as the scheduler and kubelet
// compute it: the larger of the sum of its containers and its largest init
// container, plus overhead.
func podRequests(p *v1.Pod) usage {
	var sum, initMax usage
	for _, c := range p.Spec.Containers {
		sum.milliCPU += c.Resources.Requests.Cpu().MilliValue()
		sum.memory += c.Resources.Requests.Memory().Value()
	}
	for _, c := range p.Spec.InitContainers {
		initMax.milliCPU = max(initMax.milliCPU, c.Resources.Requests.Cpu().MilliValue())
		initMax.memory = max(initMax.memory, c.Resources.Requests.Memory().Value())
	}
	u := usage{milliCPU: max(sum.milliCPU, initMax.milliCPU), memory: max(sum.memory, initMax.memory), pods: 1}
	u.milliCPU += p.Spec.Overhead.Cpu().MilliValue()
	u.memory += p.Spec.Overhead.Memory().Value()
	return u
}

// forget drops a deleted pod and frees what it held. Call with n.mu held.
func (n *node) forget(p *pod) {
	if p.phase == podAdmitted || p.phase == podRunning {
		n.used.sub(p.requests)
	}
	if p.phase != podNew && p.rejectReason == "" {
		n.releaseRefs(p.refs)
	}
	delete(n.ipsInUse, p.ip)
	delete(n.pods, p.uid)
}

// allocateIP returns a free address of the node's podCIDR (or of its
// fallback /24). Call with n.mu held.
func (n *node) allocateIP() uint32 {
	base, size := n.podRange()
	for off := uint32(2); off < size-1; off++ { // skip network, gateway and broadcast
		ip := base + off
		if !n.ipsInUse[ip] {
			n.ipsInUse[ip] = true
			return ip
		}
	}
	return 0 // more pods than addresses: leave the IP empty as a kubelet would fail to
}

func (n *node) podRange() (base, size uint32) {
	if n.podCIDR != nil {
		ones, bits := n.podCIDR.Mask.Size()
		return ipToUint(n.podCIDR.IP), 1 << (bits - ones)
	}
	return ipToUint(n.fleet.fallbackPodBase) + uint32(n.fleet.fallbackIndex(n.index))<<8, 256
}

// sendPending writes the status a kubelet writes when it starts syncing a
// pod: Pending, containers creating, host IP and start time set.
func (n *node) sendPending(ctx context.Context, p *pod) {
	n.syncStatus(ctx, p, 0)
}

// start moves an admitted pod to Running, records the kubelet's container
// events and schedules its end when it has a run duration.
func (n *node) start(ctx context.Context, p *pod) {
	f := n.fleet
	n.mu.Lock()
	if p.phase != podAdmitted {
		n.mu.Unlock()
		return
	}
	p.phase = podRunning
	p.runningSince = time.Now()
	n.scheduleFinish(p)
	n.notePulled(p)
	n.mu.Unlock()
	f.metrics.podTransitions.WithLabelValues("Running").Inc()
	if f.events != nil {
		ref := podRef(p)
		for _, c := range append(append([]containerInfo(nil), p.initContainers...), p.containers...) {
			f.events.record(n, ref, v1.EventTypeNormal, "Pulled", fmt.Sprintf("Container image %q already present on machine", c.image))
			f.events.record(n, ref, v1.EventTypeNormal, "Created", "Created container: "+c.name)
			f.events.record(n, ref, v1.EventTypeNormal, "Started", "Started container "+c.name)
		}
	}
	n.syncStatus(ctx, p, 0)
}

// scheduleFinish arranges for a pod with a run duration to succeed. Call
// with n.mu held.
func (n *node) scheduleFinish(p *pod) {
	if p.runDuration <= 0 {
		return
	}
	at := p.runningSince.Add(p.runDuration)
	n.fleet.sched.At(at, priorityPod, func(ctx context.Context) { n.finish(ctx, p) })
}

// finish ends a pod's containers with exit code 0: the pod Succeeded.
func (n *node) finish(ctx context.Context, p *pod) {
	n.mu.Lock()
	if p.phase != podRunning {
		n.mu.Unlock()
		return
	}
	p.phase = podFinished
	n.used.sub(p.requests)
	n.mu.Unlock()
	n.fleet.metrics.podTransitions.WithLabelValues("Succeeded").Inc()
	n.syncStatus(ctx, p, 0)
}

// reject writes the kubelet's admission failure.
func (n *node) reject(ctx context.Context, p *pod) {
	f := n.fleet
	f.metrics.podTransitions.WithLabelValues("Failed").Inc()
	if f.events != nil {
		f.events.record(n, podRef(p), v1.EventTypeWarning, p.rejectReason, p.rejectMessage)
	}
	n.syncStatus(ctx, p, 0)
}

// statusFor returns the status the pod's phase calls for, or nil when there
// is nothing (more) to write. Call with n.mu held.
func (n *node) statusFor(p *pod) map[string]any {
	switch {
	case p.deleting || p.phase == podNew || p.phase == podTerminating:
		return nil // a deletion writes its own status
	case p.rejectReason != "":
		return map[string]any{
			"phase":   v1.PodFailed,
			"reason":  p.rejectReason,
			"message": "Pod was rejected: " + p.rejectMessage,
		}
	case p.phase == podAdmitted:
		return n.podStatus(p, v1.PodPending)
	case p.phase == podRunning:
		return n.podStatus(p, v1.PodRunning)
	default:
		return n.podStatus(p, v1.PodSucceeded)
	}
}

// syncStatus writes the status of the pod's current phase unless the API has
// it already. A write that fails for a passing reason is tried again after a
// backoff with whatever status is current by then, as the kubelet's status
// manager keeps syncing until the API agrees with it. Forbidden counts as
// passing: the Node authorizer learns of a newly bound pod asynchronously,
// so the node's first GET of it can be refused.
func (n *node) syncStatus(ctx context.Context, p *pod, attempt int) {
	f := n.fleet
	p.writes.Lock()
	defer p.writes.Unlock()
	n.mu.Lock()
	step := p.statusStep()
	var status map[string]any
	if p.written != step {
		status = n.statusFor(p)
	}
	n.mu.Unlock()
	if status == nil {
		return
	}
	err := n.writePodStatus(ctx, p, status)
	switch {
	case err == nil:
		p.written = step
	case ctx.Err() == nil && (retriable(err) || apierrors.IsForbidden(err)):
		f.sched.After(f.backoff(attempt+1), priorityPod, func(ctx context.Context) { n.syncStatus(ctx, p, attempt+1) })
	}
}

// terminate handles a pod being deleted: the kubelet stops its containers,
// reports them terminated, and removes the pod with grace period 0 and a UID
// precondition. Call with n.mu held.
func (n *node) terminate(p *pod) {
	n.fleet.sched.Now(priorityPod, func(ctx context.Context) { n.carryOutDeletion(ctx, p, 0) })
}

// carryOutDeletion does the API writes of a deletion; a step that fails for a
// passing reason is tried again after a backoff, as the kubelet's status
// manager retries.
func (n *node) carryOutDeletion(ctx context.Context, p *pod, attempt int) {
	f := n.fleet
	retry := func(err error) bool {
		if err == nil || !retriable(err) || ctx.Err() != nil {
			return false
		}
		f.sched.After(f.backoff(attempt+1), priorityPod, func(ctx context.Context) { n.carryOutDeletion(ctx, p, attempt+1) })
		return true
	}
	p.writes.Lock()
	defer p.writes.Unlock()
	// As a kubelet: the status reports the deletion's new generation
	// observed, the containers are killed, the terminal status follows
	// (Succeeded: the containers exit 0), and the DELETE goes out on the
	// strength of the GET that preceded that last status write.
	n.mu.Lock()
	var observed, terminal map[string]any
	stopping := p.phase == podRunning || p.phase == podAdmitted
	if stopping && !p.generationWritten {
		current := v1.PodPending
		if p.phase == podRunning {
			current = v1.PodRunning
		}
		observed = n.podStatus(p, current)
	}
	if stopping {
		n.used.sub(p.requests)
		p.phase = podTerminating
	}
	if p.phase == podTerminating && !p.terminatedWritten {
		terminal = n.podStatus(p, v1.PodSucceeded)
	}
	n.mu.Unlock()
	if observed != nil {
		// Best effort: a failure leaves the terminal status to say it.
		_ = n.writePodStatus(ctx, p, observed)
		p.generationWritten = true
	}
	if stopping && f.events != nil {
		for _, c := range p.containers {
			f.events.record(n, podRef(p), v1.EventTypeNormal, "Killing", "Stopping container "+c.name)
		}
	}
	if terminal != nil {
		if err := n.writePodStatus(ctx, p, terminal); retry(err) {
			return
		}
		p.terminatedWritten = true
	} else if err := n.getPod(ctx, p); err != nil {
		if !apierrors.IsNotFound(err) {
			f.metrics.apiError(err)
			retry(err)
		}
		return
	}
	err := n.client.Delete().AbsPath("/api/v1/namespaces", p.namespace, "pods", p.name).
		Body(&metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &p.uid}}).
		Do(ctx).Error()
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		f.metrics.apiError(err)
		retry(err)
	}
}

// podStatus builds the status of a pod in the given phase: Pending before
// its sandbox is up and after, Running, or Succeeded (containers terminated,
// sandbox gone). Call with n.mu held.
func (n *node) podStatus(p *pod, phase v1.PodPhase) map[string]any {
	now := metav1.NewTime(time.Now())
	start := metav1.NewTime(p.startTime)
	ready, sandbox := v1.ConditionFalse, v1.ConditionFalse
	if phase == v1.PodRunning {
		ready = v1.ConditionTrue
	}
	hasSandbox := phase == v1.PodRunning || phase == v1.PodPending && p.sandboxReady
	if hasSandbox {
		sandbox = v1.ConditionTrue
	}
	notReady, initialized := "ContainersNotReady", ""
	if phase == v1.PodSucceeded {
		notReady, initialized = "PodCompleted", "PodCompleted"
	}
	cond := func(typ v1.PodConditionType, s v1.ConditionStatus, reason string) v1.PodCondition {
		c := v1.PodCondition{Type: typ, Status: s, LastTransitionTime: now, ObservedGeneration: p.generation}
		if s == v1.ConditionFalse || typ == v1.PodInitialized {
			c.Reason = reason
		}
		return c
	}
	conditions := []v1.PodCondition{
		cond(v1.PodReadyToStartContainers, sandbox, "PodSandboxNotReady"),
		cond(v1.PodInitialized, v1.ConditionTrue, initialized),
		cond(v1.ContainersReady, ready, notReady),
		cond(v1.PodReady, ready, notReady),
	}
	status := map[string]any{
		"phase":                 phase,
		"conditions":            conditions,
		"hostIP":                n.ip.String(),
		"hostIPs":               []v1.HostIP{{IP: n.ip.String()}},
		"startTime":             start,
		"containerStatuses":     n.containerStatuses(p, p.containers, phase),
		"initContainerStatuses": n.initContainerStatuses(p),
	}
	if p.generation > 0 {
		status["observedGeneration"] = p.generation
	}
	// The IP comes with the pod sandbox: not in the first, pending status.
	if p.ip != 0 && hasSandbox {
		ip := uintToIP(p.ip).String()
		status["podIP"] = ip
		status["podIPs"] = []v1.PodIP{{IP: ip}}
	}
	return status
}

func (n *node) containerStatuses(p *pod, cs []containerInfo, phase v1.PodPhase) []v1.ContainerStatus {
	out := make([]v1.ContainerStatus, len(cs))
	for i, c := range cs {
		s := v1.ContainerStatus{Name: c.name, Image: c.image, ImageID: c.image}
		switch phase {
		case v1.PodPending:
			s.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
			s.Started = ptr.To(false)
		case v1.PodRunning:
			s.ContainerID = containerID(p, c.name)
			s.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(p.runningSince)}
			s.Ready, s.Started = true, ptr.To(true)
		default: // Succeeded, or terminating
			s.ContainerID = containerID(p, c.name)
			s.State.Terminated = &v1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", ContainerID: s.ContainerID,
				StartedAt: metav1.NewTime(p.runningSince), FinishedAt: metav1.Now(),
			}
			s.Started = ptr.To(false)
		}
		out[i] = s
	}
	return out
}

// initContainerStatuses shows every init container completed.
func (n *node) initContainerStatuses(p *pod) []v1.ContainerStatus {
	out := make([]v1.ContainerStatus, len(p.initContainers))
	for i, c := range p.initContainers {
		id := containerID(p, c.name)
		out[i] = v1.ContainerStatus{
			Name: c.name, Image: c.image, ImageID: c.image, ContainerID: id, Ready: true, Started: ptr.To(false),
			State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", ContainerID: id,
				StartedAt: metav1.NewTime(p.startTime), FinishedAt: metav1.NewTime(p.startTime),
			}},
		}
	}
	return out
}

func containerID(p *pod, container string) string {
	return "fake://" + string(p.uid) + "/" + container
}

// writePodStatus sends a strategic-merge patch of the pod's status with the
// pod's UID as precondition, as the kubelet's status manager does.
func (n *node) writePodStatus(ctx context.Context, p *pod, status map[string]any) error {
	patch, err := statusPatch(status, p.uid)
	if err != nil {
		return err
	}
	if err := n.getPod(ctx, p); err != nil {
		return err
	}
	err = n.client.Patch(types.StrategicMergePatchType).AbsPath("/api/v1/namespaces", p.namespace, "pods", p.name, "status").Body(patch).Do(ctx).Error()
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
		n.fleet.metrics.apiError(err)
		klog.V(2).InfoS("Pod status patch failed", "pod", klog.KRef(p.namespace, p.name), "node", n.name, "err", err)
	}
	return err
}

// retriable reports errors worth another try: the server was busy or
// unreachable, not the request wrong or the object gone.
func retriable(err error) bool {
	return !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && !apierrors.IsInvalid(err) &&
		!apierrors.IsBadRequest(err) && !apierrors.IsForbidden(err)
}

func podRef(p *pod) *v1.ObjectReference {
	return &v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.namespace, Name: p.name, UID: p.uid}
}

func ipToUint(ip net.IP) uint32 {
	v4 := ip.To4()
	if v4 == nil {
		return 0
	}
	return binary.BigEndian.Uint32(v4)
}

func uintToIP(v uint32) net.IP {
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, v)
	return ip
}
