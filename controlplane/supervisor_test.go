package controlplane

import (
	"fmt"
	"testing"
)

func TestStartGroupsFollowDependencies(t *testing.T) {
	got := fmt.Sprint(startGroups())
	want := "[[etcd] [kube-apiserver] [kube-controller-manager kube-scheduler]]"
	if got != want {
		t.Errorf("start groups = %s, want %s", got, want)
	}
}
