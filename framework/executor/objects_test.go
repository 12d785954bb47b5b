package executor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

var configMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func testObjectClient(objects ...runtime.Object) (*objectClient, *dynamicfake.FakeDynamicClient) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{configMapGVR: "ConfigMapList"}, objects...)
	return &objectClient{dynamic: dyn, mapper: mapper, runID: "r1",
		backoff: wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 3}}, dyn
}

func configMap(t *testing.T, name string, data string) *unstructured.Unstructured {
	t.Helper()
	obj, err := decodeObject([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+name+"\n  namespace: ns\ndata:\n  k: "+data+"\n"), "r1")
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestDecodeObject(t *testing.T) {
	obj, err := decodeObject([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {app: x}\n"), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if l := obj.GetLabels(); l["app"] != "x" || l[RunLabel] != "r1" {
		t.Fatalf("labels %v: the template's and the run's expected", l)
	}
	for _, bad := range []string{"", "metadata: {name: a}\n", "kind: [\n"} {
		if _, err := decodeObject([]byte(bad), "r1"); err == nil {
			t.Errorf("%q decoded without error", bad)
		}
	}
}

func TestApplyCreatesPatchesAndDeletes(t *testing.T) {
	ctx := context.Background()
	c, dyn := testObjectClient()
	if err := c.apply(ctx, create, configMap(t, "cm-0", "one")); err != nil {
		t.Fatal(err)
	}
	if err := c.apply(ctx, create, configMap(t, "cm-0", "one")); err != nil {
		t.Fatalf("re-creating an object of this run: %v", err)
	}
	if err := c.apply(ctx, patch, configMap(t, "cm-0", "two")); err != nil {
		t.Fatal(err)
	}
	got, err := dyn.Resource(configMapGVR).Namespace("ns").Get(ctx, "cm-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "data", "k"); v != "two" {
		t.Fatalf("after patch data.k = %q", v)
	}
	if err := c.apply(ctx, remove, configMap(t, "cm-0", "two")); err != nil {
		t.Fatal(err)
	}
	if err := c.apply(ctx, remove, configMap(t, "cm-0", "two")); err != nil {
		t.Fatalf("deleting what is gone: %v", err)
	}
	// Dependents go with their owner, whatever the kind's default (a
	// ReplicationController's is to orphan its pods).
	deletes := 0
	for _, a := range dyn.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			deletes++
			if p := d.DeleteOptions.PropagationPolicy; p == nil || *p != metav1.DeletePropagationBackground {
				t.Errorf("delete of %s: propagation policy %v, want Background", d.Name, p)
			}
		}
	}
	if deletes != 2 {
		t.Errorf("%d deletes, want 2", deletes)
	}
}

func TestApplyRefusesAnObjectItDidNotCreate(t *testing.T) {
	users := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm-0", "namespace": "ns"},
	}}
	c, _ := testObjectClient(users)
	err := c.apply(context.Background(), create, configMap(t, "cm-0", "x"))
	if err == nil || !strings.Contains(err.Error(), "not created by this run") {
		t.Fatalf("got %v", err)
	}
}

func TestApplyRetriesOnlyPassingErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		failures  int
		wantCalls int
		wantErr   string
	}{
		{"conflict then success", apierrors.NewConflict(configMapGVR.GroupResource(), "cm-0", nil), 1, 2, ""},
		{"throttled twice then success", apierrors.NewTooManyRequests("slow down", 1), 2, 3, ""},
		{"always unavailable", apierrors.NewServiceUnavailable("down"), 10, 3, "still failing after 3 attempts"},
		{"forbidden: no retry", apierrors.NewForbidden(configMapGVR.GroupResource(), "cm-0", nil), 10, 1, "forbidden"},
		// The ServiceAccount admission plugin's refusal in a namespace the
		// controller-manager has not given its default account yet.
		{"no service account yet, then success", apierrors.NewForbidden(configMapGVR.GroupResource(), "cm-0",
			errors.New(`error looking up service account test-1/default: serviceaccount "default" not found`)), 2, 3, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, dyn := testObjectClient()
			calls := 0
			dyn.PrependReactor("create", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
				calls++
				if calls <= tc.failures {
					return true, nil, tc.err
				}
				return false, nil, nil
			})
			err := c.apply(context.Background(), create, configMap(t, "cm-0", "x"))
			if calls != tc.wantCalls {
				t.Errorf("%d calls, want %d", calls, tc.wantCalls)
			}
			if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}
