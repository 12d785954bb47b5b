package executor

import (
	"fmt"
	"sync"
)

// objectStream identifies the objects one bundle entry manages in one
// namespace: <Basename>-0, <Basename>-1, ... of one kind. Phases are
// declarative per stream: a later phase naming the same stream changes the
// count an earlier one left.
type objectStream struct {
	Namespace string
	Basename  string
	Group     string
	Kind      string
}

func (s objectStream) String() string {
	gk := s.Kind
	if s.Group != "" {
		gk += "." + s.Group
	}
	if s.Namespace == "" {
		return fmt.Sprintf("%s %s-*", gk, s.Basename)
	}
	return fmt.Sprintf("%s %s/%s-*", gk, s.Namespace, s.Basename)
}

// replicaState remembers how many replicas of each stream exist, as far as
// this run made them.
type replicaState struct {
	mu     sync.Mutex
	counts map[objectStream]int
}

func newReplicaState() *replicaState { return &replicaState{counts: map[objectStream]int{}} }

func (r *replicaState) get(s objectStream) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[s]
}

func (r *replicaState) set(s objectStream, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n == 0 {
		delete(r.counts, s)
		return
	}
	r.counts[s] = n
}

// streams returns the streams with objects, in no particular order.
func (r *replicaState) streams() []objectStream {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]objectStream, 0, len(r.counts))
	for s := range r.counts {
		out = append(out, s)
	}
	return out
}

// verb is what an action does to each object of a bundle.
type verb int

const (
	create verb = iota
	remove      // delete; the bundle's objects in reverse order
	patch
)

func (v verb) String() string { return [...]string{"create", "delete", "patch"}[v] }

// planIndices returns the verb and the indices a phase acts on to take a
// bundle from current to desired replicas: the missing indices are created,
// the surplus deleted, and with nothing to add or remove every object is
// patched with its freshly rendered template.
func planIndices(current, desired int) (verb, []int) {
	switch {
	case desired > current:
		return create, indexRange(current, desired)
	case desired < current:
		return remove, indexRange(desired, current)
	default:
		return patch, indexRange(0, desired)
	}
}

func indexRange(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// bundleCurrent returns the one replica count every stream of a bundle has;
// streams that disagree mean the bundle was changed between phases, which
// the format does not allow.
func bundleCurrent(state *replicaState, streams []objectStream) (int, error) {
	if len(streams) == 0 {
		return 0, nil
	}
	n := state.get(streams[0])
	for _, s := range streams[1:] {
		if m := state.get(s); m != n {
			return 0, fmt.Errorf("objects of one bundle have different replica counts: %s has %d, %s has %d", streams[0], n, s, m)
		}
	}
	return n, nil
}
