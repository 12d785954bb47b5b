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
// comparison counts. Watches are logged when they end. The scheduler's
// bindings are logged too: when a node first reads a pod after its binding
// tells how soon the node reacts.
const AuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
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

// firstReads is, for each named pod, the milliseconds from the end of its
// binding (the scheduler's create pods/binding) to the start of the first
// read of it (get pods) by one of the target's nodes: how soon the node
// acts on a pod it is given. The Node authorizer lets a node read a pod
// only once it has learnt of the binding, so a node that reads sooner is
// refused more often.
func firstReads(calls []call, t *Target, podNS map[string]string, names []string) []float64 {
	bound, read := bindings(calls), map[string]time.Time{}
	for _, c := range calls {
		key := c.namespace + "/" + c.name
		if c.key == "get pods" && t.owns(c.user) {
			if first, ok := read[key]; !ok || c.at.Before(first) {
				read[key] = c.at
			}
		}
	}
	var ms []float64
	for _, n := range names {
		key := podNS[n] + "/" + n
		b, okB := bound[key]
		r, okR := read[key]
		if okB && okR {
			ms = append(ms, float64(r.Sub(b).Microseconds())/1000)
		}
	}
	return ms
}

// schedulerUser is the scheduler's identity in the audit log.
const schedulerUser = "system:kube-scheduler"
