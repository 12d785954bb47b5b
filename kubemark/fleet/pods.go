package fleet

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
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
	containers     []containerInfo
	initContainers []containerInfo
	requests       usage
	ip             uint32        // 0 until assigned
	runDuration    time.Duration // 0: runs until deleted
	serviceAccount string
	refs           []objectRef   // ConfigMaps and Secrets the pod uses
	volumes        []podVolume   // its volumes that read some of them
	tokens         []tokenSource // projected service-account tokens
	deleting       bool          // deletion seen and being carried out
	// podState is the pod's state now; status is its state when its
	// status last changed (setStatusLocked), which the node's status sync
	// writes. Guarded by n.mu.
	podState
	status podState
	// hasVolumes: the pod has volumes, which the kubelet waits for before
	// it starts the pod and after it stopped it. refsHeld: the node holds
	// the pod's references (guarded by n.mu).
	hasVolumes, refsHeld bool
	// rejectReason and rejectMessage: why admission failed the pod, which
	// then never held anything.
	rejectReason, rejectMessage string
	// version counts the pod's status changes; written is the version the
	// API has (0: none yet); apiDiffers: the API's status, as last
	// watched, differs from what the node holds (someone else changed it).
	// Guarded by n.mu.
	version, written int
	apiDiffers       bool
	// terminal: a deleted pod's containers are gone and its status is
	// final; once it is written the pod is deleted. Guarded by n.mu.
	terminal bool
}

// podState is what a pod's status is made of.
type podState struct {
	phase podPhase
	// sandboxReady: the pod's sandbox is up, which a kubelet reports in a
	// status of its own before the containers run.
	sandboxReady bool
	// generation is the metadata.generation last seen; the status reports
	// it observed.
	generation int64
	// startTime: its first sync began; sandboxAt: its sandbox up;
	// runningSince: its containers started; finishedAt: they stopped.
	startTime, sandboxAt, runningSince, finishedAt time.Time
}

type containerInfo struct {
	name, image string
	pull        v1.PullPolicy
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
	} else if p.DeletionTimestamp == nil {
		n.observeAPIStatus(known, p)
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
	known := &pod{uid: p.UID, namespace: p.Namespace, name: p.Name, requests: podRequests(p), serviceAccount: p.Spec.ServiceAccountName,
		podState: podState{generation: p.Generation}, hasVolumes: len(p.Spec.Volumes) > 0}
	known.refs, known.volumes, known.tokens = podReferences(p)
	for _, c := range p.Spec.Containers {
		known.containers = append(known.containers, containerInfo{c.Name, c.Image, c.ImagePullPolicy})
	}
	for _, c := range p.Spec.InitContainers {
		known.initContainers = append(known.initContainers, containerInfo{c.Name, c.Image, c.ImagePullPolicy})
	}
	if p.Spec.RestartPolicy != v1.RestartPolicyAlways {
		known.runDuration = f.runDuration(p)
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
		known.sandboxAt, known.runningSince = known.startTime, known.startTime
		for _, c := range p.Status.Conditions {
			switch c.Type {
			case v1.PodReadyToStartContainers:
				known.sandboxAt = c.LastTransitionTime.Time
			case v1.ContainersReady:
				known.runningSince = c.LastTransitionTime.Time
			}
		}
		// The API has its status: the node holds it as written.
		known.status, known.version, known.written = known.podState, 1, 1
		n.holdRefs(known.refs)
		known.refsHeld = true
		f.metrics.adoptedPods.Inc()
		n.scheduleFinish(known)
		return known
	case p.DeletionTimestamp != nil:
		return known // terminate() follows
	}

	if reason, msg := n.admit(known.requests); reason != "" {
		known.phase = podFinished
		known.rejectReason, known.rejectMessage = reason, msg
		n.reject(known)
		return known
	}
	n.used.add(known.requests)
	known.phase = podAdmitted
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
	// meaning): the Pending status, the volumes (their ConfigMaps and
	// Secrets watched, their tokens requested) and the status with the
	// sandbox up are done inside it, as a kubelet's status manager and
	// volume manager work while the runtime is still pulling and creating,
	// so slow calls show up in schedule_to_run only when they outlast it.
	startAt := f.clock.Now().Add(f.draw(delay))
	f.sched.At(n.admitted(), priorityPod, func(ctx context.Context) {
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.pods[known.uid] == known && known.phase == podAdmitted && !known.deleting {
			n.firstSync(known, startAt)
		}
	})
	return known
}

