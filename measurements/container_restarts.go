package measurements

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/measurements/metrics"
)

func init() {
	Register("ContainerRestarts", SLO, func(string) Measurement { return &containerRestarts{} })
}

// containerRestarts is ContainerRestarts: `start` records the restart
// count of every container of the pods matching labelSelector (all pods by
// default) and follows pods with an informer; `gather` reports the
// restarts that happened since, per pod, and fails when a container
// restarted more than allowedRestarts times (default 0; clusterloader2's
// defaultAllowedRestarts is read too). Pods created after start count
// from zero; pods deleted before gather keep what was seen of them.
type containerRestarts struct {
	mu        sync.Mutex
	informers *informerSet
	synced    bool
	// base and last are restart counts by namespace/pod/container.
	base, last map[string]int32
}

func (r *containerRestarts) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather", "stop")
	if err != nil {
		return nil, err
	}
	switch action {
	case "start":
		return nil, r.start(ctx, env, params)
	case "stop":
		r.stop()
		return nil, nil
	}
	allowed, err := params.Int("defaultAllowedRestarts", 0)
	if err != nil {
		return nil, err
	}
	if allowed, err = params.Int("allowedRestarts", allowed); err != nil {
		return nil, err
	}
	r.mu.Lock()
	running := r.informers != nil
	r.mu.Unlock()
	if !running {
		return nil, fmt.Errorf("ContainerRestarts was not started")
	}
	r.stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	perPod := map[string]int{}
	file := containerRestartsFile{}
	var bad []string
	total := 0
	for _, key := range waitSortedKeys(r.last) {
		n := int(r.last[key] - r.base[key])
		if n <= 0 {
			continue
		}
		total += n
		if parts := strings.SplitN(key, "/", 3); len(parts) == 3 {
			file = append(file, containerRestart{Namespace: parts[0], Pod: parts[1], Container: parts[2], RestartCount: n})
		}
		perPod[key[:len(key)-len(restartKeyContainer(key))-1]] += n
		if n > allowed {
			bad = append(bad, fmt.Sprintf("container %s restarted %d times (allowed %d)", key, n, allowed))
		}
	}
	pods := make([]string, 0, len(perPod))
	for p := range perPod {
		pods = append(pods, p)
	}
	sort.Strings(pods)
	s := Summary{
		// clusterloader2 names this summary without the identifier.
		Name:       "ContainerRestarts",
		Output:     file,
		Headline:   map[string]float64{"restarts": float64(total), "pods restarted": float64(len(pods))},
		Thresholds: map[string]float64{"restarts per container": float64(allowed)},
		PerfData: &metrics.PerfData{Version: metrics.PerfDataVersion, DataItems: []metrics.DataItem{{
			Data: map[string]float64{"ContainerRestarts": float64(total), "PodsRestarted": float64(len(pods))},
		}}},
	}
	if len(pods) > 0 {
		var parts []string
		for _, p := range pods {
			parts = append(parts, fmt.Sprintf("%s: %d", p, perPod[p]))
		}
		klog.InfoS("Containers restarted during the run", "pods", waitFirstN(parts, 50))
	}
	return []Summary{s}, violations(bad)
}

// restartKeyContainer is the container part of a namespace/pod/container key.
func restartKeyContainer(key string) string {
	for i := len(key) - 1; i >= 0; i-- {
		if key[i] == '/' {
			return key[i+1:]
		}
	}
	return key
}

func (r *containerRestarts) start(ctx context.Context, env *Env, params Params) error {
	sel, err := parseWatchSelector(params)
	if err != nil {
		return err
	}
	if env == nil || env.Client == nil {
		return fmt.Errorf("no client for the cluster")
	}
	r.mu.Lock()
	if r.informers != nil {
		r.mu.Unlock()
		return nil
	}
	r.base, r.last, r.synced = map[string]int32{}, map[string]int32{}, false
	r.mu.Unlock()
	pods := env.Client.CoreV1().Pods(sel.Namespace)
	inf := cache.NewSharedIndexInformer(newSelectedListWatch(env.Client, sel,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return pods.Watch(ctx, o) }),
		&corev1.Pod{}, 0, cache.Indexers{})
	// Only restart counts are read: keep nothing else of the pods.
	_ = inf.SetTransform(func(obj any) (any, error) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return obj, nil
		}
		slim := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, ResourceVersion: p.ResourceVersion, Labels: p.Labels}}
		slim.Status.ContainerStatuses = p.Status.ContainerStatuses
		slim.Status.InitContainerStatuses = p.Status.InitContainerStatuses
		return slim, nil
	})
	handle := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || !sel.matchesLabels(p.Labels) {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, cs := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			key := p.Namespace + "/" + p.Name + "/" + cs.Name
			if _, seen := r.last[key]; !seen && !r.synced {
				// Present when start listed: what it had restarted
				// before the run does not count.
				r.base[key] = cs.RestartCount
			}
			if cs.RestartCount > r.last[key] || !r.synced {
				r.last[key] = cs.RestartCount
			}
		}
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, obj any) { handle(obj) },
	})
	if err != nil {
		return err
	}
	set, err := startInformerSet(ctx, "pod", inf)
	if err != nil {
		return fmt.Errorf("starting to watch pods (%s): %w", sel, err)
	}
	// Once the handler (not only the store) has seen the initial list,
	// every later add is a pod created during the run.
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		set.stop()
		return ctx.Err()
	}
	r.mu.Lock()
	r.informers, r.synced = set, true
	r.mu.Unlock()
	return nil
}

func (r *containerRestarts) stop() {
	r.mu.Lock()
	set := r.informers
	r.informers = nil
	r.mu.Unlock()
	set.stop()
}
