package fidelity

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AuditPolicy makes the apiserver log every request of a node (group
// system:nodes) once, when it completes, with its metadata: the calls a
// comparison counts. Watches are logged when they end. A node's token
// requests are logged with their body, which names the pod the token is
// bound to. The scheduler's bindings are logged too: when a node first
// reads a pod, or asks for its token, after its binding tells how soon the
// node reacts and how soon its volume manager mounts.
const AuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Request
  userGroups: ["system:nodes"]
  resources: [{group: "", resources: ["serviceaccounts/token"]}]
- level: Metadata
  userGroups: ["system:nodes"]
- level: Metadata
  users: ["system:kube-scheduler"]
  resources: [{group: "", resources: ["pods/binding"]}]
- level: None
`

// call is one request of a node (or a binding), as the audit log tells it.
type call struct {
	at        time.Time // received
	done      time.Time // answered
	user      string
	namespace string
	name      string
	// key is the verb and resource ("patch pods/status", "create events").
	key  string
	code int
	// boundPod is the pod a token request binds its token to.
	boundPod string
}

// auditEvent is what a comparison reads of one audit event.
type auditEvent struct {
	User struct {
		Username string `json:"username"`
	} `json:"user"`
	Verb      string `json:"verb"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestObject *struct {
		Spec struct {
			BoundObjectRef *struct {
				Kind string `json:"kind"`
				Name string `json:"name"`
			} `json:"boundObjectRef"`
		} `json:"spec"`
	} `json:"requestObject"`
	RequestReceivedTimestamp metav1.MicroTime `json:"requestReceivedTimestamp"`
	StageTimestamp           metav1.MicroTime `json:"stageTimestamp"`
}

// readAudit reads the calls in an audit log written with AuditPolicy.
func readAudit(path string) ([]call, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	defer f.Close()
	var calls []call
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for line := 1; sc.Scan(); line++ {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		c := call{at: e.RequestReceivedTimestamp.Time, done: e.StageTimestamp.Time, user: e.User.Username, key: e.Verb}
		if r := e.ObjectRef; r != nil {
			c.namespace, c.name = r.Namespace, r.Name
			res := r.Resource
			if r.Subresource != "" {
				res += "/" + r.Subresource
			}
			c.key += " " + res
		}
		if e.ResponseStatus != nil {
			c.code = e.ResponseStatus.Code
		}
		if o := e.RequestObject; o != nil && o.Spec.BoundObjectRef != nil && o.Spec.BoundObjectRef.Kind == "Pod" {
			c.boundPod = o.Spec.BoundObjectRef.Name
		}
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return calls, nil
}

// callCounts counts the calls of a target's nodes in the namespaces and a time
// window, by key; refused counts those answered 403 Forbidden.
func callCounts(calls []call, t *Target, namespaces []string, from, to time.Time) (all, refused map[string]int) {
	all, refused = map[string]int{}, map[string]int{}
	for _, c := range calls {
		if !slices.Contains(namespaces, c.namespace) || c.at.Before(from) || c.at.After(to) || !t.owns(c.user) {
			continue
		}
		all[c.key]++
		if c.code == 403 {
			refused[c.key]++
		}
	}
	return all, refused
}

// fromBinding is, for each named pod, the milliseconds from the end of its
// binding (the scheduler's create pods/binding) to the start of the first
// call by one of the target's nodes that podOf says is about it.
func fromBinding(calls []call, t *Target, podNS map[string]string, names []string, podOf func(call) string) []float64 {
	bound, first := bindings(calls), map[string]time.Time{}
	for _, c := range calls {
		pod := podOf(c)
		if pod == "" || !t.owns(c.user) {
			continue
		}
		key := c.namespace + "/" + pod
		if at, ok := first[key]; !ok || c.at.Before(at) {
			first[key] = c.at
		}
	}
	var ms []float64
	for _, n := range names {
		key := podNS[n] + "/" + n
		b, okB := bound[key]
		f, okF := first[key]
		if okB && okF {
			ms = append(ms, float64(f.Sub(b).Microseconds())/1000)
		}
	}
	return ms
}

// readOf names the pod a call reads: from the binding to a node's first
// read of a pod is how soon it acts on a pod it is given. The Node
// authorizer lets a node read a pod only once it has learnt of the
// binding, so a node that reads sooner is refused more often.
func readOf(c call) string {
	if c.key == "get pods" {
		return c.name
	}
	return ""
}

// tokenOf names the pod a call requests a service-account token for: from
// the binding to the request is when the node's volume manager began
// mounting the pod's projected token volume, which the pod worker's volume
// polls then wait for.
func tokenOf(c call) string {
	if c.key == "create serviceaccounts/token" {
		return c.boundPod
	}
	return ""
}

// schedulerUser is the scheduler's identity in the audit log.
const schedulerUser = "system:kube-scheduler"
