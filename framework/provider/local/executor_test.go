package local

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kscale/kscale/framework/config"
	"github.com/kscale/kscale/framework/executor"
)

// probe is the test's measurement: it checks what the phases left in the
// cluster at the point of the config where it is called.
type probe struct {
	c      *ControlPlane
	prefix string
}

func (p *probe) Run(ctx context.Context, call executor.MeasurementCall) error {
	want := fmt.Sprint(call.Params["replicas"])
	round := fmt.Sprint(call.Params["round"])
	for i := 1; i <= 3; i++ {
		ns := fmt.Sprintf("%s-%d", p.prefix, i)
		cms, err := p.c.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: executor.RunLabel})
		if err != nil {
			return err
		}
		deps, err := p.c.Client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{LabelSelector: executor.RunLabel})
		if err != nil {
			return err
		}
		var names []string
		for _, cm := range cms.Items {
			if cm.Data["round"] != round {
				return fmt.Errorf("%s/%s: round %q, want %q", ns, cm.Name, cm.Data["round"], round)
			}
			names = append(names, cm.Name)
		}
		for _, d := range deps.Items {
			if d.Annotations["round"] != round {
				return fmt.Errorf("%s/%s: deployment round %q, want %q", ns, d.Name, d.Annotations["round"], round)
			}
		}
		sort.Strings(names)
		if fmt.Sprint(len(cms.Items)) != want || fmt.Sprint(len(deps.Items)) != want {
			return fmt.Errorf("%s: %d ConfigMaps %v and %d Deployments, want %s of each", ns, len(cms.Items), names, len(deps.Items), want)
		}
		if want == "2" && strings.Join(names, ",") != "app-0,app-1" {
			return fmt.Errorf("%s: kept %v, want the lowest indices app-0,app-1", ns, names)
		}
	}
	return nil
}

// TestExecutorPhasesOnTheCluster: phases create, scale down and patch real
// objects in three namespaces; the run's cleanup deletes its namespaces and
// leaves one a user made with the same prefix.
func TestExecutorPhasesOnTheCluster(t *testing.T) {
	c, _ := sharedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("exec-it-%d", time.Now().UnixNano()%100000)
	users := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-9"}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, users, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), users.Name, metav1.DeleteOptions{})
	}()

	compiled, err := config.Compile("testdata/executor/config.yaml", config.Options{Environ: []string{"CL2_PREFIX=" + prefix}})
	if err != nil {
		t.Fatal(err)
	}
	client, dyns, mapper, err := executor.Clients(c.Config, 2)
	if err != nil {
		t.Fatal(err)
	}
	e, err := executor.New(compiled, executor.Options{RunID: "it-" + prefix, Client: client, Dynamic: dyns, Mapper: mapper,
		Measurements: &probe{c: c, prefix: prefix}})
	if err != nil {
		t.Fatal(err)
	}
	res := e.Run(ctx)
	for _, s := range res.Steps {
		for _, err := range s.Errors {
			t.Errorf("step %d %q: %v", s.Index, s.Name, err)
		}
	}
	if res.CleanupError != nil {
		t.Fatalf("cleanup: %v", res.CleanupError)
	}
	list, err := c.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, ns := range list.Items {
		if strings.HasPrefix(ns.Name, prefix) {
			left = append(left, ns.Name)
		}
	}
	if strings.Join(left, ",") != users.Name {
		t.Fatalf("namespaces with the run's prefix after cleanup: %v, want only the user's %s", left, users.Name)
	}
}
