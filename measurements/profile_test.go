package measurements

import (
	"context"
	"errors"
	testingclock "k8s.io/utils/clock/testing"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A fake component serving pprof: each answer names the path asked for.
func pprofServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/debug/pprof/") {
			http.NotFound(w, r)
			return
		}
		calls.Add(1)
		_, _ = w.Write([]byte(r.URL.Path + "?" + r.URL.RawQuery))
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestProfiles(t *testing.T) {
	srv, _ := pprofServer(t)
	now := time.Date(2026, 12, 5, 23, 0, 0, 0, time.UTC)
	env := &Env{Components: []Component{{Name: "kube-scheduler", MetricsURL: srv.URL + "/metrics"}}, Clock: testingclock.NewFakePassiveClock(now)}
	for _, tc := range []struct {
		method, kind, want string
	}{
		{"CPUProfile", "profile", "/debug/pprof/profile?seconds=1"},
		{"MemoryProfile", "heap", "/debug/pprof/heap?"},
		{"BlockProfile", "block", "/debug/pprof/block?"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			p := &profile{method: tc.method, kind: tc.kind, interval: time.Hour, seconds: 1}
			if _, err := p.Execute(context.Background(), env, Params{"action": "start", "componentName": "kube-scheduler"}); err != nil {
				t.Fatal(err)
			}
			sums, err := p.Execute(context.Background(), env, Params{"action": "gather"})
			if err != nil || len(sums) != 1 {
				t.Fatalf("gather: %+v %v", sums, err)
			}
			name := tc.method + "_kube-scheduler_2026-12-05T23-00-00Z.pprof"
			if got := string(sums[0].Files[name]); got != tc.want || sums[0].Name != tc.method+"_kube-scheduler" {
				t.Errorf("summary %s files %q, want %s = %q", sums[0].Name, sums[0].Files, name, tc.want)
			}
		})
	}
}

// Between start and gather a profile is taken every interval; gather then
// takes none of its own.
func TestProfilesArePeriodic(t *testing.T) {
	srv, calls := pprofServer(t)
	env := &Env{Components: []Component{{Name: "etcd", MetricsURL: srv.URL + "/metrics"}}, Clock: &tickingClock{}}
	p := &profile{method: "MemoryProfile", kind: "heap", interval: 20 * time.Millisecond}
	if _, err := p.Execute(context.Background(), env, Params{"action": "start", "componentName": "etcd"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for calls.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	sums, err := p.Execute(context.Background(), env, Params{"action": "gather"})
	if err != nil || len(sums) != 1 {
		t.Fatalf("gather: %+v %v", sums, err)
	}
	// A profile under way when gather stops the polling is cut off and not
	// saved, so the server may have seen one more request than was saved.
	if n := len(sums[0].Files); n < 3 || int32(n) > calls.Load() {
		t.Errorf("%d profiles saved after %d asked for", n, calls.Load())
	}
}

func TestProfileNotMeasured(t *testing.T) {
	var nm *NotMeasuredError
	p := &profile{method: "CPUProfile", kind: "profile"}
	if _, err := p.Execute(context.Background(), &Env{}, Params{"action": "start", "componentName": "kube-scheduler"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Execute(context.Background(), &Env{}, Params{"action": "gather"}); !errors.As(err, &nm) || !strings.Contains(err.Error(), "kube-scheduler") {
		t.Errorf("an unreachable component: %v, want not measured", err)
	}
	srv, _ := pprofServer(t)
	env := &Env{Components: []Component{{Name: "etcd", MetricsURL: srv.URL + "/nothing/metrics"}}}
	srv.Close()
	p = &profile{method: "MemoryProfile", kind: "heap", interval: time.Hour}
	if _, err := p.Execute(context.Background(), env, Params{"action": "start", "componentName": "etcd"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Execute(context.Background(), env, Params{"action": "gather"}); !errors.As(err, &nm) {
		t.Errorf("a component that does not answer: %v, want not measured", err)
	}
	if _, err := (&profile{method: "CPUProfile", kind: "profile"}).Execute(context.Background(), env, Params{"action": "start"}); err == nil {
		t.Error("no componentName: no error")
	}
}

// tickingClock moves one second on at every reading, so that every
// profile taken gets a file name of its own.
type tickingClock struct{ tick atomic.Int64 }

func (c *tickingClock) Now() time.Time                  { return time.Unix(c.tick.Add(1), 0) }
func (c *tickingClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
