// Package runplan says what a run will be before it starts: its estimated
// duration, the size of the control plane, whether the local provider's
// machine holds it, and what the kubemark provider's hollow-node pods ask
// of a root cluster in each layout. The suites print it at their start and
// refuse what cannot work (a local run too big for the machine, a deadline
// shorter than the run); `kscale plan` prints it alone.
package runplan

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kscale/kscale/framework/config"
	"github.com/kscale/kscale/framework/estimate"
	"github.com/kscale/kscale/framework/provider"
	"github.com/kscale/kscale/framework/provider/kubemark"
	"github.com/kscale/kscale/framework/provider/local"
)

// RootMachine is the root-cluster machine the plan counts in: the seed
// runbook's VMs (16 cores, 32 GiB), at the kubelet's default maxPods.
var RootMachine = struct {
	Cores, MemoryGiB int64
	MaxPods          int
}{16, 32, 110}

// Input is what a plan is made from.
type Input struct {
	Config   *config.Compiled
	Provider string
	Hollow   string
	Nodes    int
	// NodesPerFleet is the kubemark and local providers' fleet size.
	NodesPerFleet int
	// Sizing is the local provider's sizing for the machine (local only).
	Sizing local.Sizing
}

// Plan is a run's plan.
type Plan struct {
	Input
	Estimate *estimate.Estimate
	// ControllerManagerQPS is the pace the estimate assumes.
	ControllerManagerQPS int
	// LocalRefusal says why the machine cannot hold the run on the local
	// provider; nil when it can (or the provider is another).
	LocalRefusal error
	// Fleet and Kubelet are what each layout asks of a root cluster.
	Fleet, Kubelet kubemark.Needs
}

// Make makes the plan.
func Make(in Input) *Plan {
	p := &Plan{Input: in, ControllerManagerQPS: 100}
	provisioned, steps := 0, 1
	switch in.Provider {
	case "local":
		p.ControllerManagerQPS = in.Sizing.ControllerManagerQPS
		provisioned = in.Nodes
	case "kubemark":
		provisioned = in.Nodes
	}
	p.Fleet = kubemark.NeedsOf(provider.HollowFleet, in.Nodes, in.NodesPerFleet)
	p.Kubelet = kubemark.NeedsOf(provider.HollowKubelet, in.Nodes, in.NodesPerFleet)
	if in.Provider == "kubemark" {
		steps = p.needs().ScaleSteps
	}
	p.Estimate = estimate.Of(in.Config.Config, estimate.Inputs{Provisioned: provisioned, ControllerManagerQPS: float64(p.ControllerManagerQPS), ScaleSteps: steps})
	if in.Provider == "local" {
		p.LocalRefusal = in.Sizing.Holds(in.Nodes, p.Estimate.Pods)
	}
	return p
}

func (p *Plan) needs() kubemark.Needs {
	if p.Hollow == provider.HollowKubelet {
		return p.Kubelet
	}
	return p.Fleet
}

// CheckDeadline refuses a deadline shorter than the estimate, naming the
// flag and the value that would do.
func (p *Plan) CheckDeadline(deadline time.Duration, flag string) error {
	return CheckDeadline(p.Estimate.Total(), deadline, flag)
}

// CheckDeadline refuses a deadline (set by flag; 0 for none) shorter than a
// run estimated to take total, naming the value of flag that would do.
func CheckDeadline(total, deadline time.Duration, flag string) error {
	if deadline <= 0 || total <= deadline {
		return nil
	}
	return fmt.Errorf("the run takes about %s and %s is %s: run again with %s=%s",
		estimate.Round(total), flag, deadline, flag, estimate.TimeoutFor(total))
}

// Print writes the plan for people.
func (p *Plan) Print(w io.Writer, all bool) {
	c := p.Config
	fmt.Fprintf(w, "plan: %s at %d nodes, %s provider", c.Config.Name, p.Nodes, p.Provider)
	if p.Provider != "existing" {
		fmt.Fprintf(w, ", %s hollow nodes", p.Hollow)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  parameters: %s\n", parameters(c.Mapping))
	switch p.Provider {
	case "local":
		fmt.Fprintf(w, "  control plane: local, controller-manager QPS %d\n", p.ControllerManagerQPS)
		if p.LocalRefusal != nil {
			fmt.Fprintf(w, "  this machine: refused: %v\n", p.LocalRefusal)
		} else {
			fmt.Fprintf(w, "  this machine: holds it (at most %d nodes and %d pods on %d cores)\n", local.NodesPerCore*p.Sizing.Cores, local.PodsPerCore*p.Sizing.Cores, p.Sizing.Cores)
		}
	default:
		fmt.Fprintf(w, "  control plane: the cluster's own; the estimate assumes controller-manager QPS %d\n", p.ControllerManagerQPS)
	}
	if p.Provider == "kubemark" || all {
		for _, n := range []kubemark.Needs{p.Fleet, p.Kubelet} {
			mark := " "
			if p.Provider == "kubemark" && n.Hollow == p.Hollow {
				mark = "*"
			}
			fmt.Fprintf(w, " %s root cluster, %s layout: %d pods of %d nodes, requesting %s CPU and %s memory: %d root machines of %d cores, %d GiB, maxPods %d\n",
				mark, n.Hollow, n.Pods, n.NodesPerPod, n.CPU.String(), gib(n.Memory),
				n.RootNodes(RootMachine.Cores, RootMachine.MemoryGiB<<30, RootMachine.MaxPods), RootMachine.Cores, RootMachine.MemoryGiB, RootMachine.MaxPods)
		}
	}
	p.Estimate.Print(indent{w})
	fmt.Fprintf(w, "  a deadline of %s covers it (ginkgo --timeout)\n", p.Estimate.Timeout())
}

func gib(q resource.Quantity) string {
	return strconv.FormatFloat(float64(q.Value())/(1<<30), 'f', 1, 64) + "Gi"
}

// parameters are the config's run parameters (the overrides and what the
// suite set), sorted.
func parameters(m map[string]any) string {
	var out []string
	for k, v := range m {
		if k == "Nodes" || strings.HasPrefix(k, "CL2_") || k == "ImageRegistry" {
			continue
		}
		out = append(out, fmt.Sprintf("%s=%v", k, v))
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "the config's defaults"
	}
	return strings.Join(out, " ")
}

type indent struct{ w io.Writer }

func (i indent) Write(b []byte) (int, error) {
	lines := strings.SplitAfter(string(b), "\n")
	for _, l := range lines {
		if l == "" {
			continue
		}
		if _, err := io.WriteString(i.w, "  "+l); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}
