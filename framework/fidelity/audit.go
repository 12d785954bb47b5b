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
// comparison counts. Watches are logged when they end.
const AuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  userGroups: ["system:nodes"]
- level: None
`

// call is one request of a node, as the audit log tells it.
type call struct {
	at        time.Time
	user      string
	namespace string
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
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp metav1.MicroTime `json:"requestReceivedTimestamp"`
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
		c := call{at: e.RequestReceivedTimestamp.Time, user: e.User.Username, key: e.Verb}
		if r := e.ObjectRef; r != nil {
			c.namespace = r.Namespace
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
