package measurements

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func kubeSystemPod(name string, restarts int32) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "registry.k8s.io/" + name + "/" + name + ":v1.2@sha256:00"}}},
		Status:     corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: name, RestartCount: restarts}}},
	}
}

func setRestarts(t *testing.T, client *fake.Clientset, name string, restarts int32) {
	t.Helper()
	pods := client.CoreV1().Pods(metav1.NamespaceSystem)
	p, err := pods.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.ContainerStatuses[0].RestartCount = restarts
	if _, err := pods.UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestSystemPodMetrics(t *testing.T) {
	cases := []struct {
		name     string
		params   Params
		restarts int32 // coredns' restarts between start and gather
		wantViol string
	}{
		{"counted, not checked", Params{}, 2, ""},
		{"checked, none allowed", Params{"enableRestartCountCheck": true}, 1, "container coredns of coredns restarted 1 times (allowed 0)"},
		{"checked, default override", Params{"enableRestartCountCheck": true, "restartCountThresholdOverrides": "default: 1\n"}, 1, ""},
		{"checked, named override", Params{"enableRestartCountCheck": true, "restartCountThresholdOverrides": "default: 5\ncoredns: 1\n"}, 2, "restarted 2 times (allowed 1)"},
		{"checked, failure off", Params{"enableRestartCountCheck": true, "systemPodsFailureEnabled": false}, 3, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(kubeSystemPod("coredns", 4), kubeSystemPod("konnectivity", 1))
			env := &Env{Client: client}
			m := &systemPodMetrics{}
			params := func(action string) Params {
				p := Params{"action": action, "systemPodMetricsEnabled": true}
				for k, v := range tc.params {
					p[k] = v
				}
				return p
			}
			if _, err := m.Execute(context.Background(), env, params("start")); err != nil {
				t.Fatal(err)
			}
			setRestarts(t, client, "coredns", 4+tc.restarts)
			sums, err := m.Execute(context.Background(), env, params("gather"))
			if tc.wantViol == "" && err != nil || tc.wantViol != "" && (err == nil || !strings.Contains(err.Error(), tc.wantViol)) {
				t.Fatalf("gather: %v, want violation %q", err, tc.wantViol)
			}
			if len(sums) != 1 || sums[0].Name != "SystemPodMetrics" || sums[0].Headline["restarts"] != float64(tc.restarts) {
				t.Fatalf("summaries %+v", sums)
			}
			file := sums[0].Output.(systemPodsFile)
			if len(file.Pods) != 2 || file.Pods[0].Containers[0].Image != "coredns/coredns" {
				t.Errorf("file %+v", file)
			}
			res := perfdashReads(t, sums[0])
			if got := res[0].Items[0].Data; got["coredns"] != float64(tc.restarts) || got["konnectivity"] != 0 {
				t.Errorf("perfdash reads restart counts %v", got)
			}
		})
	}
}

func TestSystemPodMetricsOffAndEmpty(t *testing.T) {
	env := &Env{Client: fake.NewClientset()}
	m := &systemPodMetrics{}
	// Off by default, as in clusterloader2: no summary at all.
	for _, action := range []string{"start", "gather"} {
		if sums, err := m.Execute(context.Background(), env, Params{"action": action}); err != nil || sums != nil {
			t.Fatalf("%s while off: %v %v", action, sums, err)
		}
	}
	on := Params{"systemPodMetricsEnabled": true}
	if _, err := m.Execute(context.Background(), env, Params{"action": "gather", "systemPodMetricsEnabled": true}); err == nil {
		t.Error("gather before start: no error")
	}
	on["action"] = "start"
	if _, err := m.Execute(context.Background(), env, on); err != nil {
		t.Fatal(err)
	}
	on["action"] = "gather"
	sums, err := m.Execute(context.Background(), env, on)
	var nm *NotMeasuredError
	if !errors.As(err, &nm) || !strings.Contains(nm.Reason, "kube-system has no pods") || len(sums) != 1 {
		t.Fatalf("an empty kube-system: %v %v", sums, err)
	}
	if _, err := m.Execute(context.Background(), env, Params{"action": "start", "systemPodMetricsEnabled": true, "restartCountThresholdOverrides": "a: b"}); err == nil {
		t.Error("bad restartCountThresholdOverrides: no error")
	}
}
