package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
)

// Serve runs the fleet's HTTP endpoints on addr until ctx ends:
//
//	GET  /metrics                     Prometheus metrics
//	GET  /healthz                     ok once every node has registered
//	GET  /status                      JSON summary: nodes registered, with a Lease, ready, failed, deleted; pods
//	POST /fail?fraction=0.1           stop the heartbeats of a fraction of the nodes
//	POST /fail?nodes=a,b              ... or of the named nodes
//	POST /recover[?nodes=a,b]         resume heartbeats (all nodes without ?nodes)
//	GET  /debug/pprof/...             Go profiles of the fleet process
//
// /fail and /recover answer with the names of the nodes they changed.
// It returns the address it listens on once listening.
func (f *Fleet) Serve(ctx context.Context, addr string) (net.Addr, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--fleet-metrics-bind-address=%s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(f.metrics.registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		s := f.snapshot()
		if s.started < len(f.nodes) {
			http.Error(w, fmt.Sprintf("registered %d/%d", s.started, len(f.nodes)), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		s := f.snapshot()
		writeJSON(w, map[string]any{
			"nodes": len(f.nodes), "registered": s.registered, "leased": s.leased, "ready": s.ready, "failed": s.failed, "deleted": s.deleted,
			"pods": s.pods, "maxLeaseAgeSeconds": s.maxLeaseAge.Seconds(),
		})
	})
	mux.HandleFunc("POST /fail", func(w http.ResponseWriter, r *http.Request) {
		nodes, err := f.nodesOf(r, false)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.setFailed(nodes, true)
		klog.InfoS("Heartbeats stopped", "nodes", len(nodes))
		writeJSON(w, map[string]any{"failed": names(nodes)})
	})
	mux.HandleFunc("POST /recover", func(w http.ResponseWriter, r *http.Request) {
		nodes, err := f.nodesOf(r, true)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.setFailed(nodes, false)
		klog.InfoS("Heartbeats resumed", "nodes", len(nodes))
		writeJSON(w, map[string]any{"recovered": names(nodes)})
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.ErrorS(err, "Fleet HTTP server")
		}
	}()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	return l.Addr(), nil
}

// nodesOf reads ?nodes=a,b or ?fraction=F; with neither, all nodes if
// allowAll.
func (f *Fleet) nodesOf(r *http.Request, allowAll bool) ([]*node, error) {
	q := r.URL.Query()
	switch {
	case q.Get("nodes") != "":
		var out []*node
		for _, name := range strings.Split(q.Get("nodes"), ",") {
			n, ok := f.byName[name]
			if !ok {
				return nil, fmt.Errorf("no node %q in this fleet", name)
			}
			out = append(out, n)
		}
		return out, nil
	case q.Get("fraction") != "":
		frac, err := strconv.ParseFloat(q.Get("fraction"), 64)
		if err != nil || frac < 0 || frac > 1 {
			return nil, fmt.Errorf("fraction=%q: want a number in 0..1", q.Get("fraction"))
		}
		return f.pickNodes(frac), nil
	case allowAll:
		return f.nodes, nil
	}
	return nil, errors.New("say which nodes: ?nodes=a,b or ?fraction=0.1")
}

func names(nodes []*node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.name
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