// admitted is when the pod the node's kubelet admits now begins its first
// sync: the kubelet admits the pods it is sent one after another, each
// with its resources written to the allocation checkpoint and synced to
// disk, so a pod's first reads wait for the admissions before it and its
// own. Call with n.mu held.
func (n *node) admitted() time.Time {
	n.admitting = laterOf(n.fleet.clock.Now(), n.admitting).Add(jitter(admission, 1))
	return n.admitting
}

// admission, up to twice as long, is how long the kubelet takes from a
// pod's arrival to its first reads: its admit handlers, the allocation
// checkpoint written and synced to disk, then the hand-off to the pod
// worker and the status manager.
const admission = 2 * time.Millisecond

// firstSync is the beginning of an admitted pod's first sync: its Pending
// status, its ConfigMaps and Secrets, and the volume manager's and the
// runtime's work up to the start at startAt. Call with n.mu held.
func (n *node) firstSync(known *pod, startAt time.Time) {
	f := n.fleet
	// The kubelet registers a pod with its ConfigMap and Secret managers when
	// its first sync begins, before it waits for the volumes: their watches
	// open while the volume manager is still on its way to the mount.
	n.holdRefs(known.refs)
	known.refsHeld = true
	known.startTime = f.clock.Now()
	n.setStatusLocked(known)
	began := f.clock.Now()
	sandbox := func(context.Context) {
		n.mu.Lock()
		if known.phase == podAdmitted && !known.deleting {
			known.sandboxReady = true
			known.sandboxAt = n.fleet.clock.Now()
			n.setStatusLocked(known)
		}
		n.mu.Unlock()
		f.sched.At(laterOf(startAt, n.fleet.clock.Now().Add(runtimeCalls)), priorityPod, func(ctx context.Context) { n.start(ctx, known) })
	}
	if !known.hasVolumes {
		f.sched.Now(priorityPod, sandbox)
		return
	}
	f.sched.At(n.volumeManagerMounts(began), priorityPod, func(ctx context.Context) {
		n.mount(ctx, known, 0, func(ctx context.Context) {
			// The pod worker's volume polls: the sandbox starts at the
			// first that finds the volumes mounted.
			f.sched.At(n.volumesWaited(began), priorityPod, sandbox)
		})
	})
}

// runDuration is how long a pod that may end runs: its run-duration
// annotation, else --job-pod-run-duration for a pod a Job owns, else 0
// (until deleted).
func (f *Fleet) runDuration(p *v1.Pod) time.Duration {
	if s, ok := p.Annotations[AnnotationRunDuration]; ok {
		if d, err := time.ParseDuration(s); err == nil && d >= 0 {
			return d
		}
	}
	if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "Job" && strings.HasPrefix(ref.APIVersion, "batch/") {
		return f.cfg.JobPodRunDuration
	}
	return 0
}

// runtimeCalls is the time a kubelet's container runtime calls take between
// two of its statuses: creating and starting the containers once the
// sandbox is up, killing them once a deletion is seen (CRI calls over
// gRPC, a hollow kubelet's fake runtime included). A pod's statuses go out
// that far apart, so that, as a kubelet's, they are written one by one
// unless the node's writes fall behind.
const runtimeCalls = 10 * time.Millisecond

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// volumePollInterval is how often the kubelet's pod worker checks that a
// pod's volumes are mounted (before it starts the pod) or unmounted (after
// it stopped it), the first time at once.
const volumePollInterval = 300 * time.Millisecond

