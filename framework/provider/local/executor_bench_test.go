package local

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kscale/kscale/framework/config"
	"github.com/kscale/kscale/framework/executor"
)

// BenchmarkExecutorCreates measures how many objects per second the
// executor creates against the local cluster with client-side throttling
// off: 20 000 ConfigMaps in 10 namespaces, 200 in flight, over 4 client
// connections (what --k8s-clients-number does).
func BenchmarkExecutorCreates(b *testing.B) {
	const objects = 20000
	c := benchCluster(b, "--max-requests-inflight=1000", "--max-mutating-requests-inflight=1000")
	compiled, err := config.Compile(filepath.Join("testdata", "throughput", "config.yaml"), config.Options{Environ: []string{}})
	if err != nil {
		b.Fatal(err)
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = -1, -1 // the server, not the client, sets the pace
	results := map[string]any{"objects": objects}
	for _, clients := range []int{1, 4} {
		client, dyns, mapper, err := executor.Clients(cfg, clients)
		if err != nil {
			b.Fatal(err)
		}
		e, err := executor.New(compiled, executor.Options{RunID: "bench", Client: client, Dynamic: dyns, Mapper: mapper})
		if err != nil {
			b.Fatal(err)
		}
		res := e.Run(context.Background())
		if res.Failed() {
			b.Fatalf("run failed: %+v", res.Steps[0].Errors[:min(3, len(res.Steps[0].Errors))])
		}
		rate := objects / res.Steps[0].Duration.Seconds()
		b.ReportMetric(rate, "creates/s-"+map[int]string{1: "1conn", 4: "4conn"}[clients])
		results[map[int]string{1: "createsPerSecondOneConnection", 4: "createsPerSecondFourConnections"}[clients]] = rate
		results[map[int]string{1: "secondsOneConnection", 4: "secondsFourConnections"}[clients]] = res.Steps[0].Duration.Round(time.Millisecond).Seconds()
	}
	writeBench(b, "executor-creates", results)
}
