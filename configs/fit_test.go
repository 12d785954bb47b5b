package configs

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kscale/kscale/framework/config"
)

// A hollow node's allocatable (kubemark/fleet.DefaultConfig and
// capacityFor): one core, 3840Mi less the 100Mi the hard eviction
// threshold keeps, 110 pods.
const (
	nodeCPUMillis = 1000
	nodeMemory    = 3740 << 20
	nodeMaxPods   = 110
	// fitShare is the share of the nodes' allocatable a config may ask
	// for at its peak, leaving room for uneven spreading by the scheduler.
	fitShare = 0.9
)

// fitNodeCounts are the --nodes values every shipped config must fit, with
// and without each of its overrides files.
var fitNodeCounts = []int{1, 5, 20, 100, 5000}

// podBudget is how many pods of one group (the pods' "group" label) a
// config means to run, from its parameters: once the step that creates
// them is done, and at most at any time.
type podBudget struct {
	group         string
	created, peak func(p params, nodes int) int64
	// main marks the group that carries the config's load: from 20 nodes
	// on its created pods must come to at least half of its budget, so
	// that a config cannot pass by creating next to nothing.
	main bool
}

// podBudgets are, per shipped config, what its parameters say it runs.
var podBudgets = map[string][]podBudget{
	"density": {
		{group: "saturation", main: true, created: perNode("PODS_PER_NODE", 1), peak: perNode("PODS_PER_NODE", 1)},
		{group: "latency", created: latencyPods, peak: latencyPods},
	},
	"load": {
		// The Scaling step grows each Deployment to 3 × (size / 2).
		{group: "load", main: true, created: perNode("PODS_PER_NODE", 1), peak: perNode("PODS_PER_NODE", 1.5)},
	},
	"apilatency": {
		// Each Deployment's one pod, and a surge pod while a patch rolls it.
		{group: "apilatency", main: true, created: perNode("DEPLOYMENTS_PER_NODE", 1), peak: perNode("DEPLOYMENTS_PER_NODE", 2)},
	},
}

// perNode is factor × the parameter × the nodes.
func perNode(param string, factor float64) func(params, int) int64 {
	return func(p params, nodes int) int64 { return int64(factor * float64(p.int(param)*int64(nodes))) }
}

// latencyPods are density's: max(MIN_LATENCY_PODS, nodes), at most
// MAX_LATENCY_PODS_PER_NODE per node.
func latencyPods(p params, nodes int) int64 {
	n := int64(nodes)
	return min(max(p.int("MIN_LATENCY_PODS"), n), p.int("MAX_LATENCY_PODS_PER_NODE")*n)
}

