package measurements

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
)

// Measurement is one identifier's instance of a method. Stateful methods
// keep what `action: start` began until `action: gather` summarises it.
type Measurement interface {
	// Execute runs one call with the entry's params. It returns the
	// summaries the call produced (gather calls, mostly) and nil when every
	// threshold held, a *ViolationError naming each item over its threshold
	// (with the summaries), a *NotMeasuredError saying why it could not
	// measure, or any other error when the measurement itself failed.
	Execute(ctx context.Context, env *Env, params Params) ([]Summary, error)
}

// Factory makes a new instance of a method.
type Factory func(identifier string) Measurement

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

func lookup(method string) (Factory, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	f, ok := registry[method]
	if !ok {
		return nil, fmt.Errorf("unknown measurement method %q (known: %v)", method, KnownList())
	}
	return f, nil
}

// Manager keeps the measurements of one run, one instance per (method,
// identifier), and every summary they produced.
type Manager struct {
	env *Env

	mu        sync.Mutex
	instances map[[2]string]Measurement
	summaries []Summary
}

// NewManager returns a manager with no measurement started, whose
// measurements see env.
func NewManager(env *Env) *Manager {
	if env == nil {
		env = &Env{}
	}
	return &Manager{env: env, instances: map[[2]string]Measurement{}}
}

// Env is the environment the manager's measurements see.
func (m *Manager) Env() *Env { return m.env }

// Execute runs a call on the identifier's instance, making it on first use,
// and keeps the summaries it produced with their verdicts. The error is the
// measurement's own: a *ViolationError, a *NotMeasuredError or a failure.
func (m *Manager) Execute(ctx context.Context, method, identifier string, params map[string]any) error {
	factory, err := lookup(method)
	if err != nil {
		return err
	}
	key := [2]string{method, identifier}
	m.mu.Lock()
	inst, ok := m.instances[key]
	if !ok {
		inst = factory(identifier)
		m.instances[key] = inst
	}
	m.mu.Unlock()
	summaries, err := inst.Execute(ctx, m.env, Params(params))
	var nm *NotMeasuredError
	if action, _ := Params(params).String("action", ""); action == "start" && errors.As(err, &nm) {
		// The gather of the same identifier reports it; recording the
		// start too would list the measurement twice.
		return err
	}
	m.Record(judge(method, identifier, summaries, err)...)
	return err
}

// Record keeps summaries made outside Execute (an unsupported method's
// "not measured", say).
func (m *Manager) Record(s ...Summary) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.summaries = append(m.summaries, s...)
}

// Disposer is a measurement that holds watches or pollers until the end of
// the run, whether or not its config stopped it.
type Disposer interface{ Dispose() }

// Dispose ends every measurement of the run that still watches or polls.
func (m *Manager) Dispose() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, inst := range m.instances {
		if d, ok := inst.(Disposer); ok {
			d.Dispose()
		}
	}
}

// Summaries returns every summary recorded so far, in the order they came.
func (m *Manager) Summaries() []Summary {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Summary(nil), m.summaries...)
}
