package fidelity

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestCallCounts(t *testing.T) {
	log := `{"user":{"username":"system:node:fleet-0"},"verb":"get","objectRef":{"resource":"pods","namespace":"ns","name":"p"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-05T10:00:01.000000Z"}
{"user":{"username":"system:node:fleet-0"},"verb":"patch","objectRef":{"resource":"pods","subresource":"status","namespace":"ns"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-05T10:00:01.500000Z"}
{"user":{"username":"system:node:fleet-1"},"verb":"get","objectRef":{"resource":"pods","namespace":"ns"},"responseStatus":{"code":403},"requestReceivedTimestamp":"2026-12-05T10:00:02.000000Z"}
{"user":{"username":"system:node:kubelet-0"},"verb":"get","objectRef":{"resource":"pods","namespace":"ns"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-05T10:00:02.000000Z"}
{"user":{"username":"system:node:fleet-0"},"verb":"get","objectRef":{"resource":"pods","namespace":"other"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-05T10:00:02.000000Z"}
{"user":{"username":"system:node:fleet-0"},"verb":"get","objectRef":{"resource":"pods","namespace":"ns-2"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-05T10:00:03.000000Z"}
{"user":{"username":"system:node:fleet-0"},"verb":"get","objectRef":{"resource":"pods","namespace":"ns"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-05T10:00:09.000000Z"}
`
	calls := readAuditOf(t, log)
	target := &Target{Kind: Fleet, Nodes: []string{"fleet-0", "fleet-1"}}
	from := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	all, refused := callCounts(calls, target, []string{"ns", "ns-2"}, from, from.Add(5*time.Second))
	if all["get pods"] != 3 || all["patch pods/status"] != 1 || len(all) != 2 {
		t.Errorf("calls %v: want the fleet's 3 GETs and 1 PATCH in ns and ns-2 within the window", all)
	}
	if refused["get pods"] != 1 || len(refused) != 1 {
		t.Errorf("refused %v, want the one 403", refused)
	}
	if _, err := readAudit(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing audit log read without error")
	}
}

func TestFromBinding(t *testing.T) {
	log := `{"user":{"username":"system:kube-scheduler"},"verb":"create","objectRef":{"resource":"pods","subresource":"binding","namespace":"ns","name":"a"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-05T10:00:00.990000Z","stageTimestamp":"2026-12-05T10:00:01.000000Z"}
{"user":{"username":"system:kube-scheduler"},"verb":"create","objectRef":{"resource":"pods","subresource":"binding","namespace":"ns-2","name":"b"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-05T10:00:01.990000Z","stageTimestamp":"2026-12-05T10:00:02.000000Z"}
{"user":{"username":"system:kube-scheduler"},"verb":"create","objectRef":{"resource":"pods","subresource":"binding","namespace":"ns","name":"c"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-05T10:00:02.990000Z","stageTimestamp":"2026-12-05T10:00:03.000000Z"}
{"user":{"username":"system:node:fleet-0"},"verb":"get","objectRef":{"resource":"pods","namespace":"ns","name":"a"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-05T10:00:01.012000Z","stageTimestamp":"2026-12-05T10:00:01.013000Z"}
{"user":{"username":"system:node:fleet-0"},"verb":"get","objectRef":{"resource":"pods","namespace":"ns","name":"a"},"responseStatus":{"code":403},"requestReceivedTimestamp":"2026-12-05T10:00:01.004000Z","stageTimestamp":"2026-12-05T10:00:01.005000Z"}
{"user":{"username":"system:node:kubelet-0"},"verb":"get","objectRef":{"resource":"pods","namespace":"ns-2","name":"b"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-05T10:00:02.001000Z","stageTimestamp":"2026-12-05T10:00:02.002000Z"}
{"user":{"username":"system:node:fleet-1"},"verb":"get","objectRef":{"resource":"pods","namespace":"ns-2","name":"b"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-05T10:00:02.030000Z","stageTimestamp":"2026-12-05T10:00:02.031000Z"}
{"user":{"username":"system:node:fleet-0"},"verb":"create","objectRef":{"resource":"serviceaccounts","subresource":"token","namespace":"ns","name":"default"},"requestObject":{"kind":"TokenRequest","spec":{"boundObjectRef":{"kind":"Pod","name":"c"}}},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-05T10:00:03.250000Z"}
{"user":{"username":"system:node:fleet-0"},"verb":"create","objectRef":{"resource":"serviceaccounts","subresource":"token","namespace":"ns","name":"default"},"requestObject":{"kind":"TokenRequest","spec":{"boundObjectRef":{"kind":"Pod","name":"a"}}},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-05T10:00:01.180000Z"}
{"user":{"username":"system:node:fleet-0"},"verb":"create","objectRef":{"resource":"serviceaccounts","subresource":"token","namespace":"ns","name":"default"},"requestObject":{"kind":"TokenRequest","spec":{"boundObjectRef":{"kind":"Pod","name":"a"}}},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-05T10:00:01.700000Z"}
{"user":{"username":"system:node:fleet-1"},"verb":"create","objectRef":{"resource":"serviceaccounts","subresource":"token","namespace":"ns-2","name":"default"},"requestObject":{"kind":"TokenRequest","spec":{"boundObjectRef":{"kind":"Secret","name":"b"}}},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-05T10:00:02.100000Z"}
`
	calls := readAuditOf(t, log)
	target := &Target{Kind: Fleet, Nodes: []string{"fleet-0", "fleet-1"}}
	podNS, names := map[string]string{"a": "ns", "b": "ns-2", "c": "ns"}, []string{"a", "b", "c"}
	// a: the first read is the refused one, 4 ms after the binding ended;
	// b: the kubelet's read is not the fleet's; c: never read.
	if got, want := fromBinding(calls, target, podNS, names, readOf), []float64{4, 30}; !slices.Equal(got, want) {
		t.Errorf("first reads %v ms, want %v", got, want)
	}
	// a: its first token request of two; b: a token bound to something
	// else than a pod is no pod's; c: its own, whatever the order logged.
	if got, want := fromBinding(calls, target, podNS, names, tokenOf), []float64{180, 250}; !slices.Equal(got, want) {
		t.Errorf("token requests %v ms, want %v", got, want)
	}
}

// readAuditOf reads the calls of an audit log's text.
func readAuditOf(t *testing.T, log string) []call {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	calls, err := readAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	return calls
}
