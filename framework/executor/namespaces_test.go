package executor

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func namespaceNames(t *testing.T, c *fake.Clientset) []string {
	t.Helper()
	list, err := c.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ns := range list.Items {
		out = append(out, ns.Name)
	}
	sort.Strings(out)
	return out
}

func TestNamespacesTouchOnlyWhatTheRunLabelled(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset(
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "test-9"}},                                             // the user's, same prefix
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "test-7", Labels: map[string]string{RunLabel: "old"}}}, // an earlier run's
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other-1", Labels: map[string]string{RunLabel: "old"}}},
	)
	ns := &namespaces{client: c, runID: "r1", prefix: "test", number: 2}
	if err := ns.deleteStale(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ns.create(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(namespaceNames(t, c), ","); got != "other-1,test-1,test-2,test-9" {
		t.Fatalf("after stale cleanup and create: %s", got)
	}
	if err := ns.deleteOwn(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(namespaceNames(t, c), ","); got != "other-1,test-9" {
		t.Fatalf("after the run's cleanup: %s", got)
	}
}

func TestNamespaceThatExistsIsRefusedUnlessAllowed(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "test-1"}})
	ns := &namespaces{client: c, runID: "r1", prefix: "test", number: 1}
	err := ns.create(ctx, false)
	if err == nil || !strings.Contains(err.Error(), "enableExistingNamespaces") {
		t.Fatalf("existing namespace: %v", err)
	}
	if err := ns.create(ctx, true); err != nil {
		t.Fatalf("existing namespace allowed: %v", err)
	}
}
