package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kscale/kscale/controlplane"
	"github.com/kscale/kscale/framework/config"
	"github.com/kscale/kscale/framework/executor"
	"github.com/kscale/kscale/framework/provider/local"
)

// BenchmarkExecutorCreates measures how many objects per second the
// executor creates against the local cluster with client-side throttling
// off: 20 000 ConfigMaps in 10 namespaces, 200 in flight, over 1 and 4
// client connections (what --k8s-clients-number does).
func BenchmarkExecutorCreates(b *testing.B) {
	c := benchCluster(b, "--max-requests-inflight=1000", "--max-mutating-requests-inflight=1000")
	writeBench(b, "executor-creates", measureCreates(b, c))
}

// BenchmarkExecutorCreatesNoFsync is the same on a cluster whose etcd does
// not fsync (--etcd-unsafe-no-fsync, for throw-away test clusters): what
// the executor reaches when etcd's disk is not the limit.
func BenchmarkExecutorCreatesNoFsync(b *testing.B) {
	o := controlplane.DefaultOptions()
	o.APIServerPort = 0
	o.StopWithCaller = true
	o.EtcdUnsafeNoFsync = true
	o.APIServerArgs = []string{"--max-requests-inflight=1000", "--max-mutating-requests-inflight=1000"}
	c, err := local.Start(context.Background(), filepath.Join(b.TempDir(), "cluster"), o, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Stop(context.Background()) })
	writeBench(b, "executor-creates-nofsync", measureCreates(b, c))
}

// measureCreates runs the throughput config over 1, then over 4 client
// connections.
func measureCreates(b *testing.B, c *local.ControlPlane) executorCreatesResult {
	const objects = 20000
	compiled, err := config.Compile(filepath.Join("testdata", "throughput", "config.yaml"), config.Options{Environ: []string{}})
	if err != nil {
		b.Fatal(err)
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = -1, -1 // the server, not the client, sets the pace
	results := executorCreatesResult{Objects: objects}
	for _, conn := range []struct {
		clients       int
		rate, seconds *float64
	}{
		{1, &results.CreatesPerSecond1Connections, &results.Seconds1Connections},
		{4, &results.CreatesPerSecond4Connections, &results.Seconds4Connections},
	} {
		client, dyns, mapper, err := executor.Clients(cfg, conn.clients)
		if err != nil {
			b.Fatal(err)
		}
		e, err := executor.New(compiled, executor.Options{RunID: fmt.Sprintf("bench-%d", conn.clients), Client: client, Dynamic: dyns, Mapper: mapper})
		if err != nil {
			b.Fatal(err)
		}
		res := e.Run(context.Background())
		if res.Failed() {
			b.Fatalf("run failed: %+v", res.Steps[0].Errors[:min(3, len(res.Steps[0].Errors))])
		}
		rate := objects / res.Steps[0].Duration.Seconds()
		b.ReportMetric(rate, fmt.Sprintf("creates/s-%dconn", conn.clients))
		*conn.rate = rate
		*conn.seconds = res.Steps[0].Duration.Round(time.Millisecond).Seconds()
	}
	return results
}
