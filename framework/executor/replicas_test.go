package executor

import (
	"reflect"
	"strings"
	"testing"
)

func TestPlanIndices(t *testing.T) {
	for _, tc := range []struct {
		name             string
		current, desired int
		verb             verb
		indices          []int
	}{
		{"create from nothing", 0, 3, create, []int{0, 1, 2}},
		{"create the missing", 2, 5, create, []int{2, 3, 4}},
		{"delete the surplus", 5, 2, remove, []int{2, 3, 4}},
		{"delete all", 3, 0, remove, []int{0, 1, 2}},
		{"equal: patch every object", 3, 3, patch, []int{0, 1, 2}},
		{"nothing at all", 0, 0, patch, []int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, idx := planIndices(tc.current, tc.desired)
			if v != tc.verb || !reflect.DeepEqual(idx, tc.indices) {
				t.Fatalf("got %v %v, want %v %v", v, idx, tc.verb, tc.indices)
			}
		})
	}
}

func TestBundleCurrent(t *testing.T) {
	state := newReplicaState()
	dep := objectStream{"ns-1", "app", "apps", "Deployment"}
	cm := objectStream{"ns-1", "app", "", "ConfigMap"}
	state.set(dep, 4)
	state.set(cm, 4)
	if n, err := bundleCurrent(state, []objectStream{dep, cm}); err != nil || n != 4 {
		t.Fatalf("agreeing bundle: %d, %v", n, err)
	}
	state.set(cm, 2)
	_, err := bundleCurrent(state, []objectStream{dep, cm})
	if err == nil || !strings.Contains(err.Error(), "Deployment.apps ns-1/app-* has 4, ConfigMap ns-1/app-* has 2") {
		t.Fatalf("disagreeing bundle: %v", err)
	}
	state.set(dep, 0)
	if _, ok := state.counts[dep]; ok {
		t.Fatal("a stream scaled to zero is still remembered")
	}
}
