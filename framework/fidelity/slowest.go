package fidelity

import (
	"cmp"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
)

// SlowPod is one of a workload's slowest pods on a target: how long it
// took from the end of its binding to the first Running status a watch
// delivered, when its node asked for its token, and what its node was
// refused in its namespace meanwhile. A pod whose token was asked for late
// had its volumes mounted after the pod worker's first volume poll, and
// waited for the next; a refusal is the Node authorizer's race to the
// binding, when that is what held it.
type SlowPod struct {
	Pod  string  `json:"pod"`
	Node string  `json:"node"`
	Ms   float64 `json:"ms"`
	// TokenMs is when, from the end of the binding, the node first asked
	// for the pod's service-account token; 0 if it never did.
	TokenMs float64 `json:"tokenMs,omitempty"`
	// Refused are the node's calls in the pod's namespace answered 403
	// Forbidden between the binding and the Running status, in order
	// ("get pods", "watch configmaps").
	Refused []string `json:"refused,omitempty"`
}

// slowestCount is how many slowest pods of a workload an Observation keeps.
const slowestCount = 3

// slowestPods are the n pods of names slowest from the end of their
// binding to their first Running status in records, slowest first; pods
// never bound or never seen Running are left out.
func slowestPods(calls []call, records map[string]*podRecord, podNS map[string]string, names []string, n int) []SlowPod {
	bound := bindings(calls)
	var slow []SlowPod
	ran := map[string]time.Time{}
	for _, name := range names {
		rec := records[name]
		b, ok := bound[podNS[name]+"/"+name]
		if rec == nil || !ok {
			continue
		}
		for _, s := range rec.statuses {
			if s.status.Phase == v1.PodRunning {
				ran[name] = s.at
				slow = append(slow, SlowPod{Pod: name, Node: rec.node, Ms: float64(s.at.Sub(b).Microseconds()) / 1000})
				break
			}
		}
	}
	slices.SortStableFunc(slow, func(a, b SlowPod) int { return cmp.Compare(b.Ms, a.Ms) })
	slow = slow[:min(n, len(slow))]
	for i := range slow {
		p := &slow[i]
		ns, from, to := podNS[p.Pod], bound[podNS[p.Pod]+"/"+p.Pod], ran[p.Pod]
		for _, c := range calls {
			if c.user != "system:node:"+p.Node || c.namespace != ns {
				continue
			}
			if c.code == 403 && !c.at.Before(from) && !c.at.After(to) {
				p.Refused = append(p.Refused, c.key)
			}
			if tokenOf(c) == p.Pod && p.TokenMs == 0 {
				p.TokenMs = float64(c.at.Sub(from).Microseconds()) / 1000
			}
		}
	}
	return slow
}

// bindings are the ends of the scheduler's bindings by namespace/name.
func bindings(calls []call) map[string]time.Time {
	bound := map[string]time.Time{}
	for _, c := range calls {
		if c.key == "create pods/binding" && c.user == schedulerUser {
			bound[c.namespace+"/"+c.name] = c.done
		}
	}
	return bound
}
