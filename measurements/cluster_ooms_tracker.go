package measurements

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/measurements/procstat"
)

func init() {
	Register("ClusterOOMsTracker", SLO, func(string) Measurement { return &clusterOOMsTracker{} })
}

// oomEventReason is the reason node-problem-detector gives the events it
// posts when the kernel's OOM killer kills a process on a node.
const oomEventReason = "OOMKilling"

// oomMessage is the kernel's line node-problem-detector copies into the
// event: pid, process name, virtual memory.
var oomMessage = regexp.MustCompile(`Killed process (\d+) \((.+)\) total-vm:(\d+kB), anon-rss:\d+kB, file-rss:\d+kB.*`)

// clusterOOMsTracker is ClusterOOMsTracker: processes the kernel's OOM
// killer killed between start and gather, and a violation for each one
// not ignored. It reads two sources:
//
//   - the cluster's OOMKilling events, which node-problem-detector posts
//     on real nodes, as clusterloader2 does (hollow nodes post none);
//   - on the local provider, the OOM-kill counter of the memory cgroups
//     the control-plane processes run in: a kill there is reported with
//     the component whose process was replaced since start, when one was.
//
// Params, as clusterloader2 reads them: clusterOOMsTrackerEnabled
// (default false: the measurement does nothing), action start|gather,
// clusterOOMsIgnoredProcesses (comma-separated process names),
// clusterOOMsFailureEnabled (default true; false logs OOMs instead).
type clusterOOMsTracker struct {
	mu        sync.Mutex
	informers *informerSet
	started   time.Time
	ignored   map[string]bool
	ooms      []oomEvent
	seen      map[string]bool
	// cgroups are the OOM-kill counters at start by cgroup, and pids the
	// local components' processes at start by component name.
	cgroups map[string]uint64
	pids    map[string]int
}

// oomEvent is one OOM kill, as clusterloader2's file lists it.
type oomEvent struct {
	Node          string    `json:"node"`
	Process       string    `json:"process"`
	ProcessMemory string    `json:"memory"`
	ProcessID     string    `json:"pid"`
	Time          time.Time `json:"time"`
}

func (m *clusterOOMsTracker) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	enabled, err := params.Bool("clusterOOMsTrackerEnabled", false)
	if err != nil || !enabled {
		return nil, err
	}
	action, err := params.Action("start", "gather")
	if err != nil {
		return nil, err
	}
	if action == "start" {
		return nil, m.start(ctx, env, params)
	}
	failOnOOM, err := params.Bool("clusterOOMsFailureEnabled", true)
	if err != nil {
		return nil, err
	}
	return m.gather(env, failOnOOM)
}

func (m *clusterOOMsTracker) start(ctx context.Context, env *Env, params Params) error {
	if env == nil || env.Client == nil {
		return fmt.Errorf("no client for the cluster")
	}
	ignored, err := params.String("clusterOOMsIgnoredProcesses", "")
	if err != nil {
		return err
	}
	m.mu.Lock()
	if m.informers != nil {
		m.mu.Unlock()
		return nil
	}
	m.started, m.seen, m.ooms = env.now(), map[string]bool{}, nil
	m.ignored = map[string]bool{}
	for _, p := range strings.Split(ignored, ",") {
		if p = strings.TrimSpace(p); p != "" {
			m.ignored[p] = true
		}
	}
	m.cgroups, m.pids = map[string]uint64{}, map[string]int{}
	for _, c := range env.Components {
		if c.PID <= 0 {
			continue
		}
		kills, cgroup, err := procstat.OOMKills(c.PID)
		if err != nil {
			klog.InfoS("ClusterOOMsTracker: cannot read a component's OOM-kill counter", "component", c.Name, "err", err)
			continue
		}
		m.cgroups[cgroup], m.pids[c.Name] = kills, c.PID
	}
	m.mu.Unlock()
	sel := watchSelector{FieldSelector: "reason=" + oomEventReason}
	events := env.Client.CoreV1().Events(metav1.NamespaceAll)
	inf := cache.NewSharedIndexInformer(newSelectedListWatch(env.Client, sel,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return events.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return events.Watch(ctx, o) }),
		&corev1.Event{}, 0, cache.Indexers{})
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    m.record,
		UpdateFunc: func(_, obj any) { m.record(obj) },
	}); err != nil {
		return err
	}
	set, err := startInformerSet(ctx, "event", inf)
	if err != nil {
		return fmt.Errorf("starting to watch OOMKilling events: %w", err)
	}
	m.mu.Lock()
	m.informers = set
	m.mu.Unlock()
	return nil
}

