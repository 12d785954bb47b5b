package controlplane

import (
	"strings"
	"testing"

	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/framework/golden"
)

// TestComponentArgsGolden pins the command line of every component: a change
// of flags shows up in review as a change of testdata/<component>.args.
func TestComponentArgsGolden(t *testing.T) {
	o := DefaultOptions()
	o.EtcdPort, o.EtcdPeerPort, o.ControllerManagerPort, o.SchedulerPort = 2379, 2380, 10257, 10259
	o.SchedulerArgs = []string{"--v=2"}
	o.Prometheus, o.PrometheusPort = true, 9090
	dir := clusterdir.Dir("/cluster")
	for _, name := range o.components() {
		t.Run(name, func(t *testing.T) {
			args, err := componentArgs(dir, &o, name)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, name+".args", []byte(strings.Join(args, "\n")+"\n"))
		})
	}
	if _, err := componentArgs(dir, &o, "kube-proxy"); err == nil {
		t.Error("args for an unknown component")
	}
}

func TestUserArgsComeLast(t *testing.T) {
	o := DefaultOptions()
	o.APIServerArgs = []string{"--max-requests-inflight=3000"}
	args, _ := componentArgs("/c", &o, clusterdir.APIServer)
	if args[len(args)-1] != "--max-requests-inflight=3000" {
		t.Errorf("user flag not last (the last occurrence wins): %v", args[len(args)-3:])
	}
}

func TestFirstServiceIP(t *testing.T) {
	for cidr, want := range map[string]string{
		"10.0.0.0/16":  "10.0.0.1",
		"10.96.0.0/12": "10.96.0.1",
		"fd00::/108":   "fd00::1",
	} {
		ip, err := firstServiceIP(cidr)
		if err != nil || ip.String() != want {
			t.Errorf("firstServiceIP(%s) = %v, %v; want %s", cidr, ip, err, want)
		}
	}
}
