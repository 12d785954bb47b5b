package local

import "fmt"

// Sizing is the default size of a local run for the machine it runs on.
// The control plane, the hollow nodes and the test share the machine's
// cores, and a density run's bursts — the controller-manager creating or
// deleting pods as fast as its client QPS lets it, each pod then written by
// the scheduler and a kubelet-like node — saturate two cores at the
// classic settings (controller-manager QPS 100, 30 pods per node): the API
// call SLO then measures the machine, not Kubernetes. Below the cores the
// classic settings need, both scale with the cores.
type Sizing struct {
	Cores int
	// ControllerManagerQPS is the controller-manager's client QPS and
	// burst: 20 per core, the classic 100 from 5 cores.
	ControllerManagerQPS int
	// PodsPerNode is the density and load configs' PODS_PER_NODE: 5 per
	// core, the classic 30 from 6 cores.
	PodsPerNode int
}

// SizeFor is the sizing of a machine with cores cores.
func SizeFor(cores int) Sizing {
	cores = max(1, cores)
	return Sizing{Cores: cores, ControllerManagerQPS: min(100, 20*cores), PodsPerNode: min(30, 5*cores)}
}

// Classic reports whether the sizing is the classic one.
func (s Sizing) Classic() bool { return s.ControllerManagerQPS == 100 && s.PodsPerNode == 30 }

func (s Sizing) String() string {
	if s.Classic() {
		return fmt.Sprintf("local run sized for %d cores: the classic controller-manager QPS 100 and 30 pods per node", s.Cores)
	}
	return fmt.Sprintf("local run sized for %d cores: controller-manager QPS %d (20 per core), %d pods per node (5 per core); "+
		"--controller-manager-qps=100 --pods-per-node=30 for the classic run", s.Cores, s.ControllerManagerQPS, s.PodsPerNode)
}

// What the local provider holds per core of the machine. At 1000 nodes and
// 30 pods per node on 2 cores (15 500 pods a core) the control plane and
// the fleet needed more than the machine's cores and the API call SLO
// measured the machine (docs/benchmarks.md); 100 nodes of 10 pods pass
// with room to spare. The rule keeps a local run under half of the size
// that failed.
const (
	NodesPerCore = 1000
	PodsPerCore  = 6000
)

// Holds says why a run of nodes nodes and pods pods at once does not fit
// the machine, or nil when it does.
func (s Sizing) Holds(nodes, pods int) error {
	maxNodes, maxPods := NodesPerCore*s.Cores, PodsPerCore*s.Cores
	if nodes <= maxNodes && pods <= maxPods {
		return nil
	}
	return fmt.Errorf("%d nodes and %d pods do not fit this %d-core machine: the local provider holds at most %d nodes and %d pods here "+
		"(%d nodes and %d pods a core; beyond that the machine, not Kubernetes, decides the SLOs). "+
		"Run this size on real machines with --provider=kubemark (docs/kubemark.md), or fewer --nodes or --pods-per-node here "+
		"(--beyond-machine runs it all the same, to measure the machine)",
		nodes, pods, s.Cores, maxNodes, maxPods, NodesPerCore, PodsPerCore)
}
