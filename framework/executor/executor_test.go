package executor

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kscale/kscale/framework/config"
)

var deploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func compileTestConfig(t *testing.T, path string, env ...string) *config.Compiled {
	t.Helper()
	c, err := config.Compile(path, config.Options{Environ: append([]string{}, env...)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fakeClients() (*fake.Clientset, *dynamicfake.FakeDynamicClient, meta.RESTMapper) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		configMapGVR: "ConfigMapList", deploymentGVR: "DeploymentList",
	})
	return fake.NewClientset(), dyn, mapper
}

// writes lists the dynamic client's writes as "verb resource ns/name".
func writes(dyn *dynamicfake.FakeDynamicClient) []string {
	var out []string
	for _, a := range dyn.Actions() {
		var name string
		switch a := a.(type) {
		case k8stesting.CreateAction:
			name = a.GetObject().(*unstructured.Unstructured).GetName()
		case k8stesting.DeleteAction:
			name = a.GetName()
		case k8stesting.PatchAction:
			name = a.GetName()
		default:
			continue
		}
		out = append(out, fmt.Sprintf("%s %s %s/%s", a.GetVerb(), a.GetResource().Resource, a.GetNamespace(), name))
	}
	return out
}

// byBundle orders writes for comparison: phases stay in order (a phase's
// writes share a verb and phases run one after another), and so do the
// writes of one bundle index, but the indices of a phase are sorted — a
// tuning set starts them on a schedule, and a later one may finish first.
func byBundle(writes []string) []string {
	var out []string
	for start := 0; start < len(writes); {
		verb := strings.Fields(writes[start])[0]
		end := start
		perIndex := map[string][]string{}
		var indices []string
		for ; end < len(writes) && strings.Fields(writes[end])[0] == verb; end++ {
			name := strings.Fields(writes[end])[2]
			if perIndex[name] == nil {
				indices = append(indices, name)
			}
			perIndex[name] = append(perIndex[name], writes[end])
		}
		sort.Strings(indices)
		for _, name := range indices {
			out = append(out, perIndex[name]...)
		}
		start = end
	}
	return out
}

func TestPhasesAreDeclarative(t *testing.T) {
	ctx := context.Background()
	client, dyn, mapper := fakeClients()
	compiled := compileTestConfig(t, "testdata/bundle/config.yaml", "CL2_NAMESPACES=1")
	e, err := New(compiled, Options{RunID: "r1", Client: client, Dynamic: []dynamic.Interface{dyn}, Mapper: mapper,
		Backoff: &wait.Backoff{Duration: time.Millisecond, Steps: 2}})
	if err != nil {
		t.Fatal(err)
	}
	res := e.Run(ctx)
	if res.Failed() || res.CleanupError != nil {
		t.Fatalf("run failed: %+v, cleanup %v", res.Steps, res.CleanupError)
	}
	got := strings.Join(byBundle(writes(dyn)), "\n")
	want := strings.Join([]string{
		// phase 0: five bundles, bundle order
		"create configmaps bundle-1/app-0", "create deployments bundle-1/app-0",
		"create configmaps bundle-1/app-1", "create deployments bundle-1/app-1",
		"create configmaps bundle-1/app-2", "create deployments bundle-1/app-2",
		"create configmaps bundle-1/app-3", "create deployments bundle-1/app-3",
		"create configmaps bundle-1/app-4", "create deployments bundle-1/app-4",
		// phase 1: the surplus, reverse bundle order
		"delete deployments bundle-1/app-2", "delete configmaps bundle-1/app-2",
		"delete deployments bundle-1/app-3", "delete configmaps bundle-1/app-3",
		"delete deployments bundle-1/app-4", "delete configmaps bundle-1/app-4",
		// phase 2: equal counts, every object patched
		"patch configmaps bundle-1/app-0", "patch deployments bundle-1/app-0",
		"patch configmaps bundle-1/app-1", "patch deployments bundle-1/app-1",
	}, "\n")
	if got != want {
		t.Fatalf("writes:\n%s\nwant:\n%s", got, want)
	}
	cm, err := dyn.Resource(configMapGVR).Namespace("bundle-1").Get(ctx, "app-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if round, _, _ := unstructured.NestedString(cm.Object, "data", "round"); round != "2" || cm.GetLabels()[RunLabel] != "r1" {
		t.Fatalf("patched ConfigMap: round %q, labels %v", round, cm.GetLabels())
	}
	if ns, _ := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); len(ns.Items) != 0 {
		t.Fatalf("namespaces left after the run: %d", len(ns.Items))
	}
}

