package controlplane

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Options)
		want   string // substring of the error; empty for valid
	}{
		{"defaults", func(*Options) {}, ""},
		{"all ports free-picked", func(o *Options) { o.APIServerPort = 0 }, ""},
		{"port too large", func(o *Options) { o.EtcdPort = 65536 }, "--etcd-port=65536: must be a port number"},
		{"negative port", func(o *Options) { o.SchedulerPort = -1 }, "--scheduler-port=-1"},
		{"same port twice", func(o *Options) { o.EtcdPort = 6443 }, "--etcd-port=6443: the same port as --apiserver-port"},
		{"zero inflight", func(o *Options) { o.MaxRequestsInflight = 0 }, "--max-requests-inflight=0: must be greater than 0"},
		{"zero qps", func(o *Options) { o.SchedulerQPS = 0 }, "--scheduler-qps=0"},
		{"bad service range", func(o *Options) { o.ServiceClusterIPRange = "10.0.0.0" }, "--service-cluster-ip-range=\"10.0.0.0\": not a CIDR"},
		{"bad cluster cidr", func(o *Options) { o.ClusterCIDR = "pods" }, "--cluster-cidr=\"pods\": not a CIDR"},
		{"overlap", func(o *Options) { o.ClusterCIDR = "10.0.0.0/8" }, "overlaps --service-cluster-ip-range"},
		{"mask not inside cidr", func(o *Options) { o.NodeCIDRMaskSize = 8 }, "--node-cidr-mask-size=8: must be in 11..30"},
		{"zero ready timeout", func(o *Options) { o.ReadyTimeout = 0 }, "--ready-timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			tt.modify(&o)
			err := o.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var input *InputError
			if !errors.As(err, &input) {
				t.Fatalf("err = %v, want an InputError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to say %q", err, tt.want)
			}
		})
	}
}

func TestClaimPorts(t *testing.T) {
	o := DefaultOptions()
	o.APIServerPort = 0
	if err := o.claimPorts(); err != nil {
		t.Fatal(err)
	}
	ports := []int{o.APIServerPort, o.EtcdPort, o.EtcdPeerPort, o.ControllerManagerPort, o.SchedulerPort}
	seen := map[int]bool{}
	for _, p := range ports {
		if p == 0 || seen[p] {
			t.Fatalf("picked ports %v: want five distinct non-zero ports", ports)
		}
		seen[p] = true
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	o = DefaultOptions()
	o.ControllerManagerPort = busy.Addr().(*net.TCPAddr).Port
	o.APIServerPort = 0
	err = o.claimPorts()
	var input *InputError
	if !errors.As(err, &input) || !strings.Contains(err.Error(), "port "+strconv.Itoa(o.ControllerManagerPort)+" (--controller-manager-port) is in use") {
		t.Errorf("busy port: err = %v", err)
	}
}
