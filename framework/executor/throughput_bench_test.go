package executor

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kscale/kscale/framework/benchjson"
	"github.com/kscale/kscale/framework/config"
)

// stubAPIServer answers the calls a creating run makes as fast as it can:
// creates are echoed with 201, lists are empty, everything else is 404. It
// stands for "a server that can take them", so that the benchmark measures
// the executor (templating, pacing, clients) and not the apiserver and etcd
// sharing its two cores.
type stubAPIServer struct{ creates atomic.Int64 }

func (s *stubAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodPost:
		body, _ := io.ReadAll(r.Body)
		if strings.HasSuffix(r.URL.Path, "/configmaps") {
			s.creates.Add(1)
		}
		// The typed client sends protobuf, the dynamic one JSON: the echo
		// goes back in the encoding it came in.
		w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/namespaces"):
		_, _ = io.WriteString(w, `{"kind":"NamespaceList","apiVersion":"v1","metadata":{},"items":[]}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
	}
}

// stubCreatesResult is what BenchmarkExecutorCreatesAgainstStubServer
// records in executor-creates-stub.json: the rate and the time of one run of
// the throughput config over one and over four connections.
type stubCreatesResult struct {
	Objects                         int     `json:"objects"`
	CreatesPerSecondOneConnection   float64 `json:"createsPerSecondOneConnection"`
	SecondsOneConnection            float64 `json:"secondsOneConnection"`
	CreatesPerSecondFourConnections float64 `json:"createsPerSecondFourConnections"`
	SecondsFourConnections          float64 `json:"secondsFourConnections"`
}

// BenchmarkExecutorCreatesAgainstStubServer measures the executor's own
// ceiling: 20 000 ConfigMaps in 10 namespaces, 200 in flight, client-side
// throttling off, over 1 and 4 HTTP/2 connections to a stub server in this
// process. Against the local cluster the apiserver and etcd, not the
// executor, set the pace (BenchmarkExecutorCreates in bench/).
func BenchmarkExecutorCreatesAgainstStubServer(b *testing.B) {
	const objects = 20000
	stub := &stubAPIServer{}
	srv := httptest.NewUnstartedServer(stub)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	compiled, err := config.Compile(filepath.Join("testdata", "throughput", "config.yaml"), config.Options{Environ: []string{}})
	if err != nil {
		b.Fatal(err)
	}
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: -1, Burst: -1}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	results := stubCreatesResult{Objects: objects}
	for _, conn := range []struct {
		count         int
		name          string
		rate, seconds *float64
	}{
		{1, "OneConnection", &results.CreatesPerSecondOneConnection, &results.SecondsOneConnection},
		{4, "FourConnections", &results.CreatesPerSecondFourConnections, &results.SecondsFourConnections},
	} {
		client, dyns, _, err := Clients(cfg, conn.count)
		if err != nil {
			b.Fatal(err)
		}
		stub.creates.Store(0)
		e, err := New(compiled, Options{RunID: "bench", Client: client, Dynamic: dyns, Mapper: mapper})
		if err != nil {
			b.Fatal(err)
		}
		res := e.Run(context.Background())
		if res.Failed() || stub.creates.Load() != objects {
			b.Fatalf("run failed or incomplete: %d creates; %+v", stub.creates.Load(), res.Steps[0].Errors[:min(3, len(res.Steps[0].Errors))])
		}
		rate := objects / res.Steps[0].Duration.Seconds()
		b.ReportMetric(rate, "creates/s-"+strings.ToLower(conn.name))
		*conn.rate = rate
		*conn.seconds = res.Steps[0].Duration.Round(time.Millisecond).Seconds()
	}
	if _, err := benchjson.Write("executor-creates-stub", results); err != nil {
		b.Fatal(err)
	}
}
