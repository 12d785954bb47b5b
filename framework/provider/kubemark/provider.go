package kubemark

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/framework/provider"
	"github.com/kscale/kscale/framework/provider/local"
	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/measurements/metrics"
)

func init() {
	provider.Register("kubemark", func(o provider.Options) (provider.Provider, error) {
		p, err := New(o, CommandLine)
		if err != nil {
			return nil, err
		}
		return p, nil
	})
}

// FieldManager is the server-side apply field manager of what the provider
// applies.
const FieldManager = "kscale"

// Provider is the kubemark provider: hollow-node pods in the root cluster
// that register as nodes of the test cluster.
type Provider struct {
	po provider.Options
	o  Options
	m  *Manifests
	// identity is the run's bootstrap token, once created.
	identity *identity
	// restarts follows the hollow-node pods from provisioning to teardown.
	restarts *restartWatch

	rootConfig, testConfig *rest.Config
	root                   kubernetes.Interface
	dynamic                dynamic.Interface
	mapper                 meta.RESTMapper
	test                   kubernetes.Interface
}

// New checks the options and renders the manifests, so that bad input stops
// a run before anything starts; errors name the flag.
func New(po provider.Options, o Options) (*Provider, error) {
	m, err := Render(po, o)
	if err != nil {
		return nil, err
	}
	if po.RootKubeconfig == "" {
		return nil, errors.New("--root-kubeconfig: required: the cluster the hollow-node pods run in")
	}
	rootConfig, err := clientcmd.BuildConfigFromFlags("", po.RootKubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--root-kubeconfig=%s: %w", po.RootKubeconfig, err)
	}
	testConfig, err := clientcmd.BuildConfigFromFlags("", po.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig=%s: %w", po.Kubeconfig, err)
	}
	if po.Hollow == "" {
		po.Hollow = provider.HollowFleet
	}
	return &Provider{po: po, o: o, m: m, rootConfig: rootConfig, testConfig: testConfig}, nil
}

// Manifests are the objects the provider applies to the root cluster.
func (p *Provider) Manifests() *Manifests { return p.m }

// NodeSelector selects the provider's hollow Nodes in the test cluster.
func (p *Provider) NodeSelector() string {
	return labels.SelectorFromSet(labels.Set{HollowLabel: HollowValue, OwnerLabel: p.m.Data.Name}).String()
}

func (p *Provider) connect() error {
	if p.root != nil {
		return nil
	}
	root, err := kubernetes.NewForConfig(p.rootConfig)
	if err != nil {
		return fmt.Errorf("--root-kubeconfig=%s: %w", p.po.RootKubeconfig, err)
	}
	dyn, err := dynamic.NewForConfig(p.rootConfig)
	if err != nil {
		return fmt.Errorf("--root-kubeconfig=%s: %w", p.po.RootKubeconfig, err)
	}
	test, err := kubernetes.NewForConfig(p.testConfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig=%s: %w", p.po.Kubeconfig, err)
	}
	p.root, p.dynamic, p.test = root, dyn, test
	p.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(root.Discovery()))
	return nil
}

