package fidelity

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kscale/kscale/controlplane"
	"github.com/kscale/kscale/framework/provider/local"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestReactionProbe(t *testing.T) {
	ctx := context.Background()
	dir := "/tmp/probe"
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o755)
	policy := filepath.Join(dir, "audit-policy.yaml")
	os.WriteFile(policy, []byte(AuditPolicy), 0o644)
	o := controlplane.DefaultOptions()
	o.APIServerPort = 0
	o.EtcdUnsafeNoFsync = true
	o.StopWithCaller = true
	o.APIServerArgs = []string{"--audit-policy-file=" + policy, "--audit-log-path=" + filepath.Join(dir, "audit.log")}
	cp, err := local.Start(ctx, filepath.Join(dir, "cluster"), o, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop(ctx)
	g, err := cp.StartNodes(ctx, 3, local.NodeOptions{Group: Kubelet, NamePrefix: "kubelet-", ControlPlanePriority: true, ExtraArgs: []string{"--v=4"}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Stop()
	fl, err := cp.StartFleet(ctx, local.FleetOptions{Group: Fleet, Nodes: 3, NamePrefix: "fleet-", ControlPlanePriority: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Stop()
	if err := local.WaitNodesReady(ctx, cp.Client, local.HollowLabel, 6, os.Stderr); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Second)
	for i := 0; i < 30; i++ {
		ns := fmt.Sprintf("probe-%d", i%6)
		if i < 6 {
			cp.Client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			time.Sleep(2 * time.Second)
		}
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i)}, Spec: v1.PodSpec{
			Tolerations: []v1.Toleration{{Operator: v1.TolerationOpExists}},
			Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("10m")}}}}}}
		if _, err := cp.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(10 * time.Second)
}