func TestCriticalErrorSkipsTheRemainingSteps(t *testing.T) {
	client, dyn, _ := fakeClients()
	empty := meta.NewDefaultRESTMapper(nil) // knows no kind: rendering works, mapping fails
	compiled := compileTestConfig(t, "testdata/bundle/config.yaml", "CL2_NAMESPACES=1")
	e, err := New(compiled, Options{RunID: "r1", Client: client, Dynamic: []dynamic.Interface{dyn}, Mapper: empty,
		Backoff: &wait.Backoff{Duration: time.Millisecond, Steps: 1}})
	if err != nil {
		t.Fatal(err)
	}
	res := e.Run(context.Background())
	if len(res.Steps) != 3 || len(res.Steps[0].Errors) == 0 || !res.Steps[1].Skipped || !res.Steps[2].Skipped {
		t.Fatalf("want step 0 failed and steps 1-2 skipped: %+v", res.Steps)
	}
}

func TestCancellationStopsNewActionsAndStillCleansUp(t *testing.T) {
	client, dyn, mapper := fakeClients()
	compiled := compileTestConfig(t, "testdata/bundle/config.yaml", "CL2_NAMESPACES=1")
	ctx, cancel := context.WithCancel(context.Background())
	creates := 0
	dyn.PrependReactor("create", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		creates++
		if creates == 3 {
			cancel() // Ctrl-C in the middle of the first phase
		}
		return false, nil, nil
	})
	e, err := New(compiled, Options{RunID: "r1", Client: client, Dynamic: []dynamic.Interface{dyn}, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	res := e.Run(ctx)
	if creates >= 10 {
		t.Fatalf("%d creates: the phase went on after the cancellation", creates)
	}
	if !res.Steps[1].Skipped || !res.Steps[2].Skipped || !res.Interrupted {
		t.Fatalf("steps after the cancellation ran, or the run is not marked interrupted: %+v", res)
	}
	if ns, _ := client.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); len(ns.Items) != 0 {
		t.Fatalf("cleanup did not run after the cancellation: %d namespaces left", len(ns.Items))
	}
}

func TestMeasurementInstancesShareParams(t *testing.T) {
	calls := MeasurementCalls([]config.Measurement{
		{Method: "Sleep", Identifier: "one", Params: map[string]any{"duration": "1s"}},
		{Method: "PodStartupLatency", Params: map[string]any{"action": "start", "threshold": "5s"},
			Instances: []config.MeasurementInstance{
				{Identifier: "a", Params: map[string]any{"threshold": "3s"}},
				{Identifier: "b"},
			}},
	})
	got := fmt.Sprint(calls)
	want := "[{Sleep one map[duration:1s]} {PodStartupLatency a map[action:start threshold:3s]} {PodStartupLatency b map[action:start threshold:5s]}]"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestCleanupDeletesTheRunsObjectsOutsideItsNamespaces(t *testing.T) {
	ctx := context.Background()
	client, dyn, mapper := fakeClients()
	users := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "keep", "namespace": "shared"},
	}}
	if _, err := dyn.Resource(configMapGVR).Namespace("shared").Create(ctx, users, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e, err := New(compileTestConfig(t, "testdata/foreign/config.yaml"), Options{RunID: "r1", Client: client, Dynamic: []dynamic.Interface{dyn}, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	if res := e.Run(ctx); res.Failed() || res.CleanupError != nil {
		t.Fatalf("run: %+v, cleanup: %v", res.Steps, res.CleanupError)
	}
	list, err := dyn.Resource(configMapGVR).Namespace("shared").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range list.Items {
		names = append(names, o.GetName())
	}
	if strings.Join(names, ",") != "keep" {
		t.Fatalf("left in the shared namespace: %v, want only the user's", names)
	}
}

// A suite runs the steps one spec at a time; one interrupted between
// specs finishes with the steps it never ran skipped.
func TestStepsOneAtATime(t *testing.T) {
	ctx := context.Background()
	client, dyn, mapper := fakeClients()
	compiled := compileTestConfig(t, "testdata/bundle/config.yaml", "CL2_NAMESPACES=1")
	e, err := New(compiled, Options{RunID: "r1", Client: client, Dynamic: []dynamic.Interface{dyn}, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	e.Begin(ctx)
	if sr := e.Step(ctx, 0); sr.Skipped || len(sr.Errors) > 0 {
		t.Fatalf("step 0: %+v", sr)
	}
	if n := len(writes(dyn)); n != 10 {
		t.Fatalf("step 0 made %d writes, want the 10 creates of its phase", n)
	}
	res := e.Finish(ctx)
	if !res.Interrupted || res.Steps[0].Skipped || !res.Steps[1].Skipped || !res.Steps[2].Skipped {
		t.Fatalf("want step 0 run, steps 1-2 skipped, the run interrupted: %+v", res)
	}
	if ns, _ := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); len(ns.Items) != 0 {
		t.Fatalf("cleanup left %d namespaces", len(ns.Items))
	}
}
