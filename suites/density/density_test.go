package density

import (
	"fmt"
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kscale/kscale/framework/progress"
)

var _ = Describe("density", Label("density"), Ordered, func() {
	var namespace string

	BeforeAll(func(ctx SpecContext) {
		ns, err := cluster.Client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{
			GenerateName: "density-",
			Labels:       map[string]string{"kscale.io/run-id": runID},
		}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		namespace = ns.Name
		DeferCleanup(func(ctx SpecContext) {
			Expect(cluster.Client.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{})).To(Succeed())
		})
	})

	It("runs a Deployment of --pods replicas to Running on the hollow nodes", func(ctx SpecContext) {
		labels := map[string]string{"app": "density", "kscale.io/run-id": runID}
		start := time.Now()
		_, err := cluster.Client.AppsV1().Deployments(namespace).Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "density", Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To(int32(*pods)),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: v1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: v1.PodSpec{Containers: []v1.Container{{
						Name:  "pause",
						Image: "registry.k8s.io/pause:3.10",
						Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
							v1.ResourceCPU:    resource.MustParse("1m"),
							v1.ResourceMemory: resource.MustParse("1Mi"),
						}},
					}}},
				},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		report := progress.New(GinkgoWriter, "pods running", *pods, 2*time.Second)
		var list *v1.PodList
		Eventually(func(g Gomega) {
			list, err = cluster.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			g.Expect(err).NotTo(HaveOccurred())
			if _, ok := timings["pods created"]; !ok && len(list.Items) == *pods {
				timings["pods created"] = time.Since(start)
			}
			phases := podPhases(list)
			report.Update(phases[v1.PodRunning])
			g.Expect(phases[v1.PodRunning]).To(Equal(*pods), "pod phases %v", phases)
		}).WithContext(ctx).WithTimeout(10 * time.Minute).WithPolling(time.Second).Should(Succeed())
		timings["pods running"] = time.Since(start)

		ready, err := nodeReadyCount(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(ready).To(Equal(*nodes), "hollow nodes Ready after the load")
		fmt.Fprintf(GinkgoWriter, "create→running per pod: %s\n", startupSummary(list))
	})
})

// startupSummary gives the p50/p90/p99 (nearest rank) of the time from pod
// creation to its Ready condition, as the apiserver recorded them (seconds
// resolution) — an interim figure until the PodStartupLatency measurement.
func startupSummary(list *v1.PodList) string {
	var d []time.Duration
	for _, p := range list.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodReady && c.Status == v1.ConditionTrue {
				d = append(d, c.LastTransitionTime.Sub(p.CreationTimestamp.Time))
			}
		}
	}
	if len(d) == 0 {
		return "no ready pods"
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	rank := func(q float64) time.Duration {
		i := int(q*float64(len(d))+0.999999) - 1
		return d[max(0, min(i, len(d)-1))]
	}
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  (n=%d)", rank(0.5), rank(0.9), rank(0.99), len(d))
}