// Provision applies the objects to the root cluster, then scales the
// Deployment up step by step, waiting after each step for its nodes to be
// Ready in the test cluster.
func (p *Provider) Provision(ctx context.Context) (*provider.Cluster, error) {
	start := time.Now()
	if err := p.connect(); err != nil {
		return nil, err
	}
	d := p.m.Data
	if host := p.testConfig.Host; isLoopback(host) {
		klog.InfoS("The test cluster's apiserver has a loopback address; hollow-node pods reach it only from this machine (see "+FlagHostAlias+")", "server", host)
	}
	if err := p.checkRoot(ctx); err != nil {
		return nil, err
	}
	if err := p.claimNamespace(ctx); err != nil {
		return nil, err
	}
	id, err := newIdentity(d.Name, time.Now())
	if err != nil {
		return nil, err
	}
	p.identity = id
	creds, err := p.createIdentity(ctx, id)
	if err != nil {
		return nil, err
	}
	if p.m, err = render(p.po, p.o, creds); err != nil {
		return nil, err
	}
	p.progressf("kubemark: hollow nodes join with bootstrap token %s (expires %s) and their own system:node certificates", id.tokenID, id.expires.UTC().Format(time.RFC3339))
	for _, obj := range p.m.Objects {
		if obj == p.m.deployment {
			continue
		}
		if err := p.apply(ctx, obj); err != nil {
			return nil, err
		}
	}
	l := p.m.layout
	hollow := &report.Hollow{Kind: p.po.Hollow, Nodes: l.Nodes()}
	out := &provider.Cluster{Kubeconfig: p.po.Kubeconfig, Nodes: p.po.Nodes, Hollow: hollow}
	if l.Nodes() != p.po.Nodes {
		klog.InfoS("The pods of a Deployment are alike: running a few nodes more than asked", "nodes", p.po.Nodes, "pods", l.Pods, "nodesPerPod", l.NodesPerPod, "hollowNodes", l.Nodes())
	}
	if p.restarts == nil {
		// It outlives Provision's context: Teardown stops it.
		p.restarts = p.startRestartWatch(context.WithoutCancel(ctx))
		out.HollowRestarts = p.restarts.Restarts
	}
	steps := l.replicaSteps()
	selector := p.NodeSelector()
	for i, replicas := range steps {
		want := replicas * l.NodesPerPod
		p.progressf("kubemark: step %d/%d: %s/%s at %d/%d pods, waiting for %d/%d nodes Ready", i+1, len(steps), d.Namespace, d.DeploymentName, replicas, l.Pods, want, l.Nodes())
		dep := p.m.deployment.DeepCopy()
		if err := unstructured.SetNestedField(dep.Object, int64(replicas), "spec", "replicas"); err != nil {
			return out, err
		}
		if err := p.apply(ctx, dep); err != nil {
			return out, err
		}
		hollow.Processes = replicas
		offset := time.Since(start).Seconds()
		stepCtx, cancel := context.WithTimeout(ctx, p.o.StepTimeout)
		// A pod that cannot run ends the step at once, not at its timeout.
		var failure error
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			if failure = p.watchPods(stepCtx); failure != nil {
				cancel()
			}
		}()
		points, err := local.TrackNodesReady(stepCtx, p.test, selector, want, p.po.Progress)
		cancel()
		<-watched
		if failure != nil {
			out.ProvisionSeconds = time.Since(start).Seconds()
			return out, fmt.Errorf("kubemark step %d/%d (%d pods, %d nodes): %w", i+1, len(steps), replicas, want, failure)
		}
		out.NodesReady = appendPoints(out.NodesReady, points, offset)
		if err != nil {
			out.ProvisionSeconds = time.Since(start).Seconds()
			return out, fmt.Errorf("kubemark step %d/%d (%d pods, %d nodes): %w; %s", i+1, len(steps), replicas, want, err, p.podSummary(context.WithoutCancel(ctx)))
		}
	}
	out.ProvisionSeconds = time.Since(start).Seconds()
	klog.InfoS("Hollow nodes Ready", "nodes", l.Nodes(), "pods", l.Pods, "namespace", d.Namespace, "after", time.Since(start).Round(time.Millisecond))
	return out, nil
}

// appendPoints adds one step's Ready series to the run's, shifted by the
// step's start; a later step's opening zero is not a real count.
func appendPoints(series, step []metrics.Point, offset float64) []metrics.Point {
	for i, pt := range step {
		if i == 0 && len(series) > 0 && pt.Y == 0 {
			continue
		}
		series = append(series, metrics.Point{X: pt.X + offset, Y: pt.Y})
	}
	return series
}

func (p *Provider) progressf(format string, args ...any) {
	if p.po.Progress != nil {
		fmt.Fprintf(p.po.Progress, format+"\n", args...)
	}
}

