package measurements

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
)

func init() {
	Register("WaitForGenericK8sObjects", Informational, func(string) Measurement { return &waitForGenericObjects{} })
}

const (
	// clusterloader2's defaults for the params of the same names.
	genericObjectsDefaultTimeout  = 30 * time.Minute
	genericObjectsDefaultInterval = 30 * time.Second
)

// waitForGenericObjects is WaitForGenericK8sObjects: it waits until at
// least minDesiredObjectCount objects of any resource (read through the
// dynamic client) carry one of successfulConditions or failedConditions
// ("Type=Status" against status.conditions), and fails when more than
// maxFailedObjectCount carry a failed one. With no conditions given it
// waits for the count of objects alone. It lists every refreshInterval:
// the resources it serves (DRA claims, custom resources) are few.
type waitForGenericObjects struct {
	// dynamic replaces the client built from env.Config (tests).
	dynamic dynamic.Interface
}

func (w *waitForGenericObjects) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	var gvr schema.GroupVersionResource
	var err error
	if gvr.Group, err = params.String("objectGroup", ""); err != nil {
		return nil, err
	}
	if gvr.Version, err = params.String("objectVersion", ""); err != nil {
		return nil, err
	}
	if gvr.Resource, err = params.String("objectResource", ""); err != nil {
		return nil, err
	}
	if gvr.Version == "" || gvr.Resource == "" {
		return nil, fmt.Errorf("params objectVersion and objectResource: both are required")
	}
	if env == nil {
		env = &Env{}
	}
	namespaces, err := genericNamespaces(env, params)
	if err != nil {
		return nil, err
	}
	timeout, err := params.Duration("timeout", genericObjectsDefaultTimeout)
	if err != nil {
		return nil, err
	}
	interval, err := params.Duration("refreshInterval", genericObjectsDefaultInterval)
	if err != nil {
		return nil, err
	}
	if interval <= 0 {
		return nil, fmt.Errorf("param refreshInterval: %v is not positive", interval)
	}
	successful, err := genericConditions(params, "successfulConditions")
	if err != nil {
		return nil, err
	}
	failedConds, err := genericConditions(params, "failedConditions")
	if err != nil {
		return nil, err
	}
	if _, ok := params["minDesiredObjectCount"]; !ok {
		return nil, fmt.Errorf("param minDesiredObjectCount: missing")
	}
	minCount, err := params.Int("minDesiredObjectCount", 0)
	if err != nil {
		return nil, err
	}
	maxFailed, err := params.Int("maxFailedObjectCount", 0)
	if err != nil {
		return nil, err
	}
	sel, err := parseWatchSelector(params)
	if err != nil {
		return nil, err
	}
	client := w.dynamic
	if client == nil {
		if env.Config == nil {
			return nil, fmt.Errorf("no rest config for a dynamic client")
		}
		if client, err = dynamic.NewForConfig(env.Config); err != nil {
			return nil, fmt.Errorf("making a dynamic client: %w", err)
		}
	}

	what := fmt.Sprintf("%s in %s", gvr.String(), namespacesText(namespaces))
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	progress := env.progress(gvr.Resource+" done", minCount)
	var good, bad []string
	count := 0
	err = waitPoll(tctx, interval, func(ctx context.Context) (bool, error) {
		good, bad, count = good[:0], bad[:0], 0
		for _, ns := range namespaces {
			list, err := client.Resource(gvr).Namespace(ns).List(ctx, sel.listOptions())
			if err != nil {
				if ctx.Err() != nil {
					return false, ctx.Err()
				}
				// A failed list is retried at the next refresh: the
				// apiserver may be busy under load.
				klog.V(2).InfoS("Listing objects failed", "resource", gvr.String(), "namespace", ns, "err", err)
				return false, nil
			}
			for i := range list.Items {
				count++
				switch genericConditionOf(&list.Items[i], successful, failedConds) {
				case 1:
					good = append(good, genericName(&list.Items[i]))
				case -1:
					bad = append(bad, genericName(&list.Items[i]))
				}
			}
		}
		if len(successful) == 0 && len(failedConds) == 0 {
			progress.Update(min(count, minCount))
			return count >= minCount, nil
		}
		progress.Update(min(len(good)+len(bad), minCount))
		return len(good)+len(bad) >= minCount, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s: %d of %d objects successful or failed after %v (successful %d, failed %d, objects %d)",
				what, len(good)+len(bad), minCount, timeout, len(good), len(bad), count)
		}
		return nil, err
	}
	if len(bad) > maxFailed {
		return nil, fmt.Errorf("%s: %d objects failed, at most %d allowed: %s", what, len(bad), maxFailed, waitFirstN(bad, 20))
	}
	return nil, nil
}

// genericNamespaces reads namespaceRange: {min, max} with the run's
// namespace prefix, or prefix/basename of its own; {allNamespaces: true};
// or none at all for cluster-scoped objects. "" stands for all namespaces
// or none, which the dynamic client treats alike.
func genericNamespaces(env *Env, params Params) ([]string, error) {
	r, err := params.Map("namespaceRange")
	if err != nil || r == nil {
		return []string{""}, err
	}
	if all, err := r.Bool("allNamespaces", false); err != nil || all {
		return []string{""}, err
	}
	for _, k := range []string{"min", "max"} {
		if _, ok := r[k]; !ok {
			return nil, fmt.Errorf("param namespaceRange.%s: missing", k)
		}
	}
	lo, err := r.Int("min", 0)
	if err != nil {
		return nil, fmt.Errorf("namespaceRange: %w", err)
	}
	hi, err := r.Int("max", 0)
	if err != nil {
		return nil, fmt.Errorf("namespaceRange: %w", err)
	}
	if lo > hi {
		return nil, fmt.Errorf("param namespaceRange: min %d is above max %d", lo, hi)
	}
	prefix := env.NamespacePrefix
	for _, k := range []string{"prefix", "basename"} {
		if p, err := r.String(k, ""); err != nil {
			return nil, fmt.Errorf("namespaceRange: %w", err)
		} else if p != "" {
			prefix = p
		}
	}
	var out []string
	for i := lo; i <= hi; i++ {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out, nil
}

func namespacesText(ns []string) string {
	switch {
	case len(ns) == 1 && ns[0] == "":
		return "all namespaces"
	case len(ns) == 1:
		return ns[0]
	}
	return fmt.Sprintf("%s..%s", ns[0], ns[len(ns)-1])
}

// genericConditions reads a list of "Type=Status" strings.
func genericConditions(params Params, key string) (map[string]bool, error) {
	l, err := params.List(key)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, v := range l {
		s, ok := v.(string)
		if !ok || !strings.Contains(s, "=") {
			return nil, fmt.Errorf("param %s: %v is not a Type=Status string", key, v)
		}
		out[s] = true
	}
	return out, nil
}

// genericConditionOf returns 1 when the object has a successful condition,
// -1 for a failed one, 0 for neither; the first match decides, as the two
// are assumed exclusive.
func genericConditionOf(obj *unstructured.Unstructured, successful, failed map[string]bool) int {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		key := fmt.Sprintf("%v=%v", m["type"], m["status"])
		if successful[key] {
			return 1
		}
		if failed[key] {
			return -1
		}
	}
	return 0
}

func genericName(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
