package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// A node syncs pod statuses as the kubelet's status manager does, one pod
// after another on one worker per node: a pod's new status marks it
// unsynced and wakes the node's sync, which writes each unsynced pod's
// latest status — statuses that change while a write is under way are
// coalesced into the next. A status that could not be written is written
// with the node's next write, or at its next periodic sync; so is one the
// API holds differently from the node (someone else changed it: the node
// lifecycle controller's Ready=False, a user's patch). A node whose
// heartbeats are stopped writes nothing, as a kubelet cut off from the
// apiserver; it syncs at once when it resumes. A deleted pod is removed
// from the API once its terminal status is written.

// statusSyncPeriod is the kubelet status manager's sync period.
const statusSyncPeriod = 10 * time.Second

// setStatusLocked records that the pod's status changed and wakes the
// node's status sync. Call with n.mu held.
func (n *node) setStatusLocked(p *pod) {
	p.version++
	p.status = p.podState
	n.unsynced[p.uid] = p
	n.wakeSyncLocked()
}

// wakeSyncLocked starts the node's status sync unless it runs. Call with
// n.mu held.
func (n *node) wakeSyncLocked() {
	if n.syncing || n.failed {
		return
	}
	n.syncing = true
	n.fleet.sched.Now(priorityPod, n.syncStatuses)
}

// syncStatuses is the node's status sync: it writes unsynced statuses until
// none is left that it has not tried in its current version, and, when the
// periodic sync is due, the statuses others changed.
func (n *node) syncStatuses(ctx context.Context) {
	tried := map[types.UID]int{}
	type pending struct {
		p       *pod
		st      podState
		version int
		remove  bool
	}
	for {
		n.mu.Lock()
		if n.failed || ctx.Err() != nil {
			n.syncing = false
			n.mu.Unlock()
			return
		}
		full := n.fullSync
		n.fullSync = false
		// Each pod's status is taken now: a later change is the next
		// pass's, as the kubelet's status manager writes the status it
		// holds when it starts a sync.
		var batch []pending
		take := func(p *pod) { batch = append(batch, pending{p, p.status, p.version, p.deleting && p.terminal}) }
		for uid, p := range n.unsynced {
			if v, ok := tried[uid]; !ok || v != p.version || full {
				take(p)
			}
		}
		if full {
			for uid, p := range n.pods {
				if p.apiDiffers && n.unsynced[uid] == nil {
					take(p)
				}
			}
		}
		if len(batch) == 0 {
			n.syncing = false
			if len(n.unsynced) > 0 {
				n.queuePeriodicSyncLocked()
			}
			n.mu.Unlock()
			return
		}
		for _, b := range batch {
			tried[b.p.uid] = b.version
		}
		n.mu.Unlock()
		for _, b := range batch {
			n.syncPod(ctx, b.p, b.st, b.version, b.remove)
		}
	}
}

// syncPod writes the status of a pod in state st, its version version,
// and, when remove (a deleted pod whose terminal status this is), deletes
// it.
func (n *node) syncPod(ctx context.Context, p *pod, st podState, version int, remove bool) {
	err := n.writeStatus(ctx, p, st)
	if err == nil && remove {
		err = n.deletePod(ctx, p)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case err == nil:
		p.written, p.apiDiffers = version, false
		if p.version == version {
			delete(n.unsynced, p.uid)
		}
	case apierrors.IsNotFound(err) || errPodReplaced(err):
		delete(n.unsynced, p.uid) // gone: the watch's DELETED follows
	case ctx.Err() == nil:
		n.unsynced[p.uid] = p
	}
}

// deletePod removes a pod whose containers are gone from the API, with
// grace period 0 and its UID as precondition, as the kubelet does.
func (n *node) deletePod(ctx context.Context, p *pod) error {
	err := n.client.Delete().AbsPath("/api/v1/namespaces", p.namespace, "pods", p.name).
		Body(&metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &p.uid}}).
		Do(ctx).Error()
	if apierrors.IsConflict(err) {
		return nil // another pod of the name: this one is gone
	}
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		n.fleet.metrics.apiError(err)
	}
	return err
}

// writeStatus sends the pod's current status. The kubelet profile reads the
// pod first, as the kubelet's status manager does, and patches the
// difference between the API's status and its own (nothing when there is
// none). The light profile patches its whole status.
func (n *node) writeStatus(ctx context.Context, p *pod, st podState) error {
	if n.fleet.cfg.Profile != ProfileKubelet {
		status := n.statusFor(p, st, p.keptSpec(), nil)
		patch, err := fullStatusPatch(status, p.uid)
		if err != nil {
			return err
		}
		return n.patchPodStatus(ctx, p, patch)
	}
	api := &v1.Pod{}
	if err := n.client.Get().AbsPath("/api/v1/namespaces", p.namespace, "pods", p.name).Do(ctx).Into(api); err != nil {
		if !apierrors.IsNotFound(err) && ctx.Err() == nil {
			n.fleet.metrics.apiError(err)
		}
		return err
	}
	if api.UID != p.uid {
		return errPodReplacedf("%s/%s is another pod now", p.namespace, p.name)
	}
	status := n.statusFor(p, st, specOf(api), &api.Status)
	patch, unchanged, err := twoWayStatusPatch(&api.Status, status, p.uid)
	if err != nil || unchanged {
		klog.V(4).InfoS("Pod status up to date", "pod", klog.KRef(p.namespace, p.name), "err", err)
		return err
	}
	klog.V(5).InfoS("Patching pod status", "pod", klog.KRef(p.namespace, p.name), "patch", string(patch))
	return n.patchPodStatus(ctx, p, patch)
}

