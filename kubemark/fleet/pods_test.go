package fleet

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testFleet builds a fleet without starting it (nothing talks to a server).
func testFleet(t *testing.T, modify func(*Config)) *Fleet {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	data := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
	if err := os.WriteFile(kubeconfig, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.KubeconfigPath = kubeconfig
	cfg.Nodes = 3
	cfg.CPU = resource.MustParse("2")
	cfg.Memory = resource.MustParse("1124Mi") // 1Gi allocatable after the 100Mi eviction threshold
	cfg.MaxPods = 3
	if modify != nil {
		modify(&cfg)
	}
	f, err := New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func container(cpu, mem string) v1.Container {
	return v1.Container{Name: "c", Image: "img", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem),
	}}}
}

func TestPodRequests(t *testing.T) {
	tests := []struct {
		name string
		spec v1.PodSpec
		want usage
	}{
		{"one container", v1.PodSpec{Containers: []v1.Container{container("100m", "10Mi")}}, usage{100, 10 << 20, 1}},
		{"sum of containers", v1.PodSpec{Containers: []v1.Container{container("100m", "10Mi"), container("200m", "20Mi")}}, usage{300, 30 << 20, 1}},
		{"init larger than sum", v1.PodSpec{
			InitContainers: []v1.Container{container("1", "1Mi")},
			Containers:     []v1.Container{container("100m", "10Mi")},
		}, usage{1000, 10 << 20, 1}},
		{"overhead added", v1.PodSpec{
			Containers: []v1.Container{container("100m", "10Mi")},
			Overhead:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("50m")},
		}, usage{150, 10 << 20, 1}},
		{"no requests", v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}, usage{0, 0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := podRequests(&v1.Pod{Spec: tt.spec}); got != tt.want {
				t.Errorf("podRequests = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAdmitLikeTheKubelet(t *testing.T) {
	f := testFleet(t, nil)
	n := f.nodes[0]
	tests := []struct {
		name   string
		used   usage
		req    usage
		reason string
	}{
		{"fits", usage{1000, 512 << 20, 1}, usage{1000, 512 << 20, 1}, ""},
		{"cpu", usage{1500, 0, 1}, usage{600, 0, 1}, "OutOfcpu"},
		{"memory", usage{0, 1000 << 20, 1}, usage{0, 100 << 20, 1}, "OutOfmemory"},
		{"pods", usage{0, 0, 3}, usage{0, 0, 1}, "OutOfpods"},
		{"zero request always fits resources", usage{2000, 1 << 30, 1}, usage{0, 0, 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n.used = tt.used
			reason, msg := n.admit(tt.req)
			if reason != tt.reason {
				t.Errorf("reason = %q (%s), want %q", reason, msg, tt.reason)
			}
		})
	}
}

func TestPodIPsAreUniqueAndInsideThePodCIDR(t *testing.T) {
	f := testFleet(t, nil)
	n := f.nodes[1]
	_, cidr, _ := net.ParseCIDR("10.64.3.0/24")
	n.podCIDR = cidr
	seen := map[uint32]bool{}
	for range 253 {
		ip := n.allocateIP()
		if ip == 0 {
			t.Fatal("ran out of addresses before the /24 was full")
		}
		if seen[ip] || !cidr.Contains(uintToIP(ip)) {
			t.Fatalf("address %s repeated or outside %s", uintToIP(ip), cidr)
		}
		seen[ip] = true
	}
	if ip := n.allocateIP(); ip != 0 {
		t.Errorf("allocated %s from a full /24", uintToIP(ip))
	}

	// Without a podCIDR, each node gets its own /24 of the fallback range.
	a, b := f.nodes[0], f.nodes[2]
	ipA, ipB := uintToIP(a.allocateIP()), uintToIP(b.allocateIP())
	if ipA.Mask(net.CIDRMask(24, 32)).Equal(ipB.Mask(net.CIDRMask(24, 32))) {
		t.Errorf("nodes 0 and 2 share a fallback /24: %s, %s", ipA, ipB)
	}
}

func TestRunningPodStatus(t *testing.T) {
	f := testFleet(t, nil)
	n := f.nodes[0]
	p := &pod{
		uid: "u1", namespace: "ns", name: "p", phase: podRunning,
		containers:     []containerInfo{{"app", "img:1"}},
		initContainers: []containerInfo{{"init", "img:0"}},
		ip:             ipToUint(net.ParseIP("10.64.0.5")),
		startTime:      time.Now().Add(-time.Second),
		runningSince:   time.Now(),
	}
	patch, err := statusPatch(n.podStatus(p, v1.PodRunning), p.uid)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
		Status   v1.PodStatus      `json:"status"`
	}
	if err := json.Unmarshal(patch, &got); err != nil {
		t.Fatal(err)
	}
	s := got.Status
	if got.Metadata.UID != "u1" {
		t.Errorf("patch lacks the UID precondition: %s", patch)
	}
	if s.Phase != v1.PodRunning || s.PodIP != "10.64.0.5" || s.HostIP != n.ip.String() || s.StartTime == nil {
		t.Errorf("phase %s podIP %s hostIP %s startTime %v", s.Phase, s.PodIP, s.HostIP, s.StartTime)
	}
	want := map[v1.PodConditionType]v1.ConditionStatus{
		v1.PodReadyToStartContainers: v1.ConditionTrue, v1.PodInitialized: v1.ConditionTrue,
		v1.ContainersReady: v1.ConditionTrue, v1.PodReady: v1.ConditionTrue,
	}
	for _, c := range s.Conditions {
		if want[c.Type] != c.Status {
			t.Errorf("condition %s = %s", c.Type, c.Status)
		}
		delete(want, c.Type)
	}
	if len(want) > 0 {
		t.Errorf("conditions missing: %v", want)
	}
	for _, c := range s.Conditions {
		if c.Type == v1.PodScheduled {
			t.Error("the patch must leave PodScheduled to the scheduler")
		}
	}
	cs := s.ContainerStatuses[0]
	if cs.State.Running == nil || !cs.Ready || cs.Started == nil || !*cs.Started || cs.ContainerID == "" {
		t.Errorf("container status %+v", cs)
	}
	ics := s.InitContainerStatuses[0]
	if ics.State.Terminated == nil || ics.State.Terminated.ExitCode != 0 || ics.State.Terminated.Reason != "Completed" {
		t.Errorf("init container status %+v", ics)
	}
}

func TestNodeObject(t *testing.T) {
	f := testFleet(t, func(c *Config) {
		c.StartIndex = 10
		c.NodeLabels = map[string]string{"pool": "a"}
		c.RegisterWithTaints = []v1.Taint{{Key: "k", Value: "v", Effect: v1.TaintEffectNoSchedule}}
	})
	seenIPs := map[string]bool{}
	for i, n := range f.nodes {
		obj := n.nodeObject()
		if obj.Name != "hollow-node-"+string(rune('0'+1))+string(rune('0'+i)) {
			t.Errorf("name %s", obj.Name)
		}
		l := obj.Labels
		if l["kubernetes.io/hostname"] != obj.Name || l["pool"] != "a" || l["topology.kubernetes.io/zone"] == "" || l[FleetLabel] != "hollow-node" {
			t.Errorf("labels %v", l)
		}
		if obj.Spec.ProviderID != "kubemark://"+obj.Name || len(obj.Spec.Taints) != 1 {
			t.Errorf("spec %+v", obj.Spec)
		}
		if obj.Status.NodeInfo.KubeletVersion != "v1.37.2" || obj.Status.Allocatable.Pods().Value() != 3 {
			t.Errorf("status %+v", obj.Status.NodeInfo)
		}
		ip := obj.Status.Addresses[0].Address
		if seenIPs[ip] {
			t.Errorf("InternalIP %s repeated", ip)
		}
		seenIPs[ip] = true
	}
	if z0, z1 := f.nodes[0].zone, f.nodes[1].zone; z0 == z1 {
		t.Errorf("zones not spread: %s %s", z0, z1)
	}
}

func TestPickNodesSpreadsEvenly(t *testing.T) {
	f := testFleet(t, func(c *Config) { c.Nodes = 200 })
	picked := f.pickNodes(0.1)
	if len(picked) != 20 {
		t.Fatalf("picked %d of 200 for 10%%", len(picked))
	}
	seen := map[string]bool{}
	for _, n := range picked {
		if seen[n.name] {
			t.Fatalf("%s picked twice", n.name)
		}
		seen[n.name] = true
	}
	if len(f.pickNodes(0)) != 0 || len(f.pickNodes(1)) != 200 {
		t.Error("fractions 0 and 1 pick none and all")
	}
}
