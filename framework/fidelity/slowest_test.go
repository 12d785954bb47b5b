package fidelity

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestSlowestPods(t *testing.T) {
	log := `{"user":{"username":"system:kube-scheduler"},"verb":"create","objectRef":{"resource":"pods","subresource":"binding","namespace":"ns","name":"a"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-05T10:00:00.990000Z","stageTimestamp":"2026-12-05T10:00:01.000000Z"}
{"user":{"username":"system:kube-scheduler"},"verb":"create","objectRef":{"resource":"pods","subresource":"binding","namespace":"ns-2","name":"b"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-05T10:00:00.990000Z","stageTimestamp":"2026-12-05T10:00:01.000000Z"}
{"user":{"username":"system:kube-scheduler"},"verb":"create","objectRef":{"resource":"pods","subresource":"binding","namespace":"ns","name":"c"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-05T10:00:00.990000Z","stageTimestamp":"2026-12-05T10:00:01.000000Z"}
{"user":{"username":"system:kube-scheduler"},"verb":"create","objectRef":{"resource":"pods","subresource":"binding","namespace":"ns","name":"d"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-05T10:00:00.990000Z","stageTimestamp":"2026-12-05T10:00:01.000000Z"}
{"user":{"username":"system:node:n-1"},"verb":"get","objectRef":{"resource":"pods","namespace":"ns-2","name":"b"},"responseStatus":{"code":403},"requestReceivedTimestamp":"2026-12-05T10:00:01.002000Z"}
{"user":{"username":"system:node:n-1"},"verb":"watch","objectRef":{"resource":"configmaps","namespace":"ns-2","name":"kube-root-ca.crt"},"responseStatus":{"code":403},"requestReceivedTimestamp":"2026-12-05T10:00:01.003000Z"}
{"user":{"username":"system:node:n-1"},"verb":"list","objectRef":{"resource":"configmaps","namespace":"ns-2","name":"kube-root-ca.crt"},"responseStatus":{"code":403},"requestReceivedTimestamp":"2026-12-05T10:00:01.004000Z"}
{"user":{"username":"system:node:n-1"},"verb":"watch","objectRef":{"resource":"configmaps","namespace":"ns-2","name":"kube-root-ca.crt"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-05T10:00:02.100000Z"}
{"user":{"username":"system:node:n-2"},"verb":"get","objectRef":{"resource":"pods","namespace":"ns-2","name":"x"},"responseStatus":{"code":403},"requestReceivedTimestamp":"2026-12-05T10:00:01.002000Z"}
{"user":{"username":"system:node:n-1"},"verb":"get","objectRef":{"resource":"pods","namespace":"ns","name":"y"},"responseStatus":{"code":403},"requestReceivedTimestamp":"2026-12-05T10:00:01.002000Z"}
{"user":{"username":"system:node:n-1"},"verb":"get","objectRef":{"resource":"pods","namespace":"ns-2","name":"b"},"responseStatus":{"code":403},"requestReceivedTimestamp":"2026-12-05T10:00:03.000000Z"}
{"user":{"username":"system:node:n-2"},"verb":"create","objectRef":{"resource":"serviceaccounts","subresource":"token","namespace":"ns","name":"default"},"requestObject":{"kind":"TokenRequest","spec":{"boundObjectRef":{"kind":"Pod","name":"a"}}},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-05T10:00:01.100000Z"}
{"user":{"username":"system:node:n-2"},"verb":"create","objectRef":{"resource":"serviceaccounts","subresource":"token","namespace":"ns","name":"default"},"requestObject":{"kind":"TokenRequest","spec":{"boundObjectRef":{"kind":"Pod","name":"c"}}},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-05T10:00:01.310000Z"}
{"user":{"username":"system:node:n-2"},"verb":"create","objectRef":{"resource":"serviceaccounts","subresource":"token","namespace":"ns","name":"default"},"requestObject":{"kind":"TokenRequest","spec":{"boundObjectRef":{"kind":"Pod","name":"c"}}},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-05T10:00:01.400000Z"}
`
	calls := readAuditOf(t, log)
	at := time.Date(2026, 12, 5, 10, 0, 1, 0, time.UTC)
	running := func(node string, after time.Duration) *podRecord {
		return &podRecord{node: node, statuses: []seenStatus{
			{at: at.Add(after / 2), status: v1.PodStatus{Phase: v1.PodPending}},
			{at: at.Add(after), status: v1.PodStatus{Phase: v1.PodRunning}},
			{at: at.Add(after + time.Second), status: v1.PodStatus{Phase: v1.PodRunning}},
		}}
	}
	records := map[string]*podRecord{
		"a": running("n-1", 350*time.Millisecond),
		"b": running("n-1", 1850*time.Millisecond),
		"c": running("n-2", 650*time.Millisecond),
		"d": {node: "n-2", statuses: []seenStatus{{at: at.Add(5 * time.Second), status: v1.PodStatus{Phase: v1.PodPending}}}},
		"e": running("n-2", 9*time.Second), // never bound
	}
	podNS := map[string]string{"a": "ns", "b": "ns-2", "c": "ns", "d": "ns", "e": "ns"}
	got := slowestPods(calls, records, podNS, []string{"a", "b", "c", "d", "e"}, 2)
	// b's node was refused its pod and its ConfigMap before b ran (not the
	// other node's refusal, nor one in another namespace, nor one after),
	// and never asked for its token; c's token was first asked for 310 ms
	// after its binding (a's request, by the same node, is a's); d never
	// ran and e was never bound.
	want := []SlowPod{
		{Pod: "b", Node: "n-1", Ms: 1850, Refused: []string{"get pods", "watch configmaps", "list configmaps"}},
		{Pod: "c", Node: "n-2", Ms: 650, TokenMs: 310},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("slowest pods:\n got %+v\nwant %+v", got, want)
	}
	if all := slowestPods(calls, records, podNS, []string{"a", "b", "c", "d", "e"}, 10); len(all) != 3 {
		t.Errorf("%d pods bound and Running, want 3: %+v", len(all), all)
	}
}
