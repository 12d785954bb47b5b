package kubemark

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"

	"github.com/kscale/kscale/controlplane"
	"github.com/kscale/kscale/framework/binaries"
	"github.com/kscale/kscale/framework/provider"
	"github.com/kscale/kscale/framework/provider/local"
	"github.com/kscale/kscale/framework/provider/local/localtest"
)

// clusterOptions are the local tests' cluster options with the default
// node monitor grace period: hollow-node pods heartbeat through a root
// cluster on the same machine.
func clusterOptions() controlplane.Options {
	o := localtest.Options()
	o.ControllerManagerArgs = nil
	return o
}

// TestProvisionAndTeardown runs the provider against two real local
// clusters: a root cluster for the hollow-node pods and a test cluster for
// the nodes. The root cluster has no nodes that run containers, so the test
// is its kubelet: it runs each hollow-node pod's container as a local
// kubemark process, from the pod spec and the Secret and ConfigMap read back
// from the root cluster.
func TestProvisionAndTeardown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "kscale-kubemark-it-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if !t.Failed() {
			os.RemoveAll(dir)
		} else {
			t.Logf("folder %s kept for its logs", dir)
		}
	}()

	// Both clusters at once: bringing one up is mostly waiting.
	var root, test *local.ControlPlane
	var rootErr, testErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		root, rootErr = local.Start(ctx, filepath.Join(dir, "root"), clusterOptions(), nil)
	}()
	go func() {
		defer wg.Done()
		test, testErr = local.Start(ctx, filepath.Join(dir, "test"), clusterOptions(), nil)
	}()
	wg.Wait()
	for _, c := range []*local.ControlPlane{root, test} {
		if c != nil {
			defer func() {
				stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := c.Stop(stopCtx); err != nil {
					t.Errorf("stopping cluster %s: %v", c.Dir.Path(), err)
				}
			}()
		}
	}
	if rootErr != nil || testErr != nil {
		t.Fatalf("starting the clusters: root: %v; test: %v", rootErr, testErr)
	}

	// What the provider must leave alone: a user's namespace in the root,
	// a real node and another provider's hollow node in the test cluster.
	userNS := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "user-stuff", Labels: map[string]string{"team": "a"}}}
	if _, err := root.Client.CoreV1().Namespaces().Create(ctx, userNS, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*v1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "real-node-1"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "local-fleet-0", Labels: map[string]string{HollowLabel: "fleet-0"}}},
	} {
		if _, err := test.Client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// The root's node, as the provider's capacity check reads it: the
	// test runs its pods.
	rootNode := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "root-node", Labels: map[string]string{"role": "real"}},
		Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: "role", Value: "real", Effect: v1.TaintEffectNoSchedule}}}}
	if rootNode, err = root.Client.CoreV1().Nodes().Create(ctx, rootNode, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := root.Client.CoreV1().Nodes().Get(ctx, rootNode.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("8"), v1.ResourceMemory: resource.MustParse("16Gi"), v1.ResourcePods: resource.MustParse("110")}
		_, err = root.Client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}

	po := provider.Options{
		Nodes: 30, NodesPerFleet: 10, Hollow: provider.HollowFleet, MaxPods: 50,
		Kubeconfig: test.Dir.AdminKubeconfig(), RootKubeconfig: root.Dir.AdminKubeconfig(),
		// Three fleets share this machine's loopback: no fixed port.
		HollowArgs: []string{"--fleet-metrics-bind-address=127.0.0.1:0"},
		Progress:   &testWriter{t: t},
	}
	o := DefaultOptions()
	o.Image = "kscale.invalid/kubemark:test"
	o.Name = "it-run"
	// The root's node has no kubelet: tolerate what the node lifecycle
	// controller taints it with.
	o.Tolerations = []string{"role=real:NoSchedule", "dedicated:NoExecute", "node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready"}
	o.NodeSelector = []string{"role=real"}
	o.HostAliases = []string{"127.0.0.1=apiserver.test"}
	o.StepTimeout = 2 * time.Minute
	o.DeleteTimeout = time.Minute

	t.Run("refuses a namespace kscale did not create", func(t *testing.T) {
		taken := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "taken"}}
		if _, err := root.Client.CoreV1().Namespaces().Create(ctx, taken, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ro := o
		ro.Namespace = "taken"
		p, err := New(po, ro)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Provision(ctx)
		wantErr(t, err, "--kubemark-namespace=taken", "not by kscale", "will not touch it")
		if err := p.Teardown(ctx); err != nil {
			t.Errorf("teardown after a refusal: %v", err)
		}
		ns, err := root.Client.CoreV1().Namespaces().Get(ctx, "taken", metav1.GetOptions{})
		if err != nil || ns.DeletionTimestamp != nil || ns.Labels[OwnerLabel] != "" {
			t.Errorf("the refused namespace was touched: %+v, %v", ns, err)
		}
		for _, name := range []string{SecretName, ConfigMapName} {
			if _, err := root.Client.CoreV1().Secrets("taken").Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("secret %s in the refused namespace: %v", name, err)
			}
		}
		if _, err := root.Client.AppsV1().Deployments("taken").Get(ctx, DeploymentName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("deployment in the refused namespace: %v", err)
		}
	})

	p, err := New(po, o)
	if err != nil {
		t.Fatal(err)
	}
	m := p.Manifests()
	kubemark, err := binaries.Path(ctx, binaries.Kubemark)
	if err != nil {
		t.Fatal(err)
	}
	dep, err := m.Deployment()
	if err != nil {
		t.Fatal(err)
	}
	kubelet := startFakeKubelet(t, ctx, root.Client, o.Namespace, labels.SelectorFromSet(dep.Spec.Selector.MatchLabels).String(), kubemark, filepath.Join(dir, "pods"))
	defer kubelet.stopAll()

	var cluster *provider.Cluster
	ok := t.Run("provision", func(t *testing.T) {
		cluster, err = p.Provision(ctx)
		if err != nil {
			t.Fatalf("provision: %v\n%s", err, kubelet.logs())
		}
		if cluster.Nodes != 30 || cluster.Kubeconfig != po.Kubeconfig || cluster.Hollow == nil ||
			cluster.Hollow.Kind != provider.HollowFleet || cluster.Hollow.Nodes != 30 || cluster.Hollow.Processes != 3 {
			t.Errorf("cluster %+v hollow %+v", cluster, cluster.Hollow)
		}
		if n := len(cluster.NodesReady); n == 0 || cluster.NodesReady[n-1].Y != 30 {
			t.Errorf("nodes-ready series %v does not end at 30", cluster.NodesReady)
		}
		nodes, err := test.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: p.NodeSelector()})
		if err != nil {
			t.Fatal(err)
		}
		ready := 0
		pods := kubelet.podNames()
		for i := range nodes.Items {
			n := &nodes.Items[i]
			if local.NodeReady(n) {
				ready++
			}
			// A fleet's nodes are <pod name>-<index>.
			if i := strings.LastIndex(n.Name, "-"); i < 0 || !pods[n.Name[:i]] {
				t.Errorf("node %s is not named after a hollow-node pod %v", n.Name, pods)
			}
		}
		if ready != 30 || len(pods) != 3 {
			t.Errorf("%d Ready nodes from %d pods, want 30 from 3", ready, len(pods))
		}
	})
	if ok {
		t.Run("applied objects match the rendered ones", func(t *testing.T) {
			checkApplied(t, ctx, root.Client, p.Manifests()) // rendered again with the run's credentials
		})
	}

	t.Run("teardown", func(t *testing.T) {
		// Hollow nodes joined with a bootstrap token cannot delete their
		// Nodes, whether their fleet stopped or crashed: Teardown does.
		crashed := kubelet.crashOne()
		if crashed == "" {
			t.Fatal("no fleet process to crash")
		}
		if _, err := test.Client.CoreV1().Nodes().Get(ctx, crashed+"-9", metav1.GetOptions{}); err != nil {
			t.Fatalf("the crashed fleet's node: %v", err)
		}
		if err := p.Teardown(ctx); err != nil {
			t.Fatalf("teardown: %v", err)
		}
		nodes, err := test.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: p.NodeSelector()})
		if err != nil || len(nodes.Items) != 0 {
			t.Errorf("hollow nodes left: %d, %v", len(nodes.Items), err)
		}
		for _, name := range []string{"real-node-1", "local-fleet-0"} {
			if _, err := test.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err != nil {
				t.Errorf("node %s not left alone: %v", name, err)
			}
		}
		if _, err := root.Client.CoreV1().Namespaces().Get(ctx, o.Namespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("namespace %s still in the root cluster: %v", o.Namespace, err)
		}
		for _, name := range []string{"user-stuff", "taken"} {
			ns, err := root.Client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
			if err != nil || ns.DeletionTimestamp != nil {
				t.Errorf("namespace %s not left alone: %v", name, err)
			}
		}
		if err := kubelet.waitStopped(time.Minute); err != nil {
			t.Error(err)
		}
		// Twice is harmless.
		if err := p.Teardown(ctx); err != nil {
			t.Errorf("second teardown: %v", err)
		}
	})
}

