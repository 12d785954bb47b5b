package bench

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kscale/kscale/controlplane"
	"github.com/kscale/kscale/framework/provider/local"
	"github.com/kscale/kscale/framework/provider/local/localtest"
	"github.com/kscale/kscale/measurements"
)

// BenchmarkPrometheusCrossCheck100 starts a cluster with its Prometheus and
// 100 fleet nodes, runs localtest.BothWays with 10 pods per node, and
// records how kscale's own numbers and Prometheus' compare: per quantile,
// how many API call items agree within 5 % or one bucket and the largest
// relative difference; the bindings each side counted; the scheduling
// throughput each computes.
func BenchmarkPrometheusCrossCheck100(b *testing.B) {
	const nodes, podsPerNode, lists = 100, 10, 200
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	o := controlplane.DefaultOptions()
	o.Prometheus = true
	c := startBenchCluster(b, o)
	f, err := c.StartFleet(ctx, local.FleetOptions{Group: "fleet", Nodes: nodes})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Stop() })
	if err := local.WaitNodesReady(ctx, c.Client, local.HollowLabel+"=fleet", nodes, nil); err != nil {
		b.Fatal(err)
	}
	ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "crosscheck-"}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	byName, err := localtest.BothWays{
		Client: c.Client, Config: c.Config, PrometheusURL: c.PrometheusURL(),
		Namespace: ns.Name, NodeSelector: map[string]string{local.HollowLabel: "fleet"},
		Pods: nodes * podsPerNode, Lists: lists,
	}.Measure(ctx)
	if err != nil {
		b.Fatal(err)
	}
	api := byName["APIResponsivenessPrometheus"]
	if api.CrossCheck == nil || api.CrossCheck.Note != "" {
		b.Fatalf("no cross-check of API call latency: %+v", api.CrossCheck)
	}
	rows, _ := localtest.ComparedRows(api)
	res := prometheusCrossCheckResult{
		Nodes: nodes, Pods: nodes * podsPerNode, MinCalls: localtest.MinCalls,
		Quantiles: map[string]*quantileAgreement{},
		Items:     len(api.PerfData.DataItems), ItemsOnOneSideOnly: len(api.CrossCheck.Missing),
	}
	for _, r := range rows {
		q := res.Quantiles[r.What]
		if q == nil {
			q = &quantileAgreement{}
			res.Quantiles[r.What] = q
		}
		q.Compared++
		if r.Agree {
			q.Agree++
		}
		if larger := math.Max(r.Value, r.Other); larger > 0 {
			q.MaxRelativeDiff = math.Max(q.MaxRelativeDiff, math.Abs(r.Value-r.Other)/larger)
		}
	}
	direct, prom := byName["SchedulingThroughput"], byName["SchedulingThroughputPrometheus"]
	res.ScheduledPods, res.PrometheusBindings = direct.Headline["scheduled pods"], prom.Headline["bindings"]
	res.ThroughputMax, res.PrometheusThroughputMax = direct.Headline["max pods/s"], prom.Headline["max pods/s"]
	res.GenericQueryBindings = byName["GenericPrometheusQuery bindings"].Headline["Bindings"]
	for name, s := range byName {
		if s.Verdict != measurements.Pass {
			b.Errorf("%s: %s %s", name, s.Verdict, s.Reason)
		}
	}
	writeBench(b, "prometheus-crosscheck-100", res)
	for what, q := range res.Quantiles {
		b.ReportMetric(float64(q.Agree)/float64(q.Compared), "agree-"+strings.ReplaceAll(what, " ", "-"))
	}
	b.ReportMetric(res.PrometheusThroughputMax/res.ThroughputMax, "throughput-ratio")
}
