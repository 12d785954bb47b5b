package measurements

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"k8s.io/klog/v2"
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

// Kind says what a method's summaries are to a run's verdict.
type Kind int

const (
	// Informational methods wait, time or report numbers without judging
	// them: they never say violated, and one left unmeasured leaves no SLO
	// unjudged.
	Informational Kind = iota
	// SLO methods judge what they measured against a threshold (their
	// own default or the entry's) and can say violated. One that could
	// not measure leaves its SLO unjudged, which makes the run
	// inconclusive rather than passed (see Summary.SLO). A method is SLO
	// by what it can judge, whether or not an entry gives it a threshold:
	// a config that names it expects its verdict.
	SLO
)

// registration is a registered method.
type registration struct {
	kind    Kind
	factory Factory
}

var (
	registryMu sync.RWMutex
	registry   = map[string]registration{}
)

// Register makes a method known under its clusterloader2 name, with what
// its summaries are to the run's verdict. Methods register themselves from
// init functions of their files.
func Register(method string, kind Kind, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[method]; dup {
		panic("measurements: method registered twice: " + method)
	}
	registry[method] = registration{kind: kind, factory: f}
}

// IsSLO reports whether method is registered as an SLO method.
func IsSLO(method string) bool {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return registry[method].kind == SLO
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

func lookup(method string) (registration, error) {
	registryMu.RLock()
	r, ok := registry[method]
	registryMu.RUnlock()
	if !ok {
		return registration{}, fmt.Errorf("unknown measurement method %q (known: %v)", method, KnownList())
	}
	return r, nil
}

// Manager keeps the measurements of one run, one instance per (method,
// identifier), and every summary they produced.
type Manager struct {
	env *Env

	mu        sync.Mutex
	instances map[[2]string]Measurement
	summaries []Summary
	// started is when each identifier's last start began: the start of
	// the window its summaries are about.
	started map[[2]string]time.Time
	// optional holds the identifiers whose entry set failIfNotMeasured:
	// false (see notePolicy).
	optional map[[2]string]bool
	// skipped are the identifiers of unsupported methods already recorded.
	skipped map[[2]string]bool
}

// NewManager returns a manager with no measurement started, whose
// measurements see env.
func NewManager(env *Env) *Manager {
	if env == nil {
		env = &Env{}
	}
	return &Manager{env: env, instances: map[[2]string]Measurement{},
		started: map[[2]string]time.Time{}, optional: map[[2]string]bool{}, skipped: map[[2]string]bool{}}
}

// Env is the environment the manager's measurements see.
func (m *Manager) Env() *Env { return m.env }

// Execute runs a call on the identifier's instance, making it on first use,
// and keeps the summaries it produced with their verdicts, marked SLO when
// the method is one, and with the window from the identifier's start to
// this call when the measurement gave none. The error is the measurement's
// own: a *ViolationError, a *NotMeasuredError or a failure; or a bad
// failIfNotMeasured param.
func (m *Manager) Execute(ctx context.Context, method, identifier string, params map[string]any) error {
	reg, err := lookup(method)
	if err != nil {
		return err
	}
	key := [2]string{method, identifier}
	if err := m.notePolicy(key, params); err != nil {
		return err
	}
	m.mu.Lock()
	inst, ok := m.instances[key]
	if !ok {
		inst = reg.factory(identifier)
		m.instances[key] = inst
	}
	m.mu.Unlock()
	action, _ := Params(params).String("action", "")
	began := m.env.now()
	summaries, err := inst.Execute(ctx, m.env, Params(params))
	var nm *NotMeasuredError
	if action == "start" {
		if err == nil {
			m.mu.Lock()
			m.started[key] = began
			m.mu.Unlock()
		}
		if errors.As(err, &nm) {
			// The gather of the same identifier reports it; recording the
			// start too would list the measurement twice.
			return err
		}
	}
	summaries = judge(method, identifier, summaries, err)
	m.mu.Lock()
	start, hasStart := m.started[key]
	m.mu.Unlock()
	end := m.env.now()
	for i := range summaries {
		s := &summaries[i]
		// A bundle marks its parts itself; only ever adding the mark
		// keeps theirs.
		s.SLO = (s.SLO || reg.kind == SLO) && !s.Empty
		if s.Window == nil && hasStart {
			s.Window = &TimeRange{Start: start, End: end}
		}
	}
	m.Record(summaries...)
	return err
}

// Record keeps summaries made outside Execute.
func (m *Manager) Record(s ...Summary) {
	for i := range s {
		if dropped := dropNonFinite(&s[i]); len(dropped) > 0 {
			klog.InfoS("Left out values that are not numbers", "summary", s[i].FileName(), "values", dropped)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.summaries = append(m.summaries, s...)
}

// dropNonFinite removes the NaN and infinite numbers of a summary's data,
// which no report format can hold (JSON has no NaN), and names them.
func dropNonFinite(s *Summary) []string {
	var dropped []string
	drop := func(where string, m map[string]float64) {
		for k, v := range m {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				delete(m, k)
				dropped = append(dropped, where+k)
			}
		}
	}
	drop("headline ", s.Headline)
	drop("threshold ", s.Thresholds)
	if s.PerfData != nil {
		for i := range s.PerfData.DataItems {
			drop(fmt.Sprintf("item %v ", s.PerfData.DataItems[i].Labels), s.PerfData.DataItems[i].Data)
		}
	}
	sort.Strings(dropped)
	return dropped
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

// Summaries returns every summary recorded so far, in the order they
// came, each Optional when its entry's calls set failIfNotMeasured: false.
func (m *Manager) Summaries() []Summary {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := append([]Summary(nil), m.summaries...)
	for i := range out {
		out[i].Optional = m.optional[[2]string{out[i].Method, out[i].Identifier}]
	}
	return out
}
