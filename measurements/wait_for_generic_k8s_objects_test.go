package measurements

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

var wtClaims = schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims"}

func wtClaim(ns, name, condType, status string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
		"metadata": map[string]any{"namespace": ns, "name": name},
	}}
	if condType != "" {
		u.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": condType, "status": status}}}
	}
	return u
}

func wtDynamic(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{wtClaims: "ResourceClaimList"}, objs...)
}

func TestWaitForGenericK8sObjects(t *testing.T) {
	base := Params{"objectGroup": "resource.k8s.io", "objectVersion": "v1", "objectResource": "resourceclaims",
		"namespaceRange": map[string]any{"min": 1, "max": 2}, "refreshInterval": "10ms",
		"successfulConditions": []any{"Allocated=True"}, "failedConditions": []any{"Failed=True"}}
	cases := []struct {
		name    string
		objects []runtime.Object
		params  Params
		drive   func(t *testing.T, d *dynamicfake.FakeDynamicClient)
		wantErr string
		wantOut string
	}{
		{name: "enough successful in the run's namespaces",
			objects: []runtime.Object{wtClaim("test-ns-1", "a", "Allocated", "True"), wtClaim("test-ns-2", "b", "Allocated", "True"),
				wtClaim("elsewhere", "c", "Allocated", "True")},
			params: Params{"minDesiredObjectCount": 2}, wantOut: "resourceclaims done 2/2"},
		{name: "objects become allocated while waiting",
			objects: []runtime.Object{wtClaim("test-ns-1", "a", "", "")},
			params:  Params{"minDesiredObjectCount": 1},
			drive: func(t *testing.T, d *dynamicfake.FakeDynamicClient) {
				time.Sleep(30 * time.Millisecond)
				if _, err := d.Resource(wtClaims).Namespace("test-ns-1").Update(context.Background(), wtClaim("test-ns-1", "a", "Allocated", "True"), metav1.UpdateOptions{}); err != nil {
					t.Error(err)
				}
			}},
		{name: "too many failed",
			objects: []runtime.Object{wtClaim("test-ns-1", "a", "Allocated", "True"), wtClaim("test-ns-1", "b", "Failed", "True")},
			params:  Params{"minDesiredObjectCount": 2}, wantErr: "1 objects failed, at most 0 allowed: test-ns-1/b"},
		{name: "failed within maxFailedObjectCount",
			objects: []runtime.Object{wtClaim("test-ns-1", "a", "Allocated", "True"), wtClaim("test-ns-1", "b", "Failed", "True")},
			params:  Params{"minDesiredObjectCount": 2, "maxFailedObjectCount": 1}},
		{name: "timeout counts",
			objects: []runtime.Object{wtClaim("test-ns-1", "a", "Allocated", "False")},
			params:  Params{"minDesiredObjectCount": 1, "timeout": "100ms"},
			wantErr: "resource.k8s.io/v1, Resource=resourceclaims in test-ns-1..test-ns-2: 0 of 1 objects successful or failed after 100ms (successful 0, failed 0, objects 1)"},
		{name: "no conditions: count only, own prefix",
			objects: []runtime.Object{wtClaim("other-3", "a", "", "")},
			params: Params{"minDesiredObjectCount": 1, "successfulConditions": nil, "failedConditions": nil,
				"namespaceRange": map[string]any{"min": 3, "max": 3, "prefix": "other"}}},
		{name: "bad params", params: Params{"minDesiredObjectCount": 1, "successfulConditions": []any{"Allocated"}}, wantErr: "param successfulConditions"},
		{name: "missing count", params: Params{}, wantErr: "param minDesiredObjectCount: missing"},
		{name: "bad range", params: Params{"minDesiredObjectCount": 1, "namespaceRange": map[string]any{"min": 1}}, wantErr: "namespaceRange.max: missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := wtDynamic(tc.objects...)
			params := Params{}
			for k, v := range base {
				params[k] = v
			}
			for k, v := range tc.params {
				params[k] = v
			}
			var out bytes.Buffer
			done := make(chan struct{})
			go func() {
				defer close(done)
				if tc.drive != nil {
					tc.drive(t, d)
				}
			}()
			_, err := (&waitForGenericObjects{dynamic: d}).Execute(context.Background(), wtEnv(nil, &out), params)
			<-done
			if tc.wantErr == "" && err != nil {
				t.Fatalf("err: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			if tc.wantOut != "" && !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("progress %q, want %q", out.String(), tc.wantOut)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := (&waitForGenericObjects{dynamic: wtDynamic()}).Execute(ctx, wtEnv(nil, nil), Params{"objectVersion": "v1",
		"objectResource": "resourceclaims", "objectGroup": "resource.k8s.io", "minDesiredObjectCount": 1, "refreshInterval": "10ms"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
}