// checkApplied reads every object back from the root cluster and compares
// it with the rendered one, field by field.
func checkApplied(t *testing.T, ctx context.Context, root kubernetes.Interface, m *Manifests) {
	ns := m.Data.Namespace
	labelsOf := func(kind string, got map[string]string, want map[string]string) {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: label %s=%q, rendered %q", kind, k, got[k], v)
			}
		}
	}
	for _, obj := range m.Objects {
		switch obj.GetKind() {
		case "Namespace":
			got, err := root.CoreV1().Namespaces().Get(ctx, obj.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			labelsOf("Namespace", got.Labels, obj.GetLabels())
		case "Secret":
			var want v1.Secret
			convert(t, obj.Object, &want)
			got, err := root.CoreV1().Secrets(ns).Get(ctx, obj.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			labelsOf("Secret", got.Labels, want.Labels)
			if !reflect.DeepEqual(got.Data, want.Data) || got.Type != want.Type {
				t.Errorf("Secret data or type differ from the rendered ones")
			}
		case "ConfigMap":
			var want v1.ConfigMap
			convert(t, obj.Object, &want)
			got, err := root.CoreV1().ConfigMaps(ns).Get(ctx, obj.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			labelsOf("ConfigMap", got.Labels, want.Labels)
			if !reflect.DeepEqual(got.Data, want.Data) {
				t.Errorf("ConfigMap data %v, rendered %v", got.Data, want.Data)
			}
		case "Deployment":
			var want appsv1.Deployment
			convert(t, obj.Object, &want)
			got, err := root.AppsV1().Deployments(ns).Get(ctx, obj.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			labelsOf("Deployment", got.Labels, want.Labels)
			if *got.Spec.Replicas != *want.Spec.Replicas {
				t.Errorf("replicas %d, rendered %d", *got.Spec.Replicas, *want.Spec.Replicas)
			}
			if !reflect.DeepEqual(got.Spec.Selector, want.Spec.Selector) {
				t.Errorf("selector %v, rendered %v", got.Spec.Selector, want.Spec.Selector)
			}
			gs, ws := got.Spec.Template.Spec, want.Spec.Template.Spec
			labelsOf("pod template", got.Spec.Template.Labels, want.Spec.Template.Labels)
			for field, pair := range map[string][2]any{
				"annotations":  {got.Spec.Template.Annotations, want.Spec.Template.Annotations},
				"tolerations":  {gs.Tolerations, ws.Tolerations},
				"nodeSelector": {gs.NodeSelector, ws.NodeSelector},
				"hostAliases":  {gs.HostAliases, ws.HostAliases},
				"affinity":     {gs.Affinity, ws.Affinity},
				"volumes":      {volumeSecrets(gs.Volumes), volumeSecrets(ws.Volumes)},
			} {
				if !reflect.DeepEqual(pair[0], pair[1]) {
					t.Errorf("pod %s %+v, rendered %+v", field, pair[0], pair[1])
				}
			}
			if len(gs.Containers) != len(ws.Containers) {
				t.Fatalf("%d containers, rendered %d", len(gs.Containers), len(ws.Containers))
			}
			for i, wc := range ws.Containers {
				gc := gs.Containers[i]
				for field, pair := range map[string][2]any{
					"name":         {gc.Name, wc.Name},
					"image":        {gc.Image, wc.Image},
					"pullPolicy":   {gc.ImagePullPolicy, wc.ImagePullPolicy},
					"command":      {gc.Command, wc.Command},
					"args":         {gc.Args, wc.Args},
					"env":          {gc.Env, wc.Env},
					"volumeMounts": {gc.VolumeMounts, wc.VolumeMounts},
					"ports":        {gc.Ports, wc.Ports},
				} {
					if !reflect.DeepEqual(pair[0], pair[1]) {
						t.Errorf("container %s %s %+v, rendered %+v", wc.Name, field, pair[0], pair[1])
					}
				}
				for name, q := range wc.Resources.Requests {
					if g := gc.Resources.Requests[name]; g.Cmp(q) != 0 {
						t.Errorf("container %s request %s %s, rendered %s", wc.Name, name, g.String(), q.String())
					}
				}
			}
		default:
			t.Errorf("unexpected rendered %s", obj.GetKind())
		}
	}
}

func volumeSecrets(vs []v1.Volume) map[string]string {
	out := map[string]string{}
	for _, v := range vs {
		if v.Secret != nil {
			out[v.Name] = v.Secret.SecretName
		}
	}
	return out
}

func convert(t *testing.T, u map[string]any, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, into); err != nil {
		t.Fatal(err)
	}
}

// testWriter sends progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w *testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// fakeKubelet runs the root cluster's hollow-node pods as local processes.
type fakeKubelet struct {
	t        *testing.T
	ctx      context.Context
	client   kubernetes.Interface
	ns       string
	kubemark string
	dir      string
	stop     context.CancelFunc

	mu    sync.Mutex
	procs map[types.UID]*podProcess
	names map[string]bool
	errs  []error
}

type podProcess struct {
	pod  string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func startFakeKubelet(t *testing.T, ctx context.Context, client kubernetes.Interface, ns, selector, kubemark, dir string) *fakeKubelet {
	ctx, stop := context.WithCancel(ctx)
	k := &fakeKubelet{t: t, ctx: ctx, client: client, ns: ns, kubemark: kubemark, dir: dir, stop: stop,
		procs: map[types.UID]*podProcess{}, names: map[string]bool{}}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	inf := factory.Core().V1().Pods().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { k.sync(obj.(*v1.Pod)) },
		UpdateFunc: func(_, obj any) { k.sync(obj.(*v1.Pod)) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if pod, ok := obj.(*v1.Pod); ok {
				k.kill(pod.UID)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	return k
}

func (k *fakeKubelet) sync(pod *v1.Pod) {
	if pod.DeletionTimestamp != nil {
		k.kill(pod.UID)
		// As a kubelet, confirm the pod is gone once its process is.
		zero := int64(0)
		_ = k.client.CoreV1().Pods(pod.Namespace).Delete(k.ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &pod.UID}})
		return
	}
	k.mu.Lock()
	_, running := k.procs[pod.UID]
	k.mu.Unlock()
	if running {
		return
	}
	p, err := k.start(pod)
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil {
		k.errs = append(k.errs, fmt.Errorf("pod %s: %w", pod.Name, err))
		return
	}
	k.procs[pod.UID] = p
	k.names[pod.Name] = true
}

// start runs the pod's one container the way a kubelet would: environment
// from the spec (downward API, ConfigMap keys), $(VAR) expanded in command
// and args, volumes written from the Secret and ConfigMap read back from
// the root cluster and their mount paths mapped to those folders.
func (k *fakeKubelet) start(pod *v1.Pod) (*podProcess, error) {
	if len(pod.Spec.Containers) != 1 {
		return nil, fmt.Errorf("%d containers; the fleet layout has one", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	podDir := filepath.Join(k.dir, pod.Name)
	env := map[string]string{}
	var envList []string
	for _, e := range c.Env {
		value := expand(e.Value, env)
		if src := e.ValueFrom; src != nil {
			switch {
			case src.FieldRef != nil:
				switch src.FieldRef.FieldPath {
				case "metadata.name":
					value = pod.Name
				case "metadata.namespace":
					value = pod.Namespace
				default:
					return nil, fmt.Errorf("env %s: field %s not supported here", e.Name, src.FieldRef.FieldPath)
				}
			case src.ConfigMapKeyRef != nil:
				cm, err := k.client.CoreV1().ConfigMaps(pod.Namespace).Get(k.ctx, src.ConfigMapKeyRef.Name, metav1.GetOptions{})
				if err != nil {
					return nil, err
				}
				v, ok := cm.Data[src.ConfigMapKeyRef.Key]
				if !ok {
					return nil, fmt.Errorf("env %s: ConfigMap %s has no key %s", e.Name, cm.Name, src.ConfigMapKeyRef.Key)
				}
				value = v
			default:
				return nil, fmt.Errorf("env %s: source not supported here", e.Name)
			}
		}
		env[e.Name] = value
		envList = append(envList, e.Name+"="+value)
	}
	mounts := map[string]string{}
	for _, vm := range c.VolumeMounts {
		var vol *v1.Volume
		for i := range pod.Spec.Volumes {
			if pod.Spec.Volumes[i].Name == vm.Name {
				vol = &pod.Spec.Volumes[i]
			}
		}
		if vol == nil || vol.Secret == nil {
			return nil, fmt.Errorf("volume mount %s: only Secret volumes here", vm.Name)
		}
		secret, err := k.client.CoreV1().Secrets(pod.Namespace).Get(k.ctx, vol.Secret.SecretName, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		local := filepath.Join(podDir, "volumes", vm.Name)
		if err := os.MkdirAll(local, 0o700); err != nil {
			return nil, err
		}
		for key, data := range secret.Data {
			if err := os.WriteFile(filepath.Join(local, key), data, 0o600); err != nil {
				return nil, err
			}
		}
		mounts[vm.MountPath] = local
	}
	argv := append(append([]string{}, c.Command...), c.Args...)
	for i := range argv {
		argv[i] = expand(argv[i], env)
		for mountPath, local := range mounts {
			argv[i] = strings.ReplaceAll(argv[i], mountPath+"/", local+"/")
		}
	}
	if len(argv) == 0 || filepath.Base(argv[0]) != "kubemark" {
		return nil, fmt.Errorf("command %q does not run kubemark", argv)
	}
	logPath := filepath.Join(podDir, "kubemark.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(k.kubemark, argv[1:]...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, envList...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	p := &podProcess{pod: pod.Name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// expand replaces $(VAR) with defined variables and $$ with $, as the
// kubelet does in a container's command and args.
func expand(s string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) {
			if s[i+1] == '$' {
				b.WriteByte('$')
				i++
				continue
			}
			if s[i+1] == '(' {
				if end := strings.IndexByte(s[i+2:], ')'); end >= 0 {
					if v, ok := env[s[i+2:i+2+end]]; ok {
						b.WriteString(v)
						i += 2 + end
						continue
					}
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// kill stops a pod's process as a kubelet does: SIGTERM, then SIGKILL after
// the grace period.
func (k *fakeKubelet) kill(uid types.UID) {
	k.mu.Lock()
	p := k.procs[uid]
	k.mu.Unlock()
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	go func() {
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
		}
	}()
}

// crashOne SIGKILLs one pod's process, as a crash, and returns the pod's name.
func (k *fakeKubelet) crashOne() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.procs {
		_ = p.cmd.Process.Kill()
		<-p.done
		return p.pod
	}
	return ""
}

func (k *fakeKubelet) podNames() map[string]bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]bool{}
	for n := range k.names {
		out[n] = true
	}
	return out
}

// waitStopped waits for every process to exit and reports start errors.
func (k *fakeKubelet) waitStopped(timeout time.Duration) error {
	deadline := time.After(timeout)
	k.mu.Lock()
	procs := make([]*podProcess, 0, len(k.procs))
	for _, p := range k.procs {
		procs = append(procs, p)
	}
	errs := append([]error(nil), k.errs...)
	k.mu.Unlock()
	for _, p := range procs {
		select {
		case <-p.done:
		case <-deadline:
			return fmt.Errorf("process of pod %s still running %s after teardown", p.pod, timeout)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("fake kubelet: %v", errs)
	}
	return nil
}

// logs are the tails of the processes' logs, for a failure message.
func (k *fakeKubelet) logs() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var b bytes.Buffer
	for _, err := range k.errs {
		fmt.Fprintf(&b, "fake kubelet: %v\n", err)
	}
	for _, p := range k.procs {
		data, _ := os.ReadFile(p.log)
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		fmt.Fprintf(&b, "--- %s (%s)\n%s\n", p.pod, p.log, strings.Join(lines[max(0, len(lines)-15):], "\n"))
	}
	return b.String()
}

func (k *fakeKubelet) stopAll() {
	k.stop()
	k.mu.Lock()
	procs := k.procs
	k.mu.Unlock()
	for uid, p := range procs {
		k.kill(uid)
		select {
		case <-p.done:
		case <-time.After(35 * time.Second):
			k.t.Errorf("process of pod %s did not exit", p.pod)
		}
	}
}
