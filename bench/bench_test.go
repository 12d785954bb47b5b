package bench

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/framework/benchjson"
	"github.com/kscale/kscale/framework/provider/local"
	"github.com/kscale/kscale/framework/provider/local/localtest"
	"github.com/kscale/kscale/measurements/procstat"
)

// writeBench records results, of the benchmark's own result type (see
// results_test.go), as results/bench/<name>.json.
func writeBench(b *testing.B, name string, results any) {
	b.Helper()
	path, err := benchjson.Write(name, results)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("wrote %s", path)
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchmarkClusterUp measures `kscale cluster up` to ready: five times on a
// fresh folder (new CA, empty etcd) and five times on the same folder again
// (the warm path: data kept, binaries cached).
func BenchmarkClusterUp(b *testing.B) {
	const runs = 5
	ctx := context.Background()
	measure := func(dir string) float64 {
		start := time.Now()
		c, err := local.Start(ctx, dir, localtest.Options(), nil)
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(start).Seconds()
		if err := c.Stop(ctx); err != nil {
			b.Fatal(err)
		}
		return took
	}
	root := b.TempDir()
	var fresh, again []float64
	for i := range runs {
		fresh = append(fresh, measure(filepath.Join(root, fmt.Sprint("fresh-", i))))
	}
	for range runs {
		again = append(again, measure(filepath.Join(root, "fresh-0")))
	}
	b.ReportMetric(median(fresh), "s/up-fresh")
	b.ReportMetric(median(again), "s/up-again")
	writeBench(b, "cluster-up", clusterUpResult{
		Runs:                  runs,
		FreshFolderSeconds:    fresh,
		FreshFolderMedian:     median(fresh),
		ExistingFolderSeconds: again,
		ExistingFolderMedian:  median(again),
	})
}

// BenchmarkIdleKubeletMorph measures what idle kubelet-morph hollow nodes
// cost, and what the control plane costs with them: CPU and RSS per process
// over a minute after the nodes settled, the API requests the nodes make, and
// the watches they hold open.
func BenchmarkIdleKubeletMorph(b *testing.B) {
	const (
		nodeCount = 10
		settle    = 30 * time.Second
		window    = 60 * time.Second
	)
	ctx := context.Background()
	c, err := local.Start(ctx, filepath.Join(b.TempDir(), "cluster"), localtest.Options(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop(ctx)
	httpClient, apiMetrics := apiserverMetrics(b, c)
	// Let the controller-manager and scheduler open all their watches first,
	// so the difference below is the hollow nodes' alone.
	time.Sleep(settle)
	watchesBefore := sumMetric(b, httpClient, apiMetrics, "apiserver_longrunning_requests", map[string]string{"verb": "WATCH"})

	startNodes := time.Now()
	nodes, err := c.StartNodes(ctx, nodeCount, local.NodeOptions{Group: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer nodes.Stop()
	if err := local.WaitNodesReady(ctx, c.Client, local.HollowLabel+"=bench", nodeCount, nil); err != nil {
		b.Fatal(err)
	}
	readyAfter := time.Since(startNodes).Seconds()
	time.Sleep(settle)

	watchesAfter := sumMetric(b, httpClient, apiMetrics, "apiserver_longrunning_requests", map[string]string{"verb": "WATCH"})
	// Kubelets' requests fall under the flow schemas system-node-high
	// (leases, node status) and system-nodes (everything else).
	nodeRequests := func() float64 {
		return sumMetric(b, httpClient, apiMetrics, "apiserver_flowcontrol_dispatched_requests_total", map[string]string{"flow_schema": "system-node-high"}) +
			sumMetric(b, httpClient, apiMetrics, "apiserver_flowcontrol_dispatched_requests_total", map[string]string{"flow_schema": "system-nodes"})
	}
	endpoints, err := c.Endpoints()
	if err != nil {
		b.Fatal(err)
	}
	pids := map[string]int{}
	for name, ep := range endpoints {
		pids[name] = ep.PID
	}
	for _, p := range nodes.Processes {
		pids["node/"+p.Node] = p.PID
	}
	first := map[string]procstat.Sample{}
	for name, pid := range pids {
		if first[name], err = procstat.Read(pid); err != nil {
			b.Fatal(err)
		}
	}
	req0 := nodeRequests()
	time.Sleep(window)
	req1 := nodeRequests()

	var nodeCores, nodeMiB []float64
	components := map[string]componentCost{}
	for name, pid := range pids {
		s, err := procstat.Read(pid)
		if err != nil {
			b.Fatal(err)
		}
		u := procstat.Between(first[name], s)
		mib := float64(u.RSS) / (1 << 20)
		if strings.HasPrefix(name, "node/") {
			nodeCores = append(nodeCores, u.Cores)
			nodeMiB = append(nodeMiB, mib)
			continue
		}
		components[name] = componentCost{Millicores: 1000 * u.Cores, RSSMiB: mib}
	}
	perNodeRPS := (req1 - req0) / window.Seconds() / nodeCount
	watchesPerNode := (watchesAfter - watchesBefore) / nodeCount
	b.ReportMetric(median(nodeMiB), "MiB/node")
	b.ReportMetric(1000*median(nodeCores), "millicores/node")
	b.ReportMetric(perNodeRPS, "req/s/node")
	b.ReportMetric(watchesPerNode, "watches/node")
	writeBench(b, "kubelet-morph-idle", kubeletMorphIdleResult{
		Nodes:                 nodeCount,
		NodesReadySeconds:     readyAfter,
		SettleSeconds:         settle.Seconds(),
		WindowSeconds:         window.Seconds(),
		PerNodeRSSMiB:         nodeMiB,
		PerNodeMillicores:     scale(nodeCores, 1000),
		MedianNodeRSSMiB:      median(nodeMiB),
		MedianNodeMillicores:  1000 * median(nodeCores),
		APIRequestsPerNodeSec: perNodeRPS,
		OpenWatchesPerNode:    watchesPerNode,
		ControlPlaneAt10Nodes: components,
	})
}

func scale(xs []float64, f float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}

// apiserverMetrics returns a client that may read the apiserver's /metrics,
// and its address.
func apiserverMetrics(b *testing.B, c *local.ControlPlane) (*http.Client, string) {
	b.Helper()
	return adminHTTPClient(b, c), c.State.Component(clusterdir.APIServer).MetricsURL
}

// adminHTTPClient returns a client with the cluster's admin credentials: it
// may read every component's /metrics and /debug/pprof.
func adminHTTPClient(b *testing.B, c *local.ControlPlane) *http.Client {
	b.Helper()
	client, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		b.Fatal(err)
	}
	return client
}

// sumMetric scrapes url and sums the samples of one metric whose labels
// include the given ones.
func sumMetric(b *testing.B, client *http.Client, url, name string, labels map[string]string) float64 {
	b.Helper()
	fams, err := localtest.Scrape(client, url)
	if err != nil {
		b.Fatal(err)
	}
	total := 0.0
	for _, m := range fams[name].GetMetric() {
		if !localtest.HasLabels(m, labels) {
			continue
		}
		switch {
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		}
	}
	return total
}
