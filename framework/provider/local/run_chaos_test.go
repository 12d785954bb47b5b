package local

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestChaosMonkeyFailsFleetNodes runs a config with chaosMonkey.nodeFailure
// through `kscale run --fleet`: the fleet stops the chosen nodes'
// heartbeats, the node lifecycle controller marks them NotReady
// (NodeHealthTracker counts at least one round of ceil(2 % of 203) = 5),
// and every node is Ready again after the run. Without --fleet the run
// refuses to start (exit 2). Its file sorts after the fleet tests so that
// the shared fleet is started by them, after the apiserver restart test:
// they count the fleet's lease renewal errors since it started.
func TestChaosMonkeyFailsFleetNodes(t *testing.T) {
	c, f := sharedFleet(t)
	_, morph := sharedCluster(t)
	excluded := strings.Join(morph.Names, ",")
	args := []string{"run", "--testconfig", "testdata/chaos/config.yaml", "--kubeconfig", c.Dir.AdminKubeconfig(), "--nodes=200"}

	refused := runBinary(t, "kscale", []string{"CL2_PREFIX=chaos-refused", "CL2_EXCLUDED=" + excluded}, args...)
	assertBadInput(t, refused, "--fleet")

	reports := t.TempDir()
	r := runBinary(t, "kscale", []string{"CL2_PREFIX=chaos", "CL2_EXCLUDED=" + excluded},
		append(args, "--fleet", f.Endpoint, "--report-dir", reports)...)
	t.Logf("kscale run: exit %d\n%s", r.code, r.stdout)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	health := perfDataOf(t, reports, "NodeHealthTracker_NodeHealth", "chaos-it")
	if n := health.DataItems[0].Data["NotReadyTransitions"]; n < 5 {
		t.Errorf("NotReady transitions %v, want at least 5", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: HollowLabel + "=fleet"})
		if err != nil {
			return false, nil
		}
		for i := range nodes.Items {
			if !NodeReady(&nodes.Items[i]) {
				return false, nil
			}
		}
		return len(nodes.Items) == fleetNodes, nil
	})
	if err != nil {
		t.Fatalf("fleet nodes not all Ready again after the run: %v", err)
	}
}
