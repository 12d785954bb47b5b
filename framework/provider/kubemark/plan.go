package kubemark

import (
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kscale/kscale/framework/provider"
)

// layout is how the run's nodes split into hollow-node pods. The pods of a
// Deployment are alike, so every fleet pod runs the same number of nodes:
// as many pods as --nodes-per-fleet needs, the nodes spread evenly over
// them. 250 nodes at 100 per fleet are 3 pods of 84 (252 nodes): never more
// than one node per pod above --nodes.
type layout struct {
	Pods        int
	NodesPerPod int
}

func newLayout(hollow string, nodes, nodesPerFleet int) layout {
	if hollow == provider.HollowKubelet || nodes <= 0 {
		return layout{Pods: max(nodes, 0), NodesPerPod: 1}
	}
	pods := ceilDiv(nodes, nodesPerFleet)
	return layout{Pods: pods, NodesPerPod: ceilDiv(nodes, pods)}
}

// Nodes is the count of hollow nodes the pods run.
func (l layout) Nodes() int { return l.Pods * l.NodesPerPod }

// nodeSteps are the node counts the scale-up stops at to wait for Ready
// nodes, as the seed runbook went 1000 → 3000 → 5000: then every 5000 more,
// and the last step is all the nodes.
func nodeSteps(nodes int) []int {
	var steps []int
	for _, s := range []int{1000, 3000, 5000} {
		if s >= nodes {
			break
		}
		steps = append(steps, s)
	}
	for s := 10000; s < nodes; s += 5000 {
		steps = append(steps, s)
	}
	return append(steps, nodes)
}

// replicaSteps are the Deployment's replica counts of the scale-up: the node
// steps in pods, rounded up, each larger than the one before.
func (l layout) replicaSteps() []int {
	if l.Pods == 0 {
		return nil
	}
	var out []int
	for _, n := range nodeSteps(l.Nodes()) {
		r := min(ceilDiv(n, l.NodesPerPod), l.Pods)
		if len(out) == 0 || r > out[len(out)-1] {
			out = append(out, r)
		}
	}
	return out
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Needs is what a run's hollow-node pods ask of the root cluster.
type Needs struct {
	Hollow            string
	Pods, NodesPerPod int
	// CPU and Memory are the pods' requests in all.
	CPU, Memory resource.Quantity
	// ScaleSteps is how many times the provider waits for nodes.
	ScaleSteps int
}

// NeedsOf is what nodes hollow nodes of a layout ask of the root cluster.
func NeedsOf(hollow string, nodes, nodesPerFleet int) Needs {
	if nodesPerFleet <= 0 {
		nodesPerFleet = provider.DefaultNodesPerFleet
	}
	l := newLayout(hollow, nodes, nodesPerFleet)
	n := Needs{Hollow: hollow, Pods: l.Pods, NodesPerPod: l.NodesPerPod, ScaleSteps: len(l.replicaSteps())}
	var per []Resources
	if hollow == provider.HollowKubelet {
		per = kubeletRequests()
	} else {
		per = []Resources{fleetRequests(l.NodesPerPod)}
	}
	cpu, mem := resource.Quantity{}, resource.Quantity{}
	for _, r := range per {
		cpu.Add(resource.MustParse(r.CPU))
		mem.Add(resource.MustParse(r.Memory))
	}
	n.CPU = *resource.NewMilliQuantity(cpu.MilliValue()*int64(l.Pods), resource.DecimalSI)
	n.Memory = *resource.NewQuantity(mem.Value()*int64(l.Pods), resource.BinarySI)
	return n
}

// RootNodes is how many root nodes of cores CPUs, memory bytes and maxPods
// pods the needs take, by requests.
func (n Needs) RootNodes(cores int64, memory int64, maxPods int) int {
	byCPU := ceilDiv64(n.CPU.MilliValue(), cores*1000)
	byMem := ceilDiv64(n.Memory.Value(), memory)
	byPods := int64(ceilDiv(n.Pods, max(1, maxPods)))
	return int(max(byCPU, byMem, byPods, 1))
}

func ceilDiv64(a, b int64) int64 { return (a + b - 1) / b }
