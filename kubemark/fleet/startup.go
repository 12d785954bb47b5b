package fleet

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// A kubelet-profile node starts as a v1.37 kubelet does, call for call (as
// read in the audit log of a hollow kubelet starting):
//
//   - its CSI volume plugin reads its CSINode from the watch cache to know the
//     apiserver is there, then reads its Node until it exists, creates the
//     CSINode, and only then lets the node post Ready;
//   - its lease controller reads its Lease and, to set the owner reference,
//     its Node; before registration that read fails, so the Lease is created
//     one renew interval (10 s) later;
//   - it registers the Node with Ready=False ("CSINode is not yet
//     initialized"), reads it back for its first status update and patches
//     it with nothing changed, and patches Ready=True once the CSINode exists;
//   - it records Starting, the three pressure events (twice: its initial Node
//     is built twice before its informer syncs, so they are patched to count
//     2), NodeAllocatableEnforced, and NodeReady.
//
// That is about two dozen calls per node where a bare registration makes 3
// (docs/benchmarks.md has the measured counts, against the kubelet's): a
// registration storm of the fleet loads the control plane as one of
// kubelets does. The kubelet runs these loops side by side; here each is a chain of
// tasks, and the steps of a registering node (priorityStartup) go before the
// next node's registration.

// startKubelet is a kubelet-profile node's first step.
func (n *node) startKubelet(ctx context.Context) {
	f := n.fleet
	if err := n.ensureClient(ctx); err != nil {
		n.logger().Error(err, "Creating the node's client")
		f.sched.After(f.backoff(0), priorityBackground, n.startKubelet)
		return
	}
	// Any answer but an error shows the apiserver is reachable; the kubelet
	// polls every second until it is.
	err := n.client.Get().AbsPath(csiNodesPath, n.name).Param("resourceVersion", "0").Do(ctx).Error()
	if err != nil && !apierrors.IsNotFound(err) {
		f.metrics.apiError(err)
		if ctx.Err() == nil {
			f.sched.After(time.Second, priorityBackground, n.startKubelet)
		}
		return
	}
	n.recordStartupEvents()
	f.sched.Now(priorityStartup, n.startLease)
	// For a Node left by an earlier run this finds it and syncs the CSINode
	// before the registration, which then reports the node Ready at once.
	n.initCSINode(ctx, 0)
	f.sched.After(registrationDelay, priorityStartup, n.register)
}

// registrationDelay is how long after its start a kubelet registers its
// Node: it builds its initial Node status first, about this long on the
// kubelet morph; in that time its CSI plugin reads the missing Node three
// times and its lease controller once.
const registrationDelay = 200 * time.Millisecond

// initCSINode is try number attempt of the CSI plugin's CSINode
// initialisation: read the Node, sync the CSINode, let the node post Ready.
func (n *node) initCSINode(ctx context.Context, attempt int) {
	f := n.fleet
	node := &v1.Node{}
	err := n.client.Get().AbsPath("/api/v1/nodes", n.name).Do(ctx).Into(node)
	if err == nil {
		err = n.syncCSINode(ctx, node.UID)
	}
	if err != nil {
		if !apierrors.IsNotFound(err) {
			f.metrics.apiError(err)
		}
		if ctx.Err() == nil {
			f.sched.After(jitter(csiInitRetryDelay(attempt), 0.1), priorityStartup, func(ctx context.Context) {
				n.initCSINode(ctx, attempt+1)
			})
		}
		return
	}
	n.mu.Lock()
	n.csiNodeReady = true
	n.mu.Unlock()
	if !isReady(node) {
		n.postReady(ctx, node.UID)
	}
}

// csiInitRetryDelay is the kubelet's wait after failed try number attempt
// (from 0) of its CSINode initialisation: rounds of four tries, 10 ms, 50 ms
// and 250 ms apart, with 30 ms between the first two rounds and eight times
// more between each later pair. A kubelet exits after six rounds (~140 s) and
// is restarted; the fleet keeps trying every 30 s instead.
func csiInitRetryDelay(attempt int) time.Duration {
	round, try := attempt/4, attempt%4
	if try < 3 {
		d := 10 * time.Millisecond
		for range try {
			d *= 5
		}
		return d
	}
	d := 30 * time.Millisecond
	for range round {
		d *= 8
		if d >= 30*time.Second {
			return 30 * time.Second
		}
	}
	return d
}

