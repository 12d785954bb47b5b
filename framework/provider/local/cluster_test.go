package local

import (
	"context"
	"os"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kscale/kscale/controlplane/clusterdir"
	"github.com/kscale/kscale/framework/provider/local/localtest"
)

func TestClusterComesUpWithRealComponents(t *testing.T) {
	c, _ := sharedCluster(t)
	ctx := context.Background()

	info, err := os.Stat(c.Dir.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("admin kubeconfig mode = %o, want 600", mode)
	}

	v, err := c.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != "v1.37.2" {
		t.Errorf("apiserver version = %q, want v1.37.2 (version stamp missing from the build?)", v.GitVersion)
	}

	state, err := c.Dir.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	if state.Phase != clusterdir.PhaseReady {
		t.Errorf("phase = %s, want Ready", state.Phase)
	}
	pids := map[int]string{}
	for _, name := range clusterdir.Components {
		comp := state.Component(name)
		if comp == nil || comp.PID == 0 || !comp.Ready {
			t.Fatalf("component %s not running and ready: %+v", name, comp)
		}
		if other, dup := pids[comp.PID]; dup {
			t.Errorf("%s and %s share pid %d: each component must be its own process", name, other, comp.PID)
		}
		pids[comp.PID] = name
	}

	// Controllers use their own service accounts (--use-service-account-credentials).
	if _, err := c.Client.CoreV1().ServiceAccounts("kube-system").Get(ctx, "deployment-controller", metav1.GetOptions{}); err != nil {
		t.Errorf("per-controller service account deployment-controller: %v", err)
	}
}

// TestComponentMetricsAndIdentities scrapes every component's /metrics and
// checks, from the apiserver's priority-and-fairness metrics, that the
// controller-manager, the scheduler and the hollow nodes are classified by
// their production identities rather than exempt as admins would be.
func TestComponentMetricsAndIdentities(t *testing.T) {
	c, _ := sharedCluster(t)
	endpoints, err := c.Endpoints()
	if err != nil {
		t.Fatal(err)
	}
	httpClient, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	wantMetric := map[string]string{
		clusterdir.Etcd:              "etcd_server_has_leader",
		clusterdir.APIServer:         "apiserver_request_total",
		clusterdir.ControllerManager: "leader_election_master_status",
		clusterdir.Scheduler:         "leader_election_master_status",
	}
	families := map[string]map[string]*dto.MetricFamily{}
	for name, metric := range wantMetric {
		ep, ok := endpoints[name]
		if !ok {
			t.Fatalf("no endpoints for %s", name)
		}
		fams, err := localtest.Scrape(httpClient, ep.Metrics)
		if err != nil {
			t.Fatalf("scraping %s at %s: %v", name, ep.Metrics, err)
		}
		fam, ok := fams[metric]
		if !ok {
			t.Errorf("%s /metrics lacks %s", name, metric)
		} else if metric == "leader_election_master_status" && fam.GetMetric()[0].GetGauge().GetValue() != 1 {
			t.Errorf("%s is not the leader: %s = %v", name, metric, fam.GetMetric()[0].GetGauge().GetValue())
		}
		families[name] = fams
	}

	// Every request of a flow schema other than exempt is subject to APF.
	dispatched := map[string]float64{}
	for _, m := range families[clusterdir.APIServer]["apiserver_flowcontrol_dispatched_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "flow_schema" {
				dispatched[l.GetValue()] += m.GetCounter().GetValue()
			}
		}
	}
	for _, schema := range []string{"kube-controller-manager", "kube-scheduler", "system-nodes"} {
		if dispatched[schema] == 0 {
			t.Errorf("no requests dispatched under flow schema %q; dispatched: %v", schema, dispatched)
		}
	}
}

func TestClusterRestartAPIServerKeepsNodesReady(t *testing.T) {
	c, nodes := sharedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	before, err := c.Dir.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	oldPID := before.Component(clusterdir.APIServer).PID
	restartedAt := time.Now()
	if err := c.Restart(ctx, clusterdir.APIServer); err != nil {
		t.Fatal(err)
	}
	after, err := c.Dir.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	api := after.Component(clusterdir.APIServer)
	if api.PID == oldPID || !api.Ready || api.Restarts < 1 {
		t.Fatalf("apiserver after restart: %+v (old pid %d)", api, oldPID)
	}
	for _, name := range []string{clusterdir.Etcd, clusterdir.ControllerManager, clusterdir.Scheduler} {
		if b, a := before.Component(name).PID, after.Component(name).PID; a != b {
			t.Errorf("%s was restarted too (pid %d -> %d); only the apiserver should be", name, b, a)
		}
	}

	// Every hollow node renews its lease through the new apiserver and stays Ready.
	for _, name := range nodes.Names {
		deadline := time.Now().Add(time.Minute)
		for {
			lease, err := c.Client.CoordinationV1().Leases("kube-node-lease").Get(ctx, name, metav1.GetOptions{})
			if err == nil && lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(restartedAt) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("lease of %s not renewed since the apiserver restart (err %v)", name, err)
			}
			time.Sleep(time.Second)
		}
		node, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !NodeReady(node) {
			t.Errorf("node %s not Ready after the apiserver restart", name)
		}
	}
}
