package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// objectClient writes objects of any kind, CRDs included, through the
// dynamic client; the REST mapper resolves kinds to resources.
type objectClient struct {
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
	runID   string
	backoff wait.Backoff
}

// decodeObject turns a rendered object template into an object, labelled
// with the run so that cleanup can find it and nothing else.
func decodeObject(rendered []byte, runID string) (*unstructured.Unstructured, error) {
	var m map[string]any
	if err := yaml.Unmarshal(rendered, &m); err != nil {
		return nil, fmt.Errorf("decoding the rendered object: %w", err)
	}
	if len(m) == 0 {
		return nil, errors.New("the rendered object is empty")
	}
	obj := &unstructured.Unstructured{Object: m}
	if obj.GetKind() == "" || obj.GetAPIVersion() == "" {
		return nil, errors.New("the rendered object has no kind or apiVersion")
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[RunLabel] = runID
	obj.SetLabels(labels)
	return obj, nil
}

func (c *objectClient) resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			if r, ok := c.mapper.(interface{ Reset() }); ok {
				r.Reset() // a CRD created earlier in the run: rediscover once
				mapping, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("finding the resource of %s: %w", gvk, err)
		}
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.dynamic.Resource(mapping.Resource).Namespace(obj.GetNamespace()), nil
	}
	return c.dynamic.Resource(mapping.Resource), nil
}

// apply does one verb to one object, retrying what is safe to retry.
func (c *objectClient) apply(ctx context.Context, v verb, obj *unstructured.Unstructured) error {
	res, err := c.resource(obj)
	if err != nil {
		return err
	}
	err = c.retry(ctx, func() error {
		switch v {
		case create:
			_, err := res.Create(ctx, obj, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return c.adoptExisting(ctx, res, obj)
			}
			return err
		case remove:
			err := res.Delete(ctx, obj.GetName(), deleteOptions(nil))
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		default:
			data, err := json.Marshal(obj.Object)
			if err != nil {
				return err
			}
			_, err = res.Patch(ctx, obj.GetName(), types.MergePatchType, data, metav1.PatchOptions{})
			return err
		}
	})
	if err != nil {
		return fmt.Errorf("%s %s %s: %w", v, obj.GetKind(), objectName(obj), err)
	}
	return nil
}

// adoptExisting accepts an object that already exists only when this run
// made it (a create retried after a timeout that had in fact succeeded).
func (c *objectClient) adoptExisting(ctx context.Context, res dynamic.ResourceInterface, obj *unstructured.Unstructured) error {
	existing, err := res.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	if existing.GetLabels()[RunLabel] != c.runID {
		return fmt.Errorf("%s exists already and was not created by this run", objectName(obj))
	}
	return nil
}

// retry runs call again after a backoff while it fails for a passing
// reason: a conflict, throttling, a timeout, a server error, a broken
// connection, or a pod refused because its new namespace has no default
// ServiceAccount yet. Other errors are returned at once.
func (c *objectClient) retry(ctx context.Context, call func() error) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, c.backoff, func(context.Context) (bool, error) {
		last = call()
		switch {
		case last == nil:
			return true, nil
		case retriable(last):
			return false, nil
		default:
			return false, last
		}
	})
	if wait.Interrupted(err) && last != nil {
		return fmt.Errorf("still failing after %d attempts: %w", c.backoff.Steps, last)
	}
	return err
}

// deleteByName deletes one object of a stream that this run created,
// checking the run label first so that nothing else is ever deleted.
func (c *objectClient) deleteByName(ctx context.Context, s objectStream, version, name string) error {
	mapping, err := c.mapper.RESTMapping(schema.GroupKind{Group: s.Group, Kind: s.Kind}, version)
	if err != nil {
		return fmt.Errorf("finding the resource of %s: %w", s, err)
	}
	var res dynamic.ResourceInterface = c.dynamic.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		res = c.dynamic.Resource(mapping.Resource).Namespace(s.Namespace)
	}
	return c.retry(ctx, func() error {
		obj, err := res.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if obj.GetLabels()[RunLabel] != c.runID {
			return nil // not ours (any more): leave it
		}
		err = res.Delete(ctx, name, deleteOptions(&metav1.Preconditions{UID: ptr.To(obj.GetUID())}))
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

// deleteOptions are those of every object deletion: the garbage collector
// deletes the dependents in the background, as clusterloader2 deletes. Left
// to the server's default, a ReplicationController's pods would be orphaned
// and live on after it.
func deleteOptions(pre *metav1.Preconditions) metav1.DeleteOptions {
	return metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground), Preconditions: pre}
}

func retriable(err error) bool {
	var netErr net.Error
	return apierrors.IsConflict(err) || apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTimeout(err) || apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsUnexpectedServerError(err) || errors.As(err, &netErr) || serviceAccountNotYet(err)
}

// serviceAccountNotYet reports the refusal of a pod created in a namespace
// before the controller-manager gave it its default ServiceAccount, which
// it does within moments of the namespace: the ServiceAccount admission
// plugin answers Forbidden, and says why only in the message.
func serviceAccountNotYet(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "error looking up service account")
}

func objectName(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

// defaultBackoff retries for about half a minute in all.
var defaultBackoff = wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 7, Cap: 10 * time.Second}
