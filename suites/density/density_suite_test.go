package density

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kscale/kscale/controlplane"
	"github.com/kscale/kscale/framework/provider/local"
)

var (
	nodes       = flag.Int("nodes", 10, "hollow nodes to register (kubelet morph, one process each)")
	pods        = flag.Int("pods", 100, "replicas of the density Deployment")
	reportDir   = flag.String("report-dir", "", "folder for the cluster and its logs (default results/density-<time>)")
	keepCluster = flag.Bool("keep-cluster", false, "leave the cluster and hollow nodes running after the suite")
)

func TestDensity(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "density")
}

var (
	cluster   *local.Cluster
	hollow    *local.NodeGroup
	runID     = time.Now().UTC().Format("20060102-150405")
	timings   = map[string]time.Duration{}
	clusterAt string
)

var _ = BeforeSuite(func(ctx SpecContext) {
	Expect(*nodes).To(BeNumerically(">", 0), "--nodes must be > 0")
	Expect(*pods).To(BeNumerically(">=", 0), "--pods must be >= 0")
	if *reportDir == "" {
		*reportDir = filepath.Join("..", "..", "results", "density-"+runID)
	}
	abs, err := filepath.Abs(*reportDir)
	Expect(err).NotTo(HaveOccurred())
	*reportDir = abs
	clusterAt = filepath.Join(*reportDir, "cluster")

	opts := controlplane.DefaultOptions()
	opts.APIServerPort = 0
	opts.StopWithCaller = !*keepCluster
	start := time.Now()
	By("starting the local control plane in " + clusterAt)
	cluster, err = local.Start(ctx, clusterAt, opts, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	timings["control plane ready"] = time.Since(start)

	start = time.Now()
	By(fmt.Sprintf("registering %d kubelet-morph hollow nodes", *nodes))
	hollow, err = cluster.StartNodes(ctx, *nodes, local.NodeOptions{Group: "density"})
	Expect(err).NotTo(HaveOccurred())
	Expect(local.WaitNodesReady(ctx, cluster.Client, local.HollowLabel+"=density", *nodes, GinkgoWriter)).To(Succeed())
	timings["nodes ready"] = time.Since(start)
}, NodeTimeout(10*time.Minute))

var _ = AfterSuite(func(ctx SpecContext) {
	if *keepCluster || cluster == nil {
		if cluster != nil {
			fmt.Fprintf(GinkgoWriter, "cluster kept: export KUBECONFIG=%s\n", cluster.Dir.AdminKubeconfig())
		}
		return
	}
	if hollow != nil {
		Expect(hollow.Stop()).To(Succeed())
	}
	Expect(cluster.Stop(ctx)).To(Succeed())
}, NodeTimeout(3*time.Minute))

var _ = ReportAfterSuite("density summary", func(r Report) {
	fmt.Printf("\ndensity: %d hollow nodes, %d pods — %s\n", *nodes, *pods, verdict(r))
	for _, k := range []string{"control plane ready", "nodes ready", "pods created", "pods running"} {
		if d, ok := timings[k]; ok {
			fmt.Printf("  %-20s %8.1fs\n", k, d.Seconds())
		}
	}
	fmt.Printf("  report folder: %s\n", *reportDir)
})

func verdict(r Report) string {
	if r.SuiteSucceeded {
		return "PASS"
	}
	return "FAIL"
}

func nodeReadyCount(ctx context.Context) (int, error) {
	list, err := cluster.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: local.HollowLabel + "=density"})
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range list.Items {
		if local.NodeReady(&list.Items[i]) {
			n++
		}
	}
	return n, nil
}

func podPhases(list *v1.PodList) map[v1.PodPhase]int {
	phases := map[v1.PodPhase]int{}
	for _, p := range list.Items {
		phases[p.Status.Phase]++
	}
	return phases
}