// postReady patches the node's Ready condition to True, as the kubelet's
// fast status update does as soon as nothing holds the node back; the
// Node's status is its heartbeat until it has a Lease.
func (n *node) postReady(ctx context.Context, nodeUID types.UID) {
	f := n.fleet
	now := n.fleet.clock.Now()
	n.mu.Lock()
	n.readySince = now
	ready := n.readyCondition(now)
	n.mu.Unlock()
	patch, err := statusPatch(map[string]any{"conditions": []v1.NodeCondition{ready}}, "")
	if err == nil {
		err = n.heartbeat.Patch(types.StrategicMergePatchType).AbsPath("/api/v1/nodes", n.name, "status").Body(patch).Do(ctx).Error()
	}
	if err != nil {
		f.metrics.apiError(err)
		if ctx.Err() == nil {
			f.sched.After(f.backoff(1), priorityStartup, func(ctx context.Context) { n.postReady(ctx, nodeUID) })
		}
		return
	}
	n.mu.Lock()
	n.renewedAt = now
	n.mu.Unlock()
	if f.events != nil {
		ref := &v1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: n.name, UID: nodeUID}
		f.events.record(n, ref, v1.EventTypeNormal, "NodeReady", nodeStatusMessage(n.name, "NodeReady"))
	}
}

// startLease is the kubelet's node lease controller until it has a Lease:
// read it, and when it is missing, read the Node (for the owner reference)
// and create it. Before the Node exists that read fails and the kubelet
// tries again one renew interval later.
func (n *node) startLease(ctx context.Context) {
	f := n.fleet
	lease := &coordinationv1.Lease{}
	err := n.heartbeat.Get().AbsPath(leasesPath, n.name).Do(ctx).Into(lease)
	if err == nil {
		n.leaseAcquired(lease, true)
		return
	}
	if apierrors.IsNotFound(err) {
		node := &v1.Node{}
		err = n.heartbeat.Get().AbsPath("/api/v1/nodes", n.name).Do(ctx).Into(node)
		if apierrors.IsNotFound(err) {
			f.sched.After(f.renewInterval(), priorityStartup, n.startLease)
			return
		}
		if err == nil {
			err = n.heartbeat.Post().AbsPath(leasesPath).Body(n.newLease(node.UID)).Do(ctx).Into(lease)
			if err == nil {
				n.leaseAcquired(lease, false)
				return
			}
		}
	}
	f.metrics.apiError(err)
	if ctx.Err() == nil {
		f.sched.After(f.backoff(1), priorityStartup, n.startLease)
	}
}

// firstStatusSync is the kubelet's first node status update after it
// registered: its informer has not synced, so it reads the Node from the
// apiserver, and it patches though nothing changed — the status report
// period has not begun — which makes an empty patch.
func (n *node) firstStatusSync(ctx context.Context) {
	f := n.fleet
	err := n.heartbeat.Get().AbsPath("/api/v1/nodes", n.name).Do(ctx).Error()
	if err == nil {
		err = n.heartbeat.Patch(types.StrategicMergePatchType).AbsPath("/api/v1/nodes", n.name, "status").Body([]byte("{}")).Do(ctx).Error()
	}
	if err != nil && ctx.Err() == nil {
		f.metrics.apiError(err)
	}
}

// recordStartupEvents records the events a kubelet records before it has
// registered; they refer to the Node by name only.
func (n *node) recordStartupEvents() {
	r := n.fleet.events
	if r == nil {
		return
	}
	ref := &v1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: n.name}
	r.record(n, ref, v1.EventTypeNormal, "Starting", "Starting kubelet.")
	for _, reason := range []string{"NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID"} {
		r.recordTimes(n, ref, v1.EventTypeNormal, reason, nodeStatusMessage(n.name, reason), 2)
	}
	r.record(n, ref, v1.EventTypeNormal, "NodeAllocatableEnforced", "Updated Node Allocatable limit across pods")
}

func nodeStatusMessage(name, event string) string { return "Node " + name + " status is now: " + event }

// isReady reports whether node's Ready condition is True.
func isReady(node *v1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