// owned reports whether the object carries this run's ownership labels.
func (p *Provider) owned(l map[string]string) bool {
	for k, v := range p.m.Data.Labels {
		if l[k] != v {
			return false
		}
	}
	return true
}

// claimNamespace makes sure the namespace is this run's: it creates it when
// missing, and refuses one that kscale's run did not create.
func (p *Provider) claimNamespace(ctx context.Context) error {
	name := p.m.Data.Namespace
	for {
		ns, err := p.root.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			created := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: p.m.Data.Labels}}
			_, err = p.root.CoreV1().Namespaces().Create(ctx, created, metav1.CreateOptions{FieldManager: FieldManager})
			if apierrors.IsAlreadyExists(err) {
				continue // created meanwhile: check whose it is
			}
			if err != nil {
				return fmt.Errorf("creating namespace %s in the root cluster: %w", name, err)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("root cluster: %w", err)
		}
		if !p.owned(ns.Labels) {
			owner := "not by kscale"
			if run := ns.Labels[OwnerLabel]; run != "" {
				owner = fmt.Sprintf("by kscale run %q", run)
			}
			return fmt.Errorf("%s=%s: the namespace exists in the root cluster, created %s (it lacks %s=%s, %s=%s): kscale will not touch it; choose another %s or delete the namespace",
				FlagNamespace, name, owner, OwnerLabel, p.m.Data.Name, ManagedByLabel, ManagedBy, FlagNamespace)
		}
		if ns.DeletionTimestamp == nil {
			return nil
		}
		klog.InfoS("Waiting for the namespace of an earlier run to be deleted", "namespace", name)
		if err := p.waitNamespaceGone(ctx); err != nil {
			return err
		}
	}
}

func (p *Provider) resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, bool, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := p.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, false, fmt.Errorf("%s %s: root cluster: %w", gvk.Kind, obj.GetName(), err)
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(p.m.Data.Namespace)
		}
		return p.dynamic.Resource(mapping.Resource).Namespace(obj.GetNamespace()), true, nil
	}
	return p.dynamic.Resource(mapping.Resource), false, nil
}

// apply server-side applies one object to the root cluster.
func (p *Provider) apply(ctx context.Context, obj *unstructured.Unstructured) error {
	ri, _, err := p.resource(obj)
	if err != nil {
		return err
	}
	body, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	force := true
	_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
		FieldManager: FieldManager, Force: &force, FieldValidation: metav1.FieldValidationStrict,
	})
	if err != nil {
		return fmt.Errorf("applying %s %s to the root cluster (%s): %w", obj.GetKind(), obj.GetName(), p.m.origin[obj], err)
	}
	return nil
}