// volumeLoopPeriod is the period of the kubelet volume manager's two loops:
// the populator, which adds a new pod's volumes to the desired state, and
// the reconciler, which mounts and unmounts them.
const volumeLoopPeriod = 100 * time.Millisecond

// volumeManagerMounts is when the volume manager of a kubelet given a pod at
// t starts mounting its volumes: the populator's first loop after t adds
// them to the desired state, the reconciler's next loop verifies they are
// attached (an operation of its own even for volumes nothing attaches), and
// its loop after that mounts them. Each node runs its loops on a phase of
// its own.
func (n *node) volumeManagerMounts(t time.Time) time.Time {
	populated := nextTick(t, volumeLoopPeriod, n.phase("volume-populator", volumeLoopPeriod))
	reconciler := n.phase("volume-reconciler", volumeLoopPeriod)
	attached := nextTick(populated, volumeLoopPeriod, reconciler)
	return nextTick(attached, volumeLoopPeriod, reconciler)
}

// volumesWaited is when the pod worker of a kubelet that began waiting for
// a pod's volumes at began sees them ready: at its first check after the
// volume manager is done (now), which is never the check at once.
func (n *node) volumesWaited(began time.Time) time.Time {
	polls := max(1, int((n.fleet.clock.Since(began)+volumePollInterval-1)/volumePollInterval))
	return began.Add(time.Duration(polls) * volumePollInterval)
}

// mount is one try of the kubelet's volume manager at the pod's volumes.
// The first asks for their service-account tokens (the kubelet's token
// manager keeps them for the tries after). Each waits, as the kubelet's
// ConfigMap and Secret managers do, up to objectCacheWait for the watches
// of the objects the volumes read (opened when the pod's first sync
// began). In time, the volumes are mounted and mounted runs; late, each
// volume still waiting fails with a FailedMount event, and the reconciler
// tries again after its exponential backoff.
func (n *node) mount(ctx context.Context, p *pod, failures int, mounted task) {
	f := n.fleet
	if failures == 0 {
		n.mu.Lock()
		gone := p.phase != podAdmitted || p.deleting
		n.mu.Unlock()
		if gone {
			return
		}
		n.requestTokens(ctx, p)
	}
	deadline := f.clock.Now().Add(objectCacheWait)
	var check task
	check = func(ctx context.Context) {
		waiting, gone := n.volumesWaiting(p)
		switch {
		case gone:
		case len(waiting) == 0:
			mounted(ctx)
		case f.clock.Now().Before(deadline):
			f.sched.After(objectCachePoll, priorityPod, check)
		default:
			if f.events != nil {
				for _, v := range waiting {
					f.events.record(n, podRef(p), v1.EventTypeWarning, "FailedMount", fmt.Sprintf(
						"MountVolume.SetUp failed for volume %q : failed to sync %s cache: timed out waiting for the condition", v.name, v.unsynced))
				}
			}
			retry := nextTick(f.clock.Now().Add(mountBackoff(failures+1)), volumeLoopPeriod, n.phase("volume-reconciler", volumeLoopPeriod))
			f.sched.At(retry, priorityPod, func(ctx context.Context) { n.mount(ctx, p, failures+1, mounted) })
		}
	}
	check(ctx)
}

// The kubelet's ConfigMap and Secret managers answer a volume's read once
// their watch has the object, checking every objectCachePoll for up to
// objectCacheWait; then the mount fails.
const (
	objectCachePoll = 10 * time.Millisecond
	objectCacheWait = time.Second
)

// mountBackoff is how long the volume manager waits before it tries a
// volume again after failures failed mounts.
func mountBackoff(failures int) time.Duration {
	const first, most = 500 * time.Millisecond, 2*time.Minute + 2*time.Second
	if failures > 9 {
		return most
	}
	return min(first<<max(failures-1, 0), most)
}

// waitingVolume is a volume whose mount waits for a watch: unsynced names
// the cache, as the kubelet's error does ("configmap" or "secret").
type waitingVolume struct {
	name, unsynced string
}

