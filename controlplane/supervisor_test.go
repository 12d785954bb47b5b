package controlplane

import (
	"fmt"
	"github.com/kscale/kscale/controlplane/clusterdir"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStartGroupsFollowDependencies(t *testing.T) {
	for _, tc := range []struct {
		prometheus bool
		want       string
	}{
		{false, "[[etcd] [kube-apiserver] [kube-controller-manager kube-scheduler]]"},
		{true, "[[etcd] [kube-apiserver] [kube-controller-manager kube-scheduler prometheus]]"},
	} {
		o := &Options{Prometheus: tc.prometheus}
		if got := fmt.Sprint(startGroups(o.components())); got != tc.want {
			t.Errorf("prometheus %v: start groups = %s, want %s", tc.prometheus, got, tc.want)
		}
	}
}

// A component whose hold file exists is not restarted, however long it has
// been due, and stays due; the supervisor looks again soon.
func TestHeldComponentIsNotRestarted(t *testing.T) {
	dir := clusterdir.Dir(t.TempDir())
	hold := dir.HoldFile(clusterdir.APIServer)
	if err := os.MkdirAll(filepath.Dir(hold), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := &supervisor{dir: dir, opts: &Options{}, state: &clusterdir.State{}, procs: map[string]*process{}}
	for _, name := range clusterdir.Components {
		s.state.Components = append(s.state.Components, clusterdir.Component{Name: name, Ready: name == clusterdir.Etcd})
	}
	due := map[string]time.Time{clusterdir.APIServer: time.Now().Add(-time.Minute)}
	next := s.restartDue(due, func(name string, _ *process) { t.Errorf("%s launched while held", name) })
	if _, still := due[clusterdir.APIServer]; !still || next != holdPoll {
		t.Errorf("held apiserver: due %v, next check in %v; want still due, %v", due, next, holdPoll)
	}
	if s.state.Component(clusterdir.APIServer).Restarts != 0 {
		t.Error("a held component counted a restart")
	}
}
