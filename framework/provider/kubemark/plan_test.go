package kubemark

import (
	"reflect"
	"testing"

	"github.com/kscale/kscale/framework/provider"
)

func TestReplicaSteps(t *testing.T) {
	for _, tc := range []struct {
		hollow        string
		nodes, perPod int
		pods, per     int
		steps         []int
	}{
		{provider.HollowFleet, 5000, 1000, 5, 1000, []int{1, 3, 5}},
		{provider.HollowFleet, 5000, 100, 50, 100, []int{10, 30, 50}},
		{provider.HollowFleet, 250, 100, 3, 84, []int{3}},
		{provider.HollowFleet, 30, 10, 3, 10, []int{3}},
		{provider.HollowFleet, 1000, 1000, 1, 1000, []int{1}},
		{provider.HollowFleet, 1500, 1000, 2, 750, []int{2}},
		{provider.HollowFleet, 4000, 1000, 4, 1000, []int{1, 3, 4}},
		{provider.HollowFleet, 20000, 1000, 20, 1000, []int{1, 3, 5, 10, 15, 20}},
		{provider.HollowFleet, 12000, 500, 24, 500, []int{2, 6, 10, 20, 24}},
		{provider.HollowFleet, 7, 1000, 1, 7, []int{1}},
		{provider.HollowKubelet, 2500, 1000, 2500, 1, []int{1000, 2500}},
		{provider.HollowKubelet, 5000, 1000, 5000, 1, []int{1000, 3000, 5000}},
		{provider.HollowKubelet, 3, 1000, 3, 1, []int{3}},
	} {
		l := newLayout(tc.hollow, tc.nodes, tc.perPod)
		if l.Pods != tc.pods || l.NodesPerPod != tc.per {
			t.Errorf("%s %d nodes at %d per pod: %d pods × %d, want %d × %d", tc.hollow, tc.nodes, tc.perPod, l.Pods, l.NodesPerPod, tc.pods, tc.per)
		}
		if l.Nodes() < tc.nodes || l.Nodes()-tc.nodes >= max(l.Pods, 1) {
			t.Errorf("%s %d nodes at %d per pod: runs %d nodes", tc.hollow, tc.nodes, tc.perPod, l.Nodes())
		}
		if got := l.replicaSteps(); !reflect.DeepEqual(got, tc.steps) {
			t.Errorf("%s %d nodes at %d per pod: steps %v, want %v", tc.hollow, tc.nodes, tc.perPod, got, tc.steps)
		}
	}
}

func TestNodeSteps(t *testing.T) {
	for nodes, want := range map[int][]int{
		30:    {30},
		1000:  {1000},
		1001:  {1000, 1001},
		5000:  {1000, 3000, 5000},
		9000:  {1000, 3000, 5000, 9000},
		15000: {1000, 3000, 5000, 10000, 15000},
	} {
		if got := nodeSteps(nodes); !reflect.DeepEqual(got, want) {
			t.Errorf("nodeSteps(%d) = %v, want %v", nodes, got, want)
		}
	}
}
