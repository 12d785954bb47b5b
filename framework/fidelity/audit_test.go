package fidelity

import (
	"os"
	"path/filepath"
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
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	calls, err := readAudit(path)
	if err != nil {
		t.Fatal(err)
	}
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
