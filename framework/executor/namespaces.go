package executor

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// RunLabel marks every namespace (and object) a run creates with the run's
// id; cleanup deletes only what carries it, so nothing a user made is ever
// touched.
const RunLabel = "kscale.io/run"

// namespaces creates and removes the test namespaces of one run.
type namespaces struct {
	client kubernetes.Interface
	runID  string
	prefix string
	number int
}

// name returns the i-th test namespace.
func (n *namespaces) name(i int) string { return namespaceName(n.prefix, i) }

// owns reports whether name is one of the run's namespaces.
func (n *namespaces) owns(name string) bool {
	for i := 1; i <= n.number; i++ {
		if n.name(i) == name {
			return true
		}
	}
	return false
}

// namespaceName is the i-th namespace (1-based, as the format counts them)
// of a prefix.
func namespaceName(prefix string, i int) string { return fmt.Sprintf("%s-%d", prefix, i) }

// deleteStale removes namespaces with the config's prefix that an earlier
// kscale run created. Namespaces without the run label are left alone even
// when their names match.
func (n *namespaces) deleteStale(ctx context.Context) error {
	list, err := n.client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: RunLabel})
	if err != nil {
		return fmt.Errorf("listing namespaces of earlier runs: %w", err)
	}
	var stale []string
	for _, ns := range list.Items {
		if ns.Labels[RunLabel] != n.runID && strings.HasPrefix(ns.Name, n.prefix+"-") {
			stale = append(stale, ns.Name)
		}
	}
	return n.deleteAndWait(ctx, stale, 10*time.Minute)
}

// create makes the run's namespaces. An existing namespace of the same name
// is an error unless existing ones may be used (enableExistingNamespaces).
func (n *namespaces) create(ctx context.Context, useExisting bool) error {
	for i := 1; i <= n.number; i++ {
		ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n.name(i), Labels: map[string]string{RunLabel: n.runID}}}
		_, err := n.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		switch {
		case err == nil:
		case apierrors.IsAlreadyExists(err) && useExisting:
			klog.V(2).InfoS("Using an existing namespace", "namespace", ns.Name)
		case apierrors.IsAlreadyExists(err):
			return fmt.Errorf("namespace %s exists already (set namespace.enableExistingNamespaces to use it, or deleteStaleNamespaces to remove one an earlier run left)", ns.Name)
		default:
			return fmt.Errorf("creating namespace %s: %w", ns.Name, err)
		}
	}
	return nil
}

// deleteOwn removes the namespaces carrying this run's label and waits for
// them to be gone.
func (n *namespaces) deleteOwn(ctx context.Context, timeout time.Duration) error {
	sel := labels.SelectorFromSet(labels.Set{RunLabel: n.runID}).String()
	list, err := n.client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return fmt.Errorf("listing the run's namespaces: %w", err)
	}
	names := make([]string, 0, len(list.Items))
	for _, ns := range list.Items {
		names = append(names, ns.Name)
	}
	return n.deleteAndWait(ctx, names, timeout)
}

func (n *namespaces) deleteAndWait(ctx context.Context, names []string, timeout time.Duration) error {
	for _, name := range names {
		err := n.client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting namespace %s: %w", name, err)
		}
	}
	if len(names) == 0 {
		return nil
	}
	klog.V(1).InfoS("Waiting for namespaces to be deleted", "count", len(names))
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			_, err := n.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				return false, nil
			}
			if !apierrors.IsNotFound(err) {
				return false, nil // passing API trouble: ask again
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d namespaces to be deleted: %w", len(names), err)
	}
	return nil
}