// statusFor is the status the node writes for the pod: the rejection of a
// pod admission refused, else the generated status merged with what the
// API holds of others' (api nil: unknown).
func (n *node) statusFor(p *pod, st podState, spec podSpec, api *v1.PodStatus) v1.PodStatus {
	if p.rejectReason != "" {
		s := v1.PodStatus{Phase: v1.PodFailed, Reason: p.rejectReason, Message: "Pod was rejected: " + p.rejectMessage}
		if api != nil {
			s.QOSClass, s.Conditions = api.QOSClass, api.Conditions
		}
		return s
	}
	if api == nil {
		return n.generateStatus(p, st, spec, time.Time{})
	}
	return mergeStatus(api, n.generateStatus(p, st, spec, scheduledSince(api)))
}

func (n *node) patchPodStatus(ctx context.Context, p *pod, patch []byte) error {
	err := n.client.Patch(types.StrategicMergePatchType).AbsPath("/api/v1/namespaces", p.namespace, "pods", p.name, "status").Body(patch).Do(ctx).Error()
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
		n.fleet.metrics.apiError(err)
		klog.V(2).InfoS("Pod status patch failed", "pod", klog.KRef(p.namespace, p.name), "node", n.name, "err", err)
	}
	return err
}

// twoWayStatusPatch is the kubelet's status patch: the strategic-merge
// difference between the API's status and the new one, with the pod's UID
// as precondition. unchanged: the API has the new status already.
func twoWayStatusPatch(api *v1.PodStatus, status v1.PodStatus, uid types.UID) (patch []byte, unchanged bool, err error) {
	oldData, err := json.Marshal(v1.Pod{Status: *api})
	if err != nil {
		return nil, false, err
	}
	newData, err := json.Marshal(v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: status})
	if err != nil {
		return nil, false, err
	}
	patch, err = strategicpatch.CreateTwoWayMergePatch(oldData, newData, v1.Pod{})
	if err != nil {
		return nil, false, fmt.Errorf("making the status patch: %w", err)
	}
	return patch, string(patch) == fmt.Sprintf(`{"metadata":{"uid":%q}}`, uid), nil
}

// fullStatusPatch patches a whole status without knowing the API's: a
// condition's reason and message it does not have are removed (null)
// rather than left as they were.
func fullStatusPatch(status v1.PodStatus, uid types.UID) ([]byte, error) {
	data, err := json.Marshal(status)
	if err != nil {
		return nil, err
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	if conds, ok := fields["conditions"].([]any); ok {
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok {
				for _, k := range []string{"reason", "message"} {
					if _, set := m[k]; !set {
						m[k] = nil
					}
				}
			}
		}
	}
	return statusPatch(fields, uid)
}

// podReplacedError: the pod of the node's record was deleted and made
// again under its name.
type podReplacedError struct{ msg string }

func (e *podReplacedError) Error() string { return e.msg }

func errPodReplacedf(format string, args ...any) error {
	return &podReplacedError{fmt.Sprintf(format, args...)}
}

func errPodReplaced(err error) bool {
	var r *podReplacedError
	return errors.As(err, &r)
}

// observeAPIStatus notes whether the pod's status as the API has it differs
// from what the node would write, and if so arranges for the node's next
// sync to write it back. Call with n.mu held.
func (n *node) observeAPIStatus(p *pod, api *v1.Pod) {
	if p.version == 0 || p.deleting || p.rejectReason != "" {
		return // no status of the node's yet (or one of an earlier run's finished pod)
	}
	want := n.generateStatus(p, p.status, p.keptSpec(), time.Time{})
	p.apiDiffers = !sameAsKubelet(&api.Status, &want)
	if p.apiDiffers && p.written == p.version {
		n.queuePeriodicSyncLocked()
	}
}

// nextSync is the node's next periodic status sync after now.
func (n *node) nextSync(now time.Time) time.Time {
	period := n.fleet.statusSyncPeriod
	return nextTick(now, period, n.phase("status-sync", period))
}

// phase is the offset in period of one of the node's loops: kubelets
// started at different times run theirs out of step.
func (n *node) phase(loop string, period time.Duration) time.Duration {
	h := fnv.New32a()
	_, _ = h.Write([]byte(n.name + "/" + loop))
	return time.Duration(h.Sum32()) % period
}

// nextTick is the first time after t of a loop that runs every period at
// phase.
func nextTick(t time.Time, period, phase time.Duration) time.Time {
	next := t.Truncate(period).Add(phase)
	for !next.After(t) {
		next = next.Add(period)
	}
	return next
}

// queuePeriodicSyncLocked arranges the node's next periodic status sync,
// unless one is queued. Call with n.mu held.
func (n *node) queuePeriodicSyncLocked() {
	if n.periodicSyncQueued {
		return
	}
	n.periodicSyncQueued = true
	n.fleet.sched.At(n.nextSync(n.fleet.clock.Now()), priorityPod, func(context.Context) {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.periodicSyncQueued = false
		n.fullSync = true
		n.wakeSyncLocked()
	})
}
