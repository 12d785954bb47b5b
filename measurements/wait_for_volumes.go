package measurements

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

func init() {
	Register("WaitForBoundPVCs", Informational, func(string) Measurement { return &waitForVolumes{pvcs: true} })
	Register("WaitForAvailablePVs", Informational, func(string) Measurement { return &waitForVolumes{} })
}

const (
	// clusterloader2's defaults for both waits.
	volumesDefaultTimeout = time.Minute
	volumesPollInterval   = 5 * time.Second
	// provisionedByAnnotation names the provisioner that made a PV.
	provisionedByAnnotation = "pv.kubernetes.io/provisioned-by"
	// manualProvisioner is the StorageClass provisioner of volumes that are
	// only ever created by hand.
	manualProvisioner = "kubernetes.io/no-provisioner"
)

// waitForVolumes is WaitForBoundPVCs (pvcs) and WaitForAvailablePVs: it
// waits until exactly desiredPVCCount PVCs matching the selector are Bound,
// or desiredPVCount PVs made by provisioner are Bound or Available, with
// none pending beside them, as clusterloader2 does.
//
// Params: desiredPVCCount / desiredPVCount, namespace, labelSelector,
// fieldSelector, timeout (default 1m), and provisioner for the PVs.
//
// A cluster where no provisioner can act (no StorageClass names one and no
// PV exists, as on hollow nodes, which provision nothing) makes the wait
// "not measured" at once, saying so, rather than a timeout.
type waitForVolumes struct {
	pvcs bool
	// pollInterval overrides volumesPollInterval (tests).
	pollInterval time.Duration
}

func (w *waitForVolumes) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	countParam := "desiredPVCount"
	if w.pvcs {
		countParam = "desiredPVCCount"
	}
	if _, ok := params[countParam]; !ok {
		return nil, fmt.Errorf("param %s: missing", countParam)
	}
	desired, err := params.Int(countParam, 0)
	if err != nil {
		return nil, err
	}
	if desired < 0 {
		return nil, fmt.Errorf("param %s: %d is negative", countParam, desired)
	}
	provisioner := ""
	if !w.pvcs {
		if provisioner, err = params.String("provisioner", ""); err != nil {
			return nil, err
		}
		if provisioner == "" {
			return nil, fmt.Errorf("param provisioner: missing")
		}
	}
	sel, err := parseWatchSelector(params)
	if err != nil {
		return nil, err
	}
	timeout, err := params.Duration("timeout", volumesDefaultTimeout)
	if err != nil {
		return nil, err
	}
	if env == nil || env.Client == nil {
		return nil, fmt.Errorf("no client for the cluster")
	}
	if reason, err := whyNoProvisioner(ctx, env, provisioner); err != nil || reason != "" {
		if err != nil {
			return nil, err
		}
		return nil, notMeasuredf("%s", reason)
	}
	interval := w.pollInterval
	if interval == 0 {
		interval = volumesPollInterval
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	what := fmt.Sprintf("%d PVs of provisioner %s (%s)", desired, provisioner, sel)
	if w.pvcs {
		what = fmt.Sprintf("%d bound PVCs (%s)", desired, sel)
	}
	var done, pending, total int
	for {
		if w.pvcs {
			done, pending, total, err = countPVCs(ctx, env, sel)
		} else {
			done, pending, total, err = countPVs(ctx, env, sel, provisioner)
		}
		if err == nil {
			klog.V(2).InfoS("Waiting for volumes", "for", what, "done", done, "pending", pending, "total", total)
			if done == desired && done+pending == total && pending == 0 {
				return nil, nil
			}
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return nil, fmt.Errorf("waiting for %s: %w", what, err)
			}
			return nil, fmt.Errorf("waiting for %s: timed out after %s with %d ready, %d pending, %d in all", what, timeout, done, pending, total)
		case <-time.After(interval):
		}
	}
}

// countPVCs counts the selected PVCs: bound, pending, all.
func countPVCs(ctx context.Context, env *Env, sel watchSelector) (bound, pending, total int, err error) {
	list, err := env.Client.CoreV1().PersistentVolumeClaims(sel.Namespace).List(ctx, sel.listOptions())
	if err != nil {
		return 0, 0, 0, fmt.Errorf("listing PVCs: %w", err)
	}
	for _, pvc := range list.Items {
		if !sel.matchesLabels(pvc.Labels) {
			continue
		}
		total++
		switch pvc.Status.Phase {
		case corev1.ClaimBound:
			bound++
		case corev1.ClaimPending, "":
			pending++
		}
	}
	return bound, pending, total, nil
}

// countPVs counts the selected PVs provisioner made: bound or available,
// pending, all.
func countPVs(ctx context.Context, env *Env, sel watchSelector, provisioner string) (ready, pending, total int, err error) {
	list, err := env.Client.CoreV1().PersistentVolumes().List(ctx, sel.listOptions())
	if err != nil {
		return 0, 0, 0, fmt.Errorf("listing PVs: %w", err)
	}
	for _, pv := range list.Items {
		if !sel.matchesLabels(pv.Labels) || pv.Annotations[provisionedByAnnotation] != provisioner {
			continue
		}
		total++
		switch pv.Status.Phase {
		case corev1.VolumeBound, corev1.VolumeAvailable:
			ready++
		case corev1.VolumePending, "":
			pending++
		}
	}
	return ready, pending, total, nil
}

// whyNoProvisioner says why no volume can appear in the cluster, or "" when
// one can: some StorageClass names a provisioner (want, when given), or
// some PV exists already.
func whyNoProvisioner(ctx context.Context, env *Env, want string) (string, error) {
	classes, err := env.Client.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("listing StorageClasses: %w", err)
	}
	for _, sc := range classes.Items {
		if sc.Provisioner != manualProvisioner && (want == "" || sc.Provisioner == want) {
			return "", nil
		}
	}
	pvs, err := env.Client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return "", fmt.Errorf("listing PVs: %w", err)
	}
	if len(pvs.Items) > 0 {
		return "", nil
	}
	name := "no StorageClass names a provisioner"
	if want != "" {
		name = "no StorageClass names provisioner " + want
	}
	return name + " and no PersistentVolume exists: nothing can provision volumes here (hollow nodes provision none)", nil
}
