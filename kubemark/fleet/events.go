package fleet

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// maxQueuedEvents is the queue of the kubelet's event broadcaster: beyond
// it the kubelet drops new events instead of holding them, so an overloaded
// apiserver costs it no memory. The fleet does the same per node.
const maxQueuedEvents = 1000

// eventRecorder posts kubelet-style events (source component "kubelet", host
// the node). Like the kubelet's broadcaster it sends them in the background:
// they never delay heartbeats or pod status.
type eventRecorder struct{ fleet *Fleet }

func (r *eventRecorder) record(n *node, ref *v1.ObjectReference, eventType, reason, message string) {
	r.recordTimes(n, ref, eventType, reason, message, 1)
}

// recordTimes records an event that happens times times in a row. Like the
// kubelet's event correlator it creates the Event once and patches its count
// and last timestamp for every repeat.
func (r *eventRecorder) recordTimes(n *node, ref *v1.ObjectReference, eventType, reason, message string, times int) {
	now := metav1.NewTime(n.fleet.clock.Now())
	namespace := ref.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	ev := &v1.Event{
		ObjectMeta: metav1.ObjectMeta{
			// The kubelet names events <object>.<hex nanoseconds>.
			Name:      fmt.Sprintf("%s.%x", ref.Name, now.UnixNano()),
			Namespace: namespace,
		},
		InvolvedObject:      *ref,
		Reason:              reason,
		Message:             message,
		Source:              v1.EventSource{Component: "kubelet", Host: n.name},
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		Type:                eventType,
		ReportingController: "kubelet",
		ReportingInstance:   n.name,
	}
	if n.queuedEvents.Add(1) > maxQueuedEvents {
		n.queuedEvents.Add(-1)
		r.fleet.metrics.eventsDropped.Inc()
		return
	}
	r.fleet.sched.Now(priorityEvents, func(ctx context.Context) {
		defer n.queuedEvents.Add(-1)
		err := n.events.Post().AbsPath("/api/v1/namespaces", namespace, "events").Body(ev).Do(ctx).Error()
		for count := 2; count <= times && err == nil; count++ {
			var repeat []byte
			repeat, err = json.Marshal(map[string]any{"count": count, "lastTimestamp": metav1.Now(), "message": message})
			if err == nil {
				err = n.events.Patch(types.StrategicMergePatchType).AbsPath("/api/v1/namespaces", namespace, "events", ev.Name).Body(repeat).Do(ctx).Error()
			}
		}
		if err != nil && ctx.Err() == nil {
			r.fleet.metrics.apiError(err)
		}
	})
}
