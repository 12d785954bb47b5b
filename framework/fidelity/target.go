package fidelity

import (
	"context"
	"fmt"
	"strings"
)

// Kinds of hollow node a comparison runs on.
const (
	// Kubelet is the oracle: kubemark --morph=kubelet, one real kubelet per
	// node.
	Kubelet = "kubelet"
	// Fleet is kubemark --morph=fleet in its kubelet profile.
	Fleet = "fleet"
)

// Target is one group of hollow nodes of one kind.
type Target struct {
	Kind string
	// LabelKey=LabelValue selects the group's nodes; the workloads' pods
	// carry it as their node selector.
	LabelKey, LabelValue string
	// Nodes are the group's node names; the burst goes to the first.
	Nodes []string
	// Fail stops the named nodes as a kubelet cut off from the apiserver
	// stops: no lease renewals, no status writes. Recover lets them go on.
	Fail, Recover func(ctx context.Context, nodes []string) error
}

func (t *Target) validate() error {
	switch {
	case t.Kind == "":
		return fmt.Errorf("a target needs a kind")
	case t.LabelKey == "" || t.LabelValue == "":
		return fmt.Errorf("target %s: a node label is required", t.Kind)
	case len(t.Nodes) == 0:
		return fmt.Errorf("target %s: no nodes", t.Kind)
	case t.Fail == nil || t.Recover == nil:
		return fmt.Errorf("target %s: Fail and Recover are required", t.Kind)
	}
	return nil
}

// owns reports whether an audit user is one of the target's nodes.
func (t *Target) owns(user string) bool {
	name, ok := strings.CutPrefix(user, "system:node:")
	if !ok {
		return false
	}
	for _, n := range t.Nodes {
		if n == name {
			return true
		}
	}
	return false
}