// Teardown deletes what Provision created: the cluster-scoped objects and
// the namespace in the root cluster (only when they carry this run's
// ownership labels; it waits for the namespace to go), then the run's
// hollow Nodes in the test cluster. It is safe after a Provision that
// failed or refused half way.
func (p *Provider) Teardown(ctx context.Context) error {
	if p.restarts != nil {
		p.restarts.stop()
	}
	if p.po.KeepCluster {
		klog.InfoS("Keeping the hollow nodes", "namespace", p.m.Data.Namespace, "nodes", p.NodeSelector())
		return nil
	}
	if err := p.connect(); err != nil {
		return err
	}
	var errs []error
	for _, obj := range p.m.Objects {
		if obj == p.m.namespace {
			continue
		}
		ri, namespaced, err := p.resource(obj.DeepCopy())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if namespaced {
			continue // goes with the namespace
		}
		if err := deleteOwned(ctx, ri, obj.GetName(), p.owned); err != nil {
			errs = append(errs, fmt.Errorf("deleting %s %s from the root cluster: %w", obj.GetKind(), obj.GetName(), err))
		}
	}
	if err := p.deleteNamespace(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := p.deleteNodes(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := p.deleteIdentity(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func deleteOwned(ctx context.Context, ri dynamic.ResourceInterface, name string, owned func(map[string]string) bool) error {
	obj, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !owned(obj.GetLabels()) {
		return nil
	}
	uid := obj.GetUID()
	err = ri.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (p *Provider) deleteNamespace(ctx context.Context) error {
	name := p.m.Data.Namespace
	nss := p.root.CoreV1().Namespaces()
	ns, err := nss.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("root cluster: namespace %s: %w", name, err)
	}
	if !p.owned(ns.Labels) {
		klog.InfoS("Leaving a namespace kscale did not create", "namespace", name)
		return nil
	}
	if ns.DeletionTimestamp == nil {
		p.progressf("kubemark: deleting namespace %s of the root cluster", name)
		err := nss.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &ns.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting namespace %s from the root cluster: %w", name, err)
		}
	}
	return p.waitNamespaceGone(ctx)
}

func (p *Provider) waitNamespaceGone(ctx context.Context) error {
	name := p.m.Data.Namespace
	err := wait.PollUntilContextTimeout(ctx, time.Second, p.o.DeleteTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := p.root.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("namespace %s of the root cluster still there after %s (%s): %w; %s", name, p.o.DeleteTimeout, FlagDeleteTimeout, err, p.podSummary(context.WithoutCancel(ctx)))
	}
	return nil
}

// deleteNodes deletes the run's hollow Nodes from the test cluster: those
// with both the hollow label's kubemark value and the run's label.
func (p *Provider) deleteNodes(ctx context.Context) error {
	selector := p.NodeSelector()
	nodes := p.test.CoreV1().Nodes()
	list, err := nodes.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("test cluster: listing nodes %s: %w", selector, err)
	}
	if len(list.Items) == 0 {
		return nil
	}
	p.progressf("kubemark: deleting %d hollow nodes (%s) of the test cluster", len(list.Items), selector)
	if err := nodes.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: selector}); err != nil {
		return fmt.Errorf("test cluster: deleting nodes %s: %w", selector, err)
	}
	left := 0
	err = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := nodes.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, nil
		}
		left = len(list.Items)
		return left == 0, nil
	})
	if err != nil {
		return fmt.Errorf("test cluster: %d nodes %s left a minute after their deletion: %w", left, selector, err)
	}
	return nil
}

// podSummary describes the hollow-node pods of the root cluster, for an
// error: how many in each phase and why the first stuck one is stuck.
func (p *Provider) podSummary(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d := p.m.Data
	dep, err := p.m.Deployment()
	if err != nil || dep.Spec.Selector == nil {
		return "pods unknown"
	}
	sel := labels.SelectorFromSet(dep.Spec.Selector.MatchLabels).String()
	pods, err := p.root.CoreV1().Pods(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return fmt.Sprintf("listing the hollow-node pods in the root cluster: %v", err)
	}
	phases := map[string]int{}
	why := ""
	for i := range pods.Items {
		pod := &pods.Items[i]
		phases[string(pod.Status.Phase)]++
		if why == "" {
			why = stuckReason(pod)
		}
	}
	var parts []string
	for ph, n := range phases {
		parts = append(parts, fmt.Sprintf("%d %s", n, ph))
	}
	sort.Strings(parts)
	s := fmt.Sprintf("hollow-node pods in %s of the root cluster: %d", d.Namespace, len(pods.Items))
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	if why != "" {
		s += "; " + why
	}
	return s
}

func stuckReason(pod *v1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
			return fmt.Sprintf("pod %s not scheduled: %s", pod.Name, c.Message)
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" {
			return fmt.Sprintf("pod %s container %s: %s: %s", pod.Name, cs.Name, w.Reason, w.Message)
		}
		if t := cs.LastTerminationState.Terminated; t != nil {
			return fmt.Sprintf("pod %s container %s exited %d: %s", pod.Name, cs.Name, t.ExitCode, t.Message)
		}
	}
	return ""
}

func isLoopback(server string) bool {
	u, err := url.Parse(server)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
