package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// kwokVersion is the KWOK release the light fleet is measured against.
const kwokVersion = "v0.8.0"

// kwokBinary builds KWOK from the Go module proxy into a cache folder of
// this module (bin/tools), once.
func kwokBinary(b *testing.B) string {
	b.Helper()
	dir, err := filepath.Abs("../../../bin/tools")
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "kwok-"+kwokVersion)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	cmd := exec.Command("go", "install", "sigs.k8s.io/kwok/cmd/kwok@"+kwokVersion)
	cmd.Dir = os.TempDir() // outside this module: the tool's own go.mod decides its dependencies
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building kwok %s: %v\n%s", kwokVersion, err, out)
	}
	if err := os.Rename(filepath.Join(dir, "kwok"), bin); err != nil {
		b.Fatal(err)
	}
	return bin
}

// BenchmarkFleetLight5000VsKWOK registers 5000 nodes with the light fleet,
// then, on a fresh cluster, 5000 nodes handled by KWOK, and reports for each
// the time until all are Ready and the idle cost of the simulator and the
// control plane.
func BenchmarkFleetLight5000VsKWOK(b *testing.B) {
	const (
		nodes  = 5000
		settle = 30 * time.Second
		window = 60 * time.Second
	)
	kwok := kwokBinary(b) // built before anything is measured
	results := map[string]any{}

	// The light fleet.
	{
		c := benchCluster(b)
		ctx := context.Background()
		start := time.Now()
		f, err := c.StartFleet(ctx, FleetOptions{Group: "light", Nodes: nodes, Profile: "light"})
		if err != nil {
			b.Fatal(err)
		}
		if err := WaitNodesReady(ctx, c.Client, HollowLabel+"=light", nodes, nil); err != nil {
			b.Fatal(err)
		}
		ready := time.Since(start).Seconds()
		time.Sleep(settle)
		pids := controlPlanePIDs(b, c)
		pids["simulator"] = f.PID
		usage := usageOver(b, pids, window)
		results["fleet-light"] = map[string]any{"readySeconds": ready, "processes": usage}
		b.ReportMetric(ready, "s/ready-fleet")
		b.ReportMetric(usage["simulator"]["rssMiB"], "MiB/fleet")
		if err := f.Stop(); err != nil {
			b.Fatal(err)
		}
		if err := c.Stop(ctx); err != nil {
			b.Fatal(err)
		}
	}

	// KWOK, managing nodes the benchmark creates as a user would.
	{
		c := benchCluster(b)
		ctx := context.Background()
		port, err := freePort()
		if err != nil {
			b.Fatal(err)
		}
		stages, err := filepath.Abs("testdata/kwok/stages.yaml")
		if err != nil {
			b.Fatal(err)
		}
		logFile, err := os.Create(filepath.Join(c.Dir.LogDir(), "kwok.log"))
		if err != nil {
			b.Fatal(err)
		}
		defer logFile.Close()
		cmd := exec.Command(kwok,
			"--kubeconfig="+c.Dir.AdminKubeconfig(),
			"--config="+stages,
			"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
			"--node-lease-duration-seconds=40",
			"--server-address=127.0.0.1:"+strconv.Itoa(port),
		)
		cmd.Stdout, cmd.Stderr = logFile, logFile
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		createNodes(b, c, nodes)
		if err := WaitNodesReady(ctx, c.Client, "kscale.io/kwok=true", nodes, nil); err != nil {
			b.Fatalf("%v (log %s)", err, logFile.Name())
		}
		ready := time.Since(start).Seconds()
		time.Sleep(settle)
		pids := controlPlanePIDs(b, c)
		pids["simulator"] = cmd.Process.Pid
		usage := usageOver(b, pids, window)
		results["kwok"] = map[string]any{"version": kwokVersion, "readySeconds": ready, "processes": usage}
		b.ReportMetric(ready, "s/ready-kwok")
		b.ReportMetric(usage["simulator"]["rssMiB"], "MiB/kwok")
	}
	results["nodes"] = nodes
	results["windowSeconds"] = window.Seconds()
	writeBench(b, "fleet-light-5000-vs-kwok", results)
}

// createNodes creates bare Node objects for KWOK to take over, 32 at a time.
func createNodes(b *testing.B, c *Cluster, n int) {
	b.Helper()
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = 1000, 1000 // the default 5 QPS would take 17 minutes
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				node := &v1.Node{ObjectMeta: metav1.ObjectMeta{
					Name:        fmt.Sprintf("kwok-node-%d", i),
					Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
					Labels:      map[string]string{"kscale.io/kwok": "true", "kubernetes.io/hostname": fmt.Sprintf("kwok-node-%d", i)},
				}}
				if _, err := client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}
