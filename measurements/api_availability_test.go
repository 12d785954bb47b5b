package measurements

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// readyzServer answers /readyz with ok while up is true, 500 otherwise.
func readyzServer(t *testing.T, up *atomic.Bool) *Env {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		if !up.Load() {
			http.Error(w, "[-]etcd failed", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Client: client, Config: cfg}
}

func TestAPIAvailability(t *testing.T) {
	var up atomic.Bool
	up.Store(true)
	m := NewManager(readyzServer(t, &up))
	ctx := context.Background()
	if err := m.Execute(ctx, "APIAvailability", "a", map[string]any{"action": "start", "pollFrequency": "20ms"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	up.Store(false) // an outage of about a third of the run
	time.Sleep(100 * time.Millisecond)
	up.Store(true)
	time.Sleep(100 * time.Millisecond)
	err := m.Execute(ctx, "APIAvailability", "a", map[string]any{"action": "gather", "threshold": 99.5})
	var v *ViolationError
	if !errors.As(err, &v) || !strings.Contains(v.Items[0], "apiserver available") || !strings.Contains(v.Items[0], "etcd failed") {
		t.Fatalf("want a violation naming the last error, got %v", err)
	}
	s := m.Summaries()[0]
	pct, longest := s.Headline["availability %"], s.Headline["longest unavailable s"]
	if pct < 30 || pct > 97 {
		t.Errorf("availability %.1f%%, want about 75%%", pct)
	}
	if longest < 0.05 || longest > 0.3 {
		t.Errorf("longest outage %.3fs, want about 0.1s", longest)
	}
	if s.PerfData.DataItems[0].Data["AvailabilityPercentage"] != pct {
		t.Errorf("PerfData %+v", s.PerfData.DataItems)
	}
}

func TestAPIAvailabilityAlwaysUp(t *testing.T) {
	var up atomic.Bool
	up.Store(true)
	m := NewManager(readyzServer(t, &up))
	ctx := context.Background()
	if err := m.Execute(ctx, "APIAvailability", "a", map[string]any{"action": "start", "pollFrequency": "10ms"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := m.Execute(ctx, "APIAvailability", "a", map[string]any{"action": "gather", "threshold": 99.9}); err != nil {
		t.Fatal(err)
	}
	if s := m.Summaries()[0]; s.Verdict != Pass || s.Headline["availability %"] != 100 || s.Thresholds["availability %"] != 99.9 {
		t.Fatalf("summary %+v", s)
	}
}

// An outage between pause and unpause (a planned apiserver restart) is not
// counted: the run stays 100 % available.
func TestAPIAvailabilityPaused(t *testing.T) {
	var up atomic.Bool
	up.Store(true)
	m := NewManager(readyzServer(t, &up))
	ctx := context.Background()
	if err := m.Execute(ctx, "APIAvailability", "a", map[string]any{"action": "pause"}); err == nil {
		t.Error("pause before start: no error")
	}
	if err := m.Execute(ctx, "APIAvailability", "a", map[string]any{"action": "start", "pollFrequency": "10ms"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := m.Execute(ctx, "APIAvailability", "a", map[string]any{"action": "pause"}); err != nil {
		t.Fatal(err)
	}
	up.Store(false)
	time.Sleep(100 * time.Millisecond)
	up.Store(true)
	time.Sleep(20 * time.Millisecond)
	if err := m.Execute(ctx, "APIAvailability", "a", map[string]any{"action": "unpause"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := m.Execute(ctx, "APIAvailability", "a", map[string]any{"action": "gather", "threshold": 99.9}); err != nil {
		t.Fatal(err)
	}
	sums := m.Summaries() // the failed pause before start, then the gather
	if s := sums[len(sums)-1]; s.Headline["availability %"] != 100 || s.Headline["longest unavailable s"] != 0 {
		t.Fatalf("an outage while paused was counted: %+v", s.Headline)
	}
}
