package measurements

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// Measurement is one identifier's instance of a method.
type Measurement interface {
	// Execute runs one call of the measurement with the entry's params
	// (action: start | gather | stop for stateful methods).
	Execute(ctx context.Context, params Params) error
}

// Factory makes a new instance of a method.
type Factory func() Measurement

var (
	registryMu sync.RWMutex
	registry   = map[string]Factory{}
)

// Register makes a method known under its clusterloader2 name. Methods
// register themselves from init functions of their files.
func Register(method string, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[method]; dup {
		panic("measurements: method registered twice: " + method)
	}
	registry[method] = f
}

// Known returns the names of the registered methods, for validating configs
// before a run.
func Known() map[string]bool {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make(map[string]bool, len(registry))
	for name := range registry {
		out[name] = true
	}
	return out
}

// KnownList returns the registered method names, sorted.
func KnownList() []string {
	var out []string
	for name := range Known() {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Manager keeps the measurements of one run, one per (method, identifier).
type Manager struct {
	mu        sync.Mutex
	instances map[[2]string]Measurement
}

// NewManager returns a manager with no measurement started.
func NewManager() *Manager { return &Manager{instances: map[[2]string]Measurement{}} }

// Execute runs a call on the identifier's instance, making it on first use.
func (m *Manager) Execute(ctx context.Context, method, identifier string, params map[string]any) error {
	registryMu.RLock()
	factory, ok := registry[method]
	registryMu.RUnlock()
	if !ok {
		return fmt.Errorf("unknown measurement method %q (known: %v)", method, KnownList())
	}
	key := [2]string{method, identifier}
	m.mu.Lock()
	inst, ok := m.instances[key]
	if !ok {
		inst = factory()
		m.instances[key] = inst
	}
	m.mu.Unlock()
	return inst.Execute(ctx, Params(params))
}
