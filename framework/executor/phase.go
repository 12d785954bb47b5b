package executor

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kscale/kscale/framework/config"
)

// action is one index's bundle in one namespace: what a tuning set paces.
type action struct {
	namespace string
	index     int
	verb      verb
}

// runPhase brings every object stream of the phase to its replica count in
// each of the phase's namespaces and returns what failed.
func (e *Executor) runPhase(ctx context.Context, p config.Phase) []error {
	ts, err := e.tuningSets.Get(p.TuningSet)
	if err != nil {
		return []error{critical(err)}
	}
	kinds := make([]schema.GroupKind, len(p.ObjectBundle))
	for i, obj := range p.ObjectBundle {
		gk, err := e.objectKind(obj)
		if err != nil {
			return []error{critical(err)}
		}
		kinds[i] = gk
	}
	var actions []action
	var streams [][]objectStream
	for _, ns := range e.phaseNamespaces(p) {
		bundle := make([]objectStream, len(p.ObjectBundle))
		for i, obj := range p.ObjectBundle {
			bundle[i] = objectStream{Namespace: ns, Basename: obj.Basename, Group: kinds[i].Group, Kind: kinds[i].Kind}
		}
		current, err := bundleCurrent(e.state, bundle)
		if err != nil {
			return []error{critical(err)}
		}
		v, indices := planIndices(current, p.ReplicasPerNamespace)
		for _, i := range indices {
			actions = append(actions, action{namespace: ns, index: i, verb: v})
		}
		streams = append(streams, bundle)
	}

	var mu sync.Mutex
	var errs []error
	err = ts.Execute(ctx, len(actions), func(ctx context.Context, i int) {
		if err := e.runAction(ctx, p, actions[i]); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("stopped after starting part of %d actions: %w", len(actions), err))
	}
	// The declared count is the state from now on, also where single
	// objects failed: their errors are on the step, and a later phase
	// works from what the config declared.
	for _, bundle := range streams {
		for _, s := range bundle {
			e.state.set(s, p.ReplicasPerNamespace)
		}
	}
	return errs
}

// runAction does one index's bundle: objects in bundle order for create and
// patch, in reverse order for delete.
func (e *Executor) runAction(ctx context.Context, p config.Phase, a action) error {
	client := e.objectClient()
	order := make([]int, len(p.ObjectBundle))
	for i := range order {
		order[i] = i
		if a.verb == remove {
			order[i] = len(order) - 1 - i
		}
	}
	for _, i := range order {
		obj, err := e.renderObject(p.ObjectBundle[i], a.namespace, a.index, a.verb == remove)
		if err != nil {
			return err
		}
		if err := client.apply(ctx, a.verb, obj); err != nil {
			return err
		}
	}
	return nil
}

// renderObject renders one object of a bundle for index in namespace.
func (e *Executor) renderObject(o config.Object, namespace string, index int, lenient bool) (*unstructured.Unstructured, error) {
	name := o.Basename + "-" + strconv.Itoa(index)
	data, err := e.compiled.RenderObject(o.ObjectTemplatePath, config.ObjectVars{
		Name: name, Index: index, Namespace: namespace, BaseName: o.Basename,
		TemplateFillMap: o.TemplateFillMap, Lenient: lenient,
	})
	if err != nil {
		return nil, critical(fmt.Errorf("rendering %s for %s: %w", o.ObjectTemplatePath, name, err))
	}
	obj, err := decodeObject(data, e.opts.RunID)
	if err != nil {
		return nil, critical(fmt.Errorf("%s for %s: %w", o.ObjectTemplatePath, name, err))
	}
	obj.SetName(name)
	if namespace != "" {
		obj.SetNamespace(namespace)
	}
	return obj, nil
}

// objectKind finds the group and kind of a bundle entry by rendering its
// template once: streams are keyed by them.
func (e *Executor) objectKind(o config.Object) (schema.GroupKind, error) {
	obj, err := e.renderObject(o, "", 0, true)
	if err != nil {
		return schema.GroupKind{}, err
	}
	// A kind the cluster does not serve fails every action alike: say so
	// once, and stop the run.
	if _, err := e.objects[0].resource(obj); err != nil {
		return schema.GroupKind{}, critical(fmt.Errorf("%s: %w", o.ObjectTemplatePath, err))
	}
	gvk := obj.GroupVersionKind()
	e.mu.Lock()
	e.versions[gvk.GroupKind()] = gvk.Version
	e.mu.Unlock()
	return gvk.GroupKind(), nil
}

// phaseNamespaces lists the namespaces a phase acts in; "" alone for
// cluster-scoped objects.
func (e *Executor) phaseNamespaces(p config.Phase) []string {
	switch {
	case p.NamespaceRange != nil:
		prefix := e.namespaces.prefix
		if p.NamespaceRange.Basename != nil {
			prefix = *p.NamespaceRange.Basename
		}
		var out []string
		for i := p.NamespaceRange.Min; i <= p.NamespaceRange.Max; i++ {
			out = append(out, namespaceName(prefix, i))
		}
		return out
	case len(p.NamespaceList) > 0:
		return p.NamespaceList
	default:
		return []string{""}
	}
}