// volumesWaiting lists the pod's volumes that read an object whose watch
// does not have it yet; gone reports the pod is no longer to be started.
func (n *node) volumesWaiting(p *pod) (waiting []waitingVolume, gone bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if p.phase != podAdmitted || p.deleting {
		return nil, true
	}
	for _, v := range p.volumes {
		for _, r := range v.refs {
			if w, ok := n.refWatches[r]; ok && !isClosed(w.synced) {
				waiting = append(waiting, waitingVolume{v.name, strings.TrimSuffix(r.resource, "s")})
				break
			}
		}
	}
	return waiting, false
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
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
	if p.refsHeld {
		n.releaseRefs(p.refs)
	}
	delete(n.ipsInUse, p.ip)
	delete(n.pods, p.uid)
	delete(n.unsynced, p.uid)
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

// start moves an admitted pod to Running, records the kubelet's container
// events and schedules its end when it has a run duration.
func (n *node) start(_ context.Context, p *pod) {
	f := n.fleet
	n.mu.Lock()
	defer n.mu.Unlock()
	if p.phase != podAdmitted || p.deleting {
		return
	}
	p.phase = podRunning
	p.runningSince = n.fleet.clock.Now()
	n.scheduleFinish(p)
	pulled := n.notePulled(p)
	f.metrics.podTransitions.WithLabelValues("Running").Inc()
	if f.events != nil {
		ref := podRef(p)
		for _, c := range append(append([]containerInfo(nil), p.initContainers...), p.containers...) {
			n.recordPull(ref, c, pulled[c.image])
			f.events.record(n, ref, v1.EventTypeNormal, "Created", "Created container: "+c.name)
			f.events.record(n, ref, v1.EventTypeNormal, "Started", "Started container "+c.name)
		}
	}
	n.setStatusLocked(p)
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
func (n *node) finish(_ context.Context, p *pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if p.phase != podRunning || p.deleting {
		return
	}
	p.phase = podFinished
	p.finishedAt = n.fleet.clock.Now()
	n.used.sub(p.requests)
	n.fleet.metrics.podTransitions.WithLabelValues("Succeeded").Inc()
	n.setStatusLocked(p)
}

// reject writes the kubelet's admission failure. Call with n.mu held.
func (n *node) reject(p *pod) {
	f := n.fleet
	f.metrics.podTransitions.WithLabelValues("Failed").Inc()
	if f.events != nil {
		f.events.record(n, podRef(p), v1.EventTypeWarning, p.rejectReason, p.rejectMessage)
	}
	n.setStatusLocked(p)
}

// terminate carries out a pod's deletion as the kubelet's pod worker does:
// the status reports the deletion's new generation observed, the
// containers are killed and the status says Succeeded (they exit 0); once
// the pod's volumes are unmounted the pod is finished, and the node's status
// sync reads it a last time and deletes it with grace period 0. Call with
// n.mu held.
func (n *node) terminate(p *pod) {
	if p.phase == podAdmitted && p.startTime.IsZero() {
		p.startTime = n.fleet.clock.Now() // deleted before its first sync
	}
	n.setStatusLocked(p)
	n.fleet.sched.After(runtimeCalls, priorityPod, func(context.Context) {
		n.mu.Lock()
		defer n.mu.Unlock()
		if p.phase == podRunning || p.phase == podAdmitted {
			n.used.sub(p.requests)
			if n.fleet.events != nil {
				for _, c := range p.containers {
					n.fleet.events.record(n, podRef(p), v1.EventTypeNormal, "Killing", "Stopping container "+c.name)
				}
			}
			p.phase = podTerminating
			p.finishedAt = n.fleet.clock.Now()
			n.setStatusLocked(p)
		}
		unmounted := n.fleet.clock.Now()
		if p.hasVolumes {
			unmounted = n.volumesWaited(unmounted)
		}
		n.fleet.sched.At(unmounted, priorityPod, func(context.Context) {
			n.mu.Lock()
			defer n.mu.Unlock()
			p.terminal = true
			n.setStatusLocked(p)
		})
	})
}

func containerID(p *pod, container string) string {
	return "fake://" + string(p.uid) + "/" + container
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
