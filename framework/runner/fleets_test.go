package runner

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeFleet answers /fail and /recover as a fleet does: 400 "no node ... in
// this fleet" for a name it does not run.
type fakeFleet struct {
	mu       sync.Mutex
	nodes    map[string]bool // name → failed
	requests int
}

func (f *fakeFleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	names := strings.Split(r.URL.Query().Get("nodes"), ",")
	for _, n := range names {
		if _, ok := f.nodes[n]; !ok {
			http.Error(w, fmt.Sprintf("no node %q in this fleet", n), http.StatusBadRequest)
			return
		}
	}
	for _, n := range names {
		f.nodes[n] = r.URL.Path == "/fail"
	}
	fmt.Fprint(w, `{}`)
}

func TestFleetFailerFindsEachNodesFleet(t *testing.T) {
	a := &fakeFleet{nodes: map[string]bool{"a-0": false, "a-1": false}}
	b := &fakeFleet{nodes: map[string]bool{"b-0": false, "b-1": false}}
	srvA, srvB := httptest.NewServer(a), httptest.NewServer(b)
	defer srvA.Close()
	defer srvB.Close()
	f := newFleetFailer([]string{srvA.URL, srvB.URL})
	ctx := context.Background()
	if done, err := f.Fail(ctx, []string{"b-1", "a-0", "b-0"}); err != nil || len(done) != 3 {
		t.Fatal(done, err)
	}
	if !a.nodes["a-0"] || a.nodes["a-1"] || !b.nodes["b-0"] || !b.nodes["b-1"] {
		t.Fatalf("failed: a %v, b %v", a.nodes, b.nodes)
	}
	before := a.requests + b.requests
	if err := f.Recover(ctx, []string{"b-1", "a-0", "b-0"}); err != nil {
		t.Fatal(err)
	}
	if a.nodes["a-0"] || b.nodes["b-0"] || b.nodes["b-1"] {
		t.Fatalf("not recovered: a %v, b %v", a.nodes, b.nodes)
	}
	// Owners are remembered: one request per fleet.
	if got := a.requests + b.requests - before; got != 2 {
		t.Errorf("recovery took %d requests, want 2", got)
	}
	// A node no fleet runs does not stop the others of its batch.
	done, err := f.Fail(ctx, []string{"c-0", "a-1"})
	if err == nil || !strings.Contains(err.Error(), "node c-0 is in none of the fleets") || !slices.Equal(done, []string{"a-1"}) || !a.nodes["a-1"] {
		t.Errorf("unknown node: done %v, %v", done, err)
	}
}

func TestParseFleet(t *testing.T) {
	for raw, ok := range map[string]bool{
		"http://127.0.0.1:10269":  true,
		"http://127.0.0.1:10269/": true,
		"127.0.0.1:10269":         false,
		"ftp://x":                 false,
	} {
		got, err := ParseFleet(raw)
		if ok != (err == nil) || (ok && strings.HasSuffix(got, "/")) {
			t.Errorf("%s: %q %v", raw, got, err)
		}
		if !ok && !strings.Contains(err.Error(), "--fleet") {
			t.Errorf("%s: the error must name the flag: %v", raw, err)
		}
	}
	if c := fleetComponents([]string{"http://x:1"}); len(c) != 1 || c[0].Name != "fleet-1" || c[0].MetricsURL != "http://x:1/metrics" || !slices.Contains([]string{"http://x:1/healthz"}, c[0].HealthURL) {
		t.Errorf("components %+v", c)
	}
}