// record keeps an OOMKilling event once, however often a relist shows it.
func (m *clusterOOMsTracker) record(obj any) {
	ev, ok := obj.(*corev1.Event)
	if !ok || ev.Reason != oomEventReason {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := string(ev.UID) + "/" + ev.ResourceVersion
	if m.seen[key] {
		return
	}
	m.seen[key] = true
	oom := oomEvent{Node: ev.InvolvedObject.Name, Time: ev.FirstTimestamp.Time}
	if !ev.EventTime.IsZero() {
		oom.Time = ev.EventTime.Time
	}
	if match := oomMessage.FindStringSubmatch(ev.Message); match != nil {
		oom.ProcessID, oom.Process, oom.ProcessMemory = match[1], match[2], match[3]
	} else {
		klog.InfoS("ClusterOOMsTracker: an OOMKilling event of an unknown message", "message", ev.Message)
	}
	m.ooms = append(m.ooms, oom)
}

func (m *clusterOOMsTracker) gather(env *Env, failOnOOM bool) ([]Summary, error) {
	m.mu.Lock()
	set := m.informers
	m.informers = nil
	m.mu.Unlock()
	if set == nil {
		return nil, fmt.Errorf("ClusterOOMsTracker was not started")
	}
	set.stop()
	m.mu.Lock()
	defer m.mu.Unlock()
	ooms := append([]oomEvent(nil), m.ooms...)
	ooms = append(ooms, m.localOOMs(env.now())...)
	file := map[string][]oomEvent{"failures": {}, "past": {}, "ignored": {}}
	for _, o := range ooms {
		switch {
		case o.Time.Before(m.started):
			file["past"] = append(file["past"], o)
		case m.ignored[o.Process]:
			file["ignored"] = append(file["ignored"], o)
		default:
			file["failures"] = append(file["failures"], o)
		}
	}
	s := Summary{
		// clusterloader2 names this summary without the identifier.
		Name:   "ClusterOOMsTracker",
		Output: file,
		Headline: map[string]float64{"ooms": float64(len(file["failures"])),
			"ignored ooms": float64(len(file["ignored"])), "ooms before start": float64(len(file["past"]))},
	}
	var bad []string
	for _, o := range file["failures"] {
		bad = append(bad, fmt.Sprintf("OOM kill of %s (pid %s) on %s at %s", o.Process, o.ProcessID, o.Node, o.Time.UTC().Format(time.RFC3339)))
	}
	if len(bad) > 0 && !failOnOOM {
		klog.InfoS("ClusterOOMsTracker: OOM kills recorded; clusterOOMsFailureEnabled is false", "ooms", bad)
		return []Summary{s}, nil
	}
	return []Summary{s}, violations(bad)
}

// localOOMs are the kills the local cgroups' counters rose by since start,
// each named after a component whose process was replaced, where one was.
func (m *clusterOOMsTracker) localOOMs(now time.Time) []oomEvent {
	var replaced []string
	for name, pid := range m.pids {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
			replaced = append(replaced, name)
		}
	}
	sort.Strings(replaced)
	var out []oomEvent
	for cgroup, before := range m.cgroups {
		kills, err := procstat.OOMKillsAt(cgroup)
		if err != nil || kills < before {
			continue
		}
		for i := uint64(0); i < kills-before; i++ {
			o := oomEvent{Node: "local", Process: "a process in " + cgroup, Time: now}
			if len(replaced) > 0 {
				o.Process = replaced[0]
				replaced = replaced[1:]
			}
			out = append(out, o)
		}
	}
	return out
}
