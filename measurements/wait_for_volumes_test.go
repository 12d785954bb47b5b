package measurements

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

func testPVC(name string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "test-ns-1", Name: name, Labels: map[string]string{"group": "load"}},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: phase},
	}
}

func testPV(name, provisioner string, phase corev1.PersistentVolumePhase) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{provisionedByAnnotation: provisioner}},
		Status:     corev1.PersistentVolumeStatus{Phase: phase},
	}
}

var testClass = &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: "example.com/disk"}

func TestWaitForVolumes(t *testing.T) {
	cases := []struct {
		name    string
		pvcs    bool
		objects []runtime.Object
		bind    string // a PVC made Bound while waiting
		params  Params
		wantErr string
		wantNM  string
	}{
		{name: "PVCs bound", pvcs: true, objects: []runtime.Object{testClass, testPVC("a", corev1.ClaimBound), testPVC("b", corev1.ClaimPending)},
			bind: "b", params: Params{"desiredPVCCount": 2, "labelSelector": "group = load"}},
		{name: "PVCs time out", pvcs: true, objects: []runtime.Object{testClass, testPVC("a", corev1.ClaimBound), testPVC("b", corev1.ClaimPending)},
			params: Params{"desiredPVCCount": 2, "timeout": "100ms"}, wantErr: "timed out after 100ms with 1 ready, 1 pending, 2 in all"},
		{name: "more PVCs than desired is not done", pvcs: true, objects: []runtime.Object{testClass, testPVC("a", corev1.ClaimBound), testPVC("b", corev1.ClaimBound)},
			params: Params{"desiredPVCCount": 1, "timeout": "100ms"}, wantErr: "2 ready"},
		{name: "no provisioner", pvcs: true, objects: []runtime.Object{testPVC("a", corev1.ClaimPending)},
			params: Params{"desiredPVCCount": 1}, wantNM: "no StorageClass names a provisioner and no PersistentVolume exists"},
		{name: "PVs of the provisioner", objects: []runtime.Object{testClass, testPV("p1", "example.com/disk", corev1.VolumeAvailable),
			testPV("p2", "example.com/disk", corev1.VolumeBound), testPV("other", "other.com/x", corev1.VolumePending)},
			params: Params{"desiredPVCount": 2, "provisioner": "example.com/disk"}},
		{name: "no such provisioner", objects: []runtime.Object{testClass},
			params: Params{"desiredPVCount": 2, "provisioner": "csi.example.com"}, wantNM: "no StorageClass names provisioner csi.example.com"},
		{name: "PVs without provisioner", params: Params{"desiredPVCount": 2}, wantErr: "param provisioner: missing"},
		{name: "no count", pvcs: true, params: Params{}, wantErr: "param desiredPVCCount: missing"},
		{name: "negative count", pvcs: true, params: Params{"desiredPVCCount": -1}, wantErr: "negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(tc.objects...)
			if tc.bind != "" {
				go func() {
					time.Sleep(50 * time.Millisecond)
					pvc := testPVC(tc.bind, corev1.ClaimBound)
					_, _ = client.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(context.Background(), pvc, metav1.UpdateOptions{})
				}()
			}
			w := &waitForVolumes{pvcs: tc.pvcs, pollInterval: 10 * time.Millisecond}
			_, err := w.Execute(context.Background(), &Env{Client: client}, tc.params)
			var nm *NotMeasuredError
			switch {
			case tc.wantNM != "":
				if !errors.As(err, &nm) || !strings.Contains(nm.Reason, tc.wantNM) {
					t.Fatalf("err %v, want not measured: %q", err, tc.wantNM)
				}
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			}
		})
	}
}