// TestShippedConfigsFitTheNodes compiles every shipped config at each of
// fitNodeCounts, with its defaults and with each overrides file, and
// checks that the load it asks for fits that many hollow nodes: the pods,
// CPU and memory requested at the busiest step stay under fitShare of the
// nodes' allocatable, every pod group stays within what the config's
// parameters say per node, and no step creates a pod-less controller.
//
// Pods are counted by replaying the phases as the executor does: each
// phase brings (namespace, basename, kind) to replicasPerNamespace
// objects; each object is rendered from its template and templateFillMap
// to read its pods (Deployment replicas, Job parallelism, ...) and their
// requests. A step's count is, per object, the larger of before and after
// the step (phases of a step run in parallel), plus the surge pods of a
// Deployment whose pod template the step changes (a rolling update).
// Objects are assumed alike across indices and namespaces, true of the
// shipped templates; Jobs are counted as if their pods never finished.
func TestShippedConfigsFitTheNodes(t *testing.T) {
	configs, err := filepath.Glob(filepath.Join("*", "config.yaml"))
	if err != nil || len(configs) == 0 {
		t.Fatalf("no configs found: %v", err)
	}
	for _, path := range configs {
		suite := filepath.Dir(path)
		overrides, err := filepath.Glob(filepath.Join(suite, "overrides", "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, ov := range append([]string{""}, overrides...) {
			label := "defaults"
			var ovs []string
			if ov != "" {
				label = strings.TrimSuffix(filepath.Base(ov), ".yaml")
				ovs = []string{ov}
			}
			for _, nodes := range fitNodeCounts {
				t.Run(fmt.Sprintf("%s/%s/nodes=%d", suite, label, nodes), func(t *testing.T) {
					checkFits(t, suite, ovs, nodes)
				})
			}
		}
	}
}

func checkFits(t *testing.T, suite string, overrides []string, nodes int) {
	path := filepath.Join(suite, "config.yaml")
	c, err := config.Compile(path, config.Options{Nodes: nodes, Overrides: overrides, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	p := loadParams(t, path, c.Mapping)
	nsCount := c.Config.Namespace.Number
	if nsCount < 1 {
		t.Errorf("namespace.number = %d", nsCount)
	}
	peak, byGroup, created := replayPhases(t, c, nsCount)

	n := int64(nodes)
	if lim := int64(fitShare * nodeMaxPods * float64(n)); peak.pods > lim {
		t.Errorf("%d pods at the busiest step; %d nodes hold %d (%.0f%% of %d each)", peak.pods, n, lim, fitShare*100, nodeMaxPods)
	}
	if lim := int64(fitShare * nodeCPUMillis * float64(n)); peak.cpuMillis > lim {
		t.Errorf("%dm CPU requested at the busiest step; %d nodes hold %dm (%.0f%% of %dm each)", peak.cpuMillis, n, lim, fitShare*100, nodeCPUMillis)
	}
	if lim := int64(fitShare * nodeMemory * float64(n)); peak.memory > lim {
		t.Errorf("%dMi memory requested at the busiest step; %d nodes hold %dMi (%.0f%% of %dMi each)", peak.memory>>20, n, lim>>20, fitShare*100, nodeMemory>>20)
	}
	budgets := podBudgets[suite]
	if budgets == nil {
		t.Fatalf("no pod budget for %s: add one to podBudgets", suite)
	}
	known := map[string]bool{}
	for _, b := range budgets {
		known[b.group] = true
		if got, want := created[b.group].pods, b.created(p, nodes); got > want {
			t.Errorf("%d %s pods once created; the parameters say at most %d at %d nodes", got, b.group, want, nodes)
		} else if b.main && nodes >= 20 && 2*got < want {
			t.Errorf("only %d %s pods once created; the parameters say %d at %d nodes", got, b.group, want, nodes)
		}
		if got, want := byGroup[b.group].pods, b.peak(p, nodes); got > want {
			t.Errorf("%d %s pods at their busiest step; the parameters say at most %d at %d nodes", got, b.group, want, nodes)
		}
	}
	for g, l := range byGroup {
		if !known[g] && l.pods > 0 {
			t.Errorf("%d pods of group %q, which podBudgets does not know", l.pods, g)
		}
	}
	var groups []string
	for _, g := range slices.Sorted(maps.Keys(created)) {
		groups = append(groups, fmt.Sprintf("%s %d", g, created[g].pods))
	}
	t.Logf("%d nodes, %d namespaces: created %s; peak %d pods (%.1f/node), %dm CPU (%.0f%%), %dMi memory (%.0f%%)",
		nodes, nsCount, strings.Join(groups, ", "), peak.pods, float64(peak.pods)/float64(n),
		peak.cpuMillis, 100*float64(peak.cpuMillis)/float64(n*nodeCPUMillis),
		peak.memory>>20, 100*float64(peak.memory)/float64(n*nodeMemory))
}

// podLoad is pods and their summed requests.
type podLoad struct{ pods, cpuMillis, memory int64 }

func (l podLoad) times(k int64) podLoad {
	return podLoad{l.pods * k, l.cpuMillis * k, l.memory * k}
}

func (l podLoad) plus(o podLoad) podLoad {
	return podLoad{l.pods + o.pods, l.cpuMillis + o.cpuMillis, l.memory + o.memory}
}

func maxLoad(a, b podLoad) podLoad {
	return podLoad{max(a.pods, b.pods), max(a.cpuMillis, b.cpuMillis), max(a.memory, b.memory)}
}

// objectInfo is what one rendered object contributes.
type objectInfo struct {
	kind     string // apiVersion/kind
	group    string // the pods' group label
	perObj   podLoad
	surge    podLoad // extra pods while a rolling update runs
	template string  // the rendered pod template
}

type objectKey struct{ namespace, basename, kind string }

type objectState struct {
	replicas int64
	info     objectInfo
}

// replayPhases applies the config's phases in order and returns the load
// at the busiest step, over all pods and per group (each group's own
// busiest step), and per group the pods the first step that creates some
// leaves.
func replayPhases(t *testing.T, c *config.Compiled, nsCount int) (peak podLoad, byGroup, created map[string]podLoad) {
	t.Helper()
	state := map[objectKey]objectState{}
	byGroup, created = map[string]podLoad{}, map[string]podLoad{}
	for si, step := range c.Config.Steps {
		if len(step.Phases) == 0 {
			continue
		}
		next := maps.Clone(state)
		for pi, ph := range step.Phases {
			where := fmt.Sprintf("step %d %q, phase %d", si, step.Name, pi)
			var namespaces []string
			switch {
			case ph.NamespaceRange != nil:
				r := ph.NamespaceRange
				if r.Min < 1 || r.Max > nsCount || r.Min > r.Max {
					t.Errorf("%s: namespaceRange %d..%d outside the config's %d namespaces", where, r.Min, r.Max, nsCount)
				}
				for i := r.Min; i <= r.Max; i++ {
					namespaces = append(namespaces, strconv.Itoa(i))
				}
			case len(ph.NamespaceList) > 0:
				namespaces = ph.NamespaceList
			default:
				namespaces = []string{""}
			}
			for _, o := range ph.ObjectBundle {
				info := renderInfo(t, c, o, ph.ReplicasPerNamespace == 0)
				if ph.ReplicasPerNamespace > 0 && info.template != "" && info.perObj.pods < 1 {
					t.Errorf("%s: creates %s %s with no pods", where, info.kind, o.Basename)
				}
				for _, ns := range namespaces {
					k := objectKey{ns, o.Basename, info.kind}
					if ph.ReplicasPerNamespace == 0 {
						delete(next, k)
					} else {
						next[k] = objectState{int64(ph.ReplicasPerNamespace), info}
					}
				}
			}
		}
		stepTotal := podLoad{}
		stepGroup := map[string]podLoad{}
		for k := range joinKeys(state, next) {
			b, hadB := state[k]
			a, hasA := next[k]
			l := maxLoad(b.info.perObj.times(b.replicas), a.info.perObj.times(a.replicas))
			if hadB && hasA && a.info.template != b.info.template {
				l = l.plus(a.info.surge.times(a.replicas))
			}
			g := a.info.group
			if !hasA {
				g = b.info.group
			}
			stepTotal = stepTotal.plus(l)
			stepGroup[g] = stepGroup[g].plus(l)
		}
		peak = maxLoad(peak, stepTotal)
		for g, l := range stepGroup {
			byGroup[g] = maxLoad(byGroup[g], l)
		}
		after := map[string]podLoad{}
		for _, o := range next {
			after[o.info.group] = after[o.info.group].plus(o.info.perObj.times(o.replicas))
		}
		for g, l := range after {
			if _, ok := created[g]; !ok && l.pods > 0 {
				created[g] = l
			}
		}
		state = next
	}
	return peak, byGroup, created
}

func joinKeys(a, b map[objectKey]objectState) map[objectKey]bool {
	keys := map[objectKey]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

// renderInfo renders object o at index 0 and reads its pods.
func renderInfo(t *testing.T, c *config.Compiled, o config.Object, deleting bool) objectInfo {
	t.Helper()
	out, err := c.RenderObject(o.ObjectTemplatePath, config.ObjectVars{
		Name: o.Basename + "-0", BaseName: o.Basename, Namespace: "ns-1", TemplateFillMap: o.TemplateFillMap, Lenient: deleting,
	})
	if err != nil {
		t.Fatalf("%s: %v", o.ObjectTemplatePath, err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(out, &obj); err != nil {
		t.Fatalf("%s: %v", o.ObjectTemplatePath, err)
	}
	kind := fmt.Sprint(obj["kind"])
	info := objectInfo{kind: fmt.Sprint(obj["apiVersion"]) + "/" + kind}
	if deleting {
		return info // only the kind is known, and needed
	}
	spec := mapAt(obj, "spec")
	var podMeta, podSpec map[string]any
	var pods int64
	switch kind {
	case "Pod":
		podMeta, podSpec, pods = mapAt(obj, "metadata"), spec, 1
	case "Deployment", "ReplicaSet", "ReplicationController", "StatefulSet":
		pods = intAt(t, spec, "replicas", 1)
	case "Job":
		pods = min(intAt(t, spec, "parallelism", 1), intAt(t, spec, "completions", 1<<40))
	default:
		if spec["template"] != nil || spec["jobTemplate"] != nil {
			t.Fatalf("%s: cannot count the pods of a %s", o.ObjectTemplatePath, kind)
		}
		return info // no pods
	}
	if podSpec == nil {
		tmpl := mapAt(spec, "template")
		podMeta, podSpec = mapAt(tmpl, "metadata"), mapAt(tmpl, "spec")
		b, err := yaml.Marshal(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		info.template = string(b)
	} else {
		info.template = string(out)
	}
	info.group = fmt.Sprint(mapAt(podMeta, "labels")["group"])
	per := podRequests(t, podSpec)
	info.perObj = per.times(pods)
	if kind == "Deployment" {
		// The default rolling update: maxSurge 25%, rounded up.
		if s := mapAt(spec, "strategy"); len(s) > 0 {
			t.Fatalf("%s: counting the surge of a Deployment strategy is not implemented", o.ObjectTemplatePath)
		}
		info.surge = per.times((pods + 3) / 4)
	}
	return info
}

// podRequests sums one pod's container requests (an init container's, if
// larger, as the scheduler does).
func podRequests(t *testing.T, spec map[string]any) podLoad {
	l := podLoad{pods: 1}
	read := func(c any) (int64, int64) {
		m, _ := c.(map[string]any)
		req := mapAt(mapAt(m, "resources"), "requests")
		var cpu, mem int64
		if v, ok := req["cpu"]; ok {
			cpu = quantity(t, v).MilliValue()
		}
		if v, ok := req["memory"]; ok {
			mem = quantity(t, v).Value()
		}
		return cpu, mem
	}
	for _, c := range listAt(spec, "containers") {
		cpu, mem := read(c)
		l.cpuMillis += cpu
		l.memory += mem
	}
	for _, c := range listAt(spec, "initContainers") {
		cpu, mem := read(c)
		l.cpuMillis, l.memory = max(l.cpuMillis, cpu), max(l.memory, mem)
	}
	return l
}

func quantity(t *testing.T, v any) *resource.Quantity {
	q, err := resource.ParseQuantity(fmt.Sprint(v))
	if err != nil {
		t.Fatalf("request %v: %v", v, err)
	}
	return &q
}

func mapAt(m map[string]any, key string) map[string]any {
	v, _ := m[key].(map[string]any)
	return v
}

func listAt(m map[string]any, key string) []any {
	v, _ := m[key].([]any)
	return v
}

func intAt(t *testing.T, m map[string]any, key string, def int64) int64 {
	v, ok := m[key]
	if !ok {
		return def
	}
	i, ok := v.(int)
	if !ok {
		t.Fatalf("%s: %v is not a number", key, v)
	}
	return int64(i)
}

// params are a config's integer parameters: the mapping's value, else the
// default the config gives DefaultParam.
type params struct {
	t        *testing.T
	mapping  map[string]any
	defaults map[string]string
}

var defaultParamRE = regexp.MustCompile(`\{\{\s*\$\w+\s*:=\s*DefaultParam\s+\.(\w+)\s+(\S+?)\s*\}\}`)

func loadParams(t *testing.T, path string, mapping map[string]any) params {
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := params{t: t, mapping: mapping, defaults: map[string]string{}}
	for _, m := range defaultParamRE.FindAllStringSubmatch(string(text), -1) {
		p.defaults[m[1]] = m[2]
	}
	return p
}

func (p params) int(name string) int64 {
	p.t.Helper()
	if v, ok := p.mapping[name]; ok {
		if i, ok := v.(int); ok {
			return int64(i)
		}
		p.t.Fatalf("parameter %s = %v is not an integer", name, v)
	}
	d, ok := p.defaults[name]
	if !ok {
		p.t.Fatalf("parameter %s: neither set nor given a DefaultParam default in the config (known: %v)", name, slices.Sorted(maps.Keys(p.defaults)))
	}
	i, err := strconv.ParseInt(d, 10, 64)
	if err != nil {
		p.t.Fatalf("parameter %s: default %q is not an integer", name, d)
	}
	return i
}
