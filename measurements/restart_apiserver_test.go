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
)

func TestRestartApiserver(t *testing.T) {
	var down atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() || r.URL.Path != "/readyz" {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	var restarted []string
	env := &Env{
		Components: []Component{{Name: "kube-apiserver", HealthURL: srv.URL + "/readyz"}},
		RestartComponent: func(_ context.Context, name string, d time.Duration) error {
			restarted = append(restarted, name+" "+d.String())
			down.Store(true)
			go func() { time.Sleep(50 * time.Millisecond); down.Store(false) }()
			return nil
		},
	}
	r := &restartAPIServer{poll: 10 * time.Millisecond}
	sums, err := r.Execute(context.Background(), env, Params{"downSeconds": 3})
	if err != nil || len(sums) != 1 || sums[0].Headline["down s"] != 3 {
		t.Fatalf("restart: %+v %v", sums, err)
	}
	if len(restarted) != 1 || restarted[0] != "kube-apiserver 3s" {
		t.Errorf("restarted %q", restarted)
	}

	// Not ready again within readyTimeout: failed.
	env.RestartComponent = func(context.Context, string, time.Duration) error { down.Store(true); return nil }
	if _, err := r.Execute(context.Background(), env, Params{"downSeconds": 0, "readyTimeout": "100ms"}); err == nil || !strings.Contains(err.Error(), "not ready 100ms after its restart") {
		t.Errorf("never ready: %v", err)
	}
	// A run that cannot restart: not measured.
	var nm *NotMeasuredError
	if _, err := r.Execute(context.Background(), &Env{}, Params{}); !errors.As(err, &nm) {
		t.Errorf("no restarter: %v, want not measured", err)
	}
	if _, err := r.Execute(context.Background(), env, Params{"downSeconds": -1}); err == nil {
		t.Error("negative downSeconds: no error")
	}
}
