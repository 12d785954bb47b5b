package suites_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kscale/kscale/framework/benchjson"
	"github.com/kscale/kscale/framework/provider/kubemark"
	"github.com/kscale/kscale/framework/report"
)

// kubemarkRootResult is what BenchmarkKubemarkRoot records in
// kubemark-root.json: what a hollow-node pod costs the root node that runs
// it, read from the pods' cgroups while a density run goes on.
type kubemarkRootResult struct {
	Layouts []layoutCost `json:"layouts"`
}

type layoutCost struct {
	Hollow      string `json:"hollow"`
	Pods        int    `json:"pods"`
	NodesPerPod int    `json:"nodesPerPod"`
	PodsPerNode int    `json:"podsPerNode"`
	// Verdict and Seconds are the density run's.
	Verdict report.Verdict `json:"verdict"`
	Seconds float64        `json:"seconds"`
	// PeakRSSMiB is the highest resident memory of one pod (its cgroup's
	// rss or anon) over the run; CPUCores a pod's CPU averaged over the
	// run, PeakCPUCores its highest over 10 s windows; the worst pod each.
	PeakRSSMiB   float64 `json:"peakRSSMiB"`
	CPUCores     float64 `json:"cpuCores"`
	PeakCPUCores float64 `json:"peakCPUCores"`
	// Per node: the pod's figures over its nodes.
	PeakRSSMiBPerNode float64 `json:"peakRSSMiBPerNode"`
	CPUCoresPerNode   float64 `json:"cpuCoresPerNode"`
	Samples           int     `json:"samples"`
}

// BenchmarkKubemarkRoot runs the density suite with the kubemark provider
// on a real root node (as TestKubemarkOnRealRoot does), once per layout —
// 100 fleet nodes in 2 pods, 5 kubelet-layout pods — and records what each
// hollow-node pod costs from its cgroup: the figures docs/kubemark.md sizes
// a root cluster with.
func BenchmarkKubemarkRoot(b *testing.B) {
	r := startRealRoot(b)
	var res kubemarkRootResult
	for _, l := range []struct {
		hollow            string
		nodes, perFleet   int
		pods, nodesPerPod int
	}{{"fleet", 100, 50, 2, 50}, {"kubelet", 5, 0, 5, 1}} {
		args := []string{"--provider=kubemark", "--hollow=" + l.hollow, fmt.Sprintf("--nodes=%d", l.nodes), "--pods-per-node=5",
			"--kubeconfig=" + r.test.Dir.AdminKubeconfig(), "--root-kubeconfig=" + r.root.Dir.AdminKubeconfig(),
			"--kubemark-image=" + r.image, "--kubemark-image-pull-policy=Never", "--testoverrides=../../configs/density/overrides/small.yaml"}
		if l.perFleet > 0 {
			args = append(args, fmt.Sprintf("--nodes-per-fleet=%d", l.perFleet))
		}
		start := time.Now()
		run := startSuiteArgs(b, args)
		cost := r.sampleCgroups(run)
		summary := run.passed(b, 15*time.Minute)
		cost.Hollow, cost.Pods, cost.NodesPerPod, cost.PodsPerNode = l.hollow, l.pods, l.nodesPerPod, 5
		cost.Verdict, cost.Seconds = summary.Verdict, time.Since(start).Seconds()
		cost.PeakRSSMiBPerNode = cost.PeakRSSMiB / float64(l.nodesPerPod)
		cost.CPUCoresPerNode = cost.CPUCores / float64(l.nodesPerPod)
		if cost.Samples == 0 {
			b.Fatalf("%s layout: no cgroup sample of a hollow-node pod", l.hollow)
		}
		res.Layouts = append(res.Layouts, cost)
	}
	path, err := benchjson.Write("kubemark-root", res)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("wrote %s: %+v", path, res)
}

type cgroupSample struct {
	at       time.Time
	rss, cpu float64 // bytes, seconds
}

// sampleCgroups reads every hollow-node pod's cgroup every 2 s until the
// run ends.
func (r *realRoot) sampleCgroups(run *suiteRun) layoutCost {
	series := map[string][]cgroupSample{}
	for {
		select {
		case <-run.done:
			return summarize(series)
		case <-time.After(2 * time.Second):
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		pods, err := r.root.Client.CoreV1().Pods(kubemark.DefaultNamespace).List(ctx, metav1.ListOptions{})
		cancel()
		if err != nil {
			continue
		}
		for _, pod := range pods.Items {
			if s, ok := readPodCgroup(string(pod.UID)); ok {
				series[string(pod.UID)] = append(series[string(pod.UID)], s)
			}
		}
	}
}

func summarize(series map[string][]cgroupSample) layoutCost {
	var c layoutCost
	for _, s := range series {
		c.Samples += len(s)
		for i, x := range s {
			c.PeakRSSMiB = max(c.PeakRSSMiB, x.rss/(1<<20))
			for j := i - 1; j >= 0; j-- {
				if dt := x.at.Sub(s[j].at).Seconds(); dt >= 10 {
					c.PeakCPUCores = max(c.PeakCPUCores, (x.cpu-s[j].cpu)/dt)
					break
				}
			}
		}
		if n := len(s); n > 1 {
			c.CPUCores = max(c.CPUCores, (s[n-1].cpu-s[0].cpu)/s[n-1].at.Sub(s[0].at).Seconds())
		}
	}
	return c
}

// readPodCgroup reads a pod's memory and CPU from its cgroup (cgroupfs
// driver, v1 or v2, any QoS class).
func readPodCgroup(uid string) (cgroupSample, bool) {
	s := cgroupSample{at: time.Now()}
	for _, qos := range []string{"burstable/", "besteffort/", ""} {
		pod := "kubepods/" + qos + "pod" + uid
		if v, ok := statField(filepath.Join("/sys/fs/cgroup/memory", pod, "memory.stat"), "total_rss"); ok {
			cpu, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/cpuacct", pod, "cpuacct.usage"))
			ns, err2 := strconv.ParseFloat(strings.TrimSpace(string(cpu)), 64)
			if err != nil || err2 != nil {
				return s, false
			}
			s.rss, s.cpu = v, ns/1e9
			return s, true
		}
		if v, ok := statField(filepath.Join("/sys/fs/cgroup", pod, "memory.stat"), "anon"); ok {
			usec, ok := statField(filepath.Join("/sys/fs/cgroup", pod, "cpu.stat"), "usage_usec")
			if !ok {
				return s, false
			}
			s.rss, s.cpu = v, usec/1e6
			return s, true
		}
	}
	return s, false
}

func statField(path, key string) (float64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, err := strconv.ParseFloat(v, 64)
			return n, err == nil
		}
	}
	return 0, false
}
